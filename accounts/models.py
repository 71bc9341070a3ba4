"""A person's preferences: the time zone every page shows times in, and the language pages and
notifications speak (accounts/preferences.py applies both)."""

import zoneinfo
from functools import lru_cache

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import gettext_lazy as _


@lru_cache(maxsize=1)
def time_zone_names() -> tuple[str, ...]:
    """IANA names, sorted (the tz database the system or the tzdata package provides)."""
    return tuple(sorted(zoneinfo.available_timezones() - {"localtime", "Factory"}))


def validate_time_zone(name: str) -> None:
    if name and name not in time_zone_names():
        raise ValidationError(_("Unknown time zone: %(name)s."), params={"name": name})


class Profile(models.Model):
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True, related_name="profile"
    )
    time_zone = models.CharField(
        _("time zone"),
        max_length=64,
        blank=True,
        default="",
        validators=[validate_time_zone],
        help_text=_("Empty: the browser's on the next visit, else the server's TIME_ZONE."),
    )
    language = models.CharField(
        _("language"),
        max_length=16,
        blank=True,
        default="",
        choices=settings.LANGUAGES,
        help_text=_("Empty: the language the browser asks for."),
    )
    browser_language = models.CharField(
        _("browser language"),
        max_length=16,
        blank=True,
        default="",
        editable=False,
        help_text=_("What the browser last asked for; notifications use it while none is chosen."),
    )

    class Meta:
        db_table = "oa_user_profile"
        verbose_name = _("profile")
        verbose_name_plural = _("profiles")

    def __str__(self) -> str:
        return _("profile of %(user)s") % {"user": self.user_id}
