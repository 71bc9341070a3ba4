"""The person's own settings: time zone (every page shows times in it) and language."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST
from django.views.i18n import set_language as set_language_cookie

from accounts.models import Profile
from accounts.preferences import SUPPORTED, set_language, set_time_zone
from console.forms import ProfileForm
from console.pages import render_console


@login_required
@require_http_methods(["GET", "POST"])
def profile(request: HttpRequest) -> HttpResponse:
    # login_required: request.user is a User, not the AnonymousUser its type allows.
    current = Profile.objects.filter(user=request.user).first()  # type: ignore[misc]
    initial = {
        "time_zone": (current.time_zone if current else "") or timezone.get_current_timezone_name(),
        "language": current.language if current else "",
    }
    form = ProfileForm(request.POST or None, initial=initial)
    if request.method == "POST":
        if form.is_valid():
            set_time_zone(request.user, form.cleaned_data["time_zone"], request=request)
            set_language(request.user, form.cleaned_data["language"], request=request)
            messages.success(
                request,
                _("Saved. Times are shown in %(zone)s.") % {"zone": form.cleaned_data["time_zone"]},
            )
            return redirect("console:profile")
        return render_console(request, "console/profile.html", {"form": form}, status=400)
    return render_console(request, "console/profile.html", {"form": form})


@login_required
@require_POST
def detected_time_zone(request: HttpRequest) -> HttpResponse:
    """The browser's zone, sent once by static/js/timezone.js while none is chosen: kept only
    if the person has not chosen one meanwhile."""
    name = request.POST.get("time_zone", "")
    try:
        set_time_zone(request.user, name, request=request, only_if_unset=True)
    except ValidationError:
        return JsonResponse(
            {"code": "invalid_argument", "errors": {"time_zone": [_("Unknown time zone.")]}},
            status=400,
        )
    return HttpResponse(status=204)


@require_POST
def switch_language(request: HttpRequest) -> HttpResponse:
    """The header's language switch: the language cookie for everyone (the login page too)
    and, for a signed-in person, their profile's choice, so notifications follow it. Back to
    the page it was used on (`next`, checked by Django's set_language)."""
    code = request.POST.get("language", "")
    if code not in SUPPORTED:
        return JsonResponse(
            {"code": "invalid_argument", "errors": {"language": [_("Unknown language.")]}},
            status=400,
        )
    response = set_language_cookie(request)
    if request.user.is_authenticated:
        set_language(request.user, code, request=request)
    return response
