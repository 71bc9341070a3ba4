"""Each person's time zone on every page: the middleware activates it for the request, so
templates and forms show times in it (the API keeps ISO-8601 with offsets, whatever the zone).

The zone comes from the person's profile, read once per request. Empty means "not chosen yet":
the console then asks the browser for its zone once (static/js/timezone.js), else the
server's TIME_ZONE applies."""

import zoneinfo

from django.utils import timezone

from .models import Profile, validate_time_zone


def chosen_time_zone(request) -> str | None:
    """The signed-in person's zone name, "" when not chosen yet, None when anonymous. Read
    once per request (one primary-key query), so a change applies to the next page."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return None
    cached = getattr(request, "_time_zone", None)
    if cached is None:
        cached = (
            Profile.objects.filter(user_id=user.pk).values_list("time_zone", flat=True).first()
            or ""
        )
        request._time_zone = cached
    return cached


def set_time_zone(user, name: str, *, request=None, only_if_unset: bool = False) -> bool:
    """Store the person's zone (validated); returns whether it changed."""
    validate_time_zone(name)
    profile, _created = Profile.objects.get_or_create(user=user)
    if only_if_unset and profile.time_zone:
        return False
    changed = profile.time_zone != name
    if changed:
        profile.time_zone = name
        profile.save(update_fields=["time_zone"])
    if request is not None:
        request._time_zone = profile.time_zone
    return changed


class TimeZoneMiddleware:
    """After authentication: the person's zone is the current one for this request."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        name = chosen_time_zone(request)
        if name:
            timezone.activate(zoneinfo.ZoneInfo(name))
        try:
            return self.get_response(request)
        finally:
            timezone.deactivate()
