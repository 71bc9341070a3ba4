"""The login page: Django's, plus the browser's time zone, sent by the page's own script
(static/js/login.js) in a hidden field, so the first page after login already shows times
in it. Kept only while the person has chosen no zone (their profile's choice wins)."""

from django.contrib.auth.views import LoginView
from django.core.exceptions import ValidationError

from .preferences import set_time_zone


class ZoneLoginView(LoginView):
    def form_valid(self, form):
        response = super().form_valid(form)
        zone = self.request.POST.get("time_zone", "")
        if zone:
            try:
                set_time_zone(form.get_user(), zone, request=self.request, only_if_unset=True)
            except ValidationError:
                pass  # an unknown name from a browser: the console asks again (timezone.js)
        return response
