"""Small template filters of the console."""

import html
from datetime import timedelta

from django import template
from django.utils.safestring import SafeData, mark_safe
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


@register.filter(is_safe=True)
def as_text(value) -> SafeData:
    """A value placed as text between tags, escaped as text needs: &, < and >. Django's
    autoescape also turns quotes into &#x27; and &quot; since it cannot tell text from an
    attribute value, so "We're on it" reached the page's source as "We&#x27;re on it".
    Never for an attribute value, where quotes must stay escaped."""
    if isinstance(value, SafeData):  # markup already
        return value
    return mark_safe(html.escape(str(value), quote=False))
