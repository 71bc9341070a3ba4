"""Small template filters of the console."""

import html
from datetime import timedelta
from urllib.parse import urlencode

from django import template
from django.urls import reverse
from django.utils.safestring import SafeData, mark_safe

from console import files
from console.durations import human_duration
from live import events as live_events

register = template.Library()


@register.filter
def duration_short(value: timedelta | None) -> str:
    """'42 s', '7 min', '2 h 5 min', '3 d 4 h': how long something has waited."""
    return human_duration(value)


@register.filter
def duration(value: float | timedelta | None) -> str:
    """Seconds (or a timedelta) for people: '45 min', '2 h 10 min' (console/durations.py)."""
    if value is None or value == "":
        return ""
    return human_duration(value)


@register.filter
def duration_minutes(value: float | None) -> str:
    """Minutes for people, the same words as `duration`."""
    if value is None or value == "":
        return ""
    return human_duration(float(value) * 60)


@register.filter(is_safe=True)
def as_text(value) -> SafeData:
    """A value placed as text between tags, escaped as text needs: &, < and >. Django's
    autoescape also turns quotes into &#x27; and &quot; since it cannot tell text from an
    attribute value, so "We're on it" reached the page's source as "We&#x27;re on it".
    Never for an attribute value, where quotes must stay escaped."""
    if isinstance(value, SafeData):  # markup already
        return value
    return mark_safe(html.escape(str(value), quote=False))


@register.simple_tag
def list_events_url(page: str) -> str:
    """A live list's stream, resuming from the newest event at render time: what changes
    between this render and the browser's connection is replayed, not missed."""
    query = urlencode({"page": page, "since": live_events.latest_id() or ""})
    return f"{reverse('live-events')}?{query}"


@register.simple_tag
def upload_limits() -> dict:
    """The size limit and its words for a form that takes files (attachments.js)."""
    return files.limits()
