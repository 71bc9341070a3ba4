"""Small template filters of the console."""

from datetime import timedelta

from django import template
from django.utils.translation import gettext as _

register = template.Library()


@register.filter
def duration_short(value: timedelta | None) -> str:
    """'42 s', '7 min', '2 h 05 min', '3 d 4 h': how long something has waited."""
    if value is None:
        return ""
    seconds = max(int(value.total_seconds()), 0)
    if seconds < 60:
        return _("%(s)d s") % {"s": seconds}
    minutes = seconds // 60
    if minutes < 60:
        return _("%(m)d min") % {"m": minutes}
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return _("%(h)d h %(m)02d min") % {"h": hours, "m": minutes}
    days, hours = divmod(hours, 24)
    return _("%(d)d d %(h)d h") % {"d": days, "h": hours}
