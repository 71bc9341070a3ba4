"""Durations for people: "42 s", "45 min", "2 h 10 min", "3 d 4 h" instead of "2744.6 s".
The one function every page uses (through the `duration` and `duration_short` filters of
console_extras); pure apart from gettext, so each unit reads right in every language."""

from __future__ import annotations

from datetime import timedelta

from django.utils.translation import gettext as _


def split_duration(seconds: float) -> tuple[str, tuple[int, ...]]:
    """The unit pattern and its numbers, rounded to the nearest whole of the smallest unit
    shown: ("s", (42,)), ("min", (45,)), ("h min", (2, 10)), ("h", (2,)), ("d h", (3, 4)),
    ("d", (3,)); under ten minutes the seconds count too: ("min s", (1, 35)). Negative
    durations count as none."""
    whole = max(round(seconds), 0)
    if whole < 60:
        return "s", (whole,)
    if whole < 600:
        minutes, rest = divmod(whole, 60)
        return ("min s", (minutes, rest)) if rest else ("min", (minutes,))
    minutes = round(whole / 60)
    if minutes < 60:
        return "min", (minutes,)
    if minutes < 24 * 60:
        hours, rest = divmod(minutes, 60)
        return ("h min", (hours, rest)) if rest else ("h", (hours,))
    hours = round(minutes / 60)
    days, rest = divmod(hours, 24)
    return ("d h", (days, rest)) if rest else ("d", (days,))


def human_duration(value: float | timedelta | None) -> str:
    """`value` in seconds (or a timedelta) in words, translated; "" for None."""
    if value is None:
        return ""
    seconds = value.total_seconds() if isinstance(value, timedelta) else float(value)
    unit, n = split_duration(seconds)
    if unit == "s":
        return _("%(s)d s") % {"s": n[0]}
    if unit == "min s":
        return _("%(m)d min %(s)d s") % {"m": n[0], "s": n[1]}
    if unit == "min":
        return _("%(m)d min") % {"m": n[0]}
    if unit == "h min":
        return _("%(h)d h %(m)d min") % {"h": n[0], "m": n[1]}
    if unit == "h":
        return _("%(h)d h") % {"h": n[0]}
    if unit == "d h":
        return _("%(d)d d %(h)d h") % {"d": n[0], "h": n[1]}
    return _("%(d)d d") % {"d": n[0]}
