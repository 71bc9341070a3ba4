"""The SLA badge as pages show it: text, colour and tooltip from `sla.selectors.sla_badge`."""

from datetime import datetime

from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import pgettext

from sla.selectors import sla_badge
from ticketing.models import Ticket


def duration_text(seconds: int) -> str:
    """A compact duration: "<1m", "45m", "2h 05m", "3d 4h"."""
    seconds = abs(int(seconds))
    minutes = seconds // 60
    if minutes < 1:
        return _("<1m")
    if minutes < 60:
        return _("%(m)dm") % {"m": minutes}
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return _("%(h)dh %(m)02dm") % {"h": hours, "m": minutes}
    days, hours = divmod(hours, 24)
    return _("%(d)dd %(h)dh") % {"d": days, "h": hours}


def clock_label(clock: str | None) -> str:
    """The clock's name as a page shows it ("response", "resolve")."""
    labels = {
        "response": pgettext("SLA clock", "response"),
        "resolve": pgettext("SLA clock", "resolve"),
    }
    return labels.get(clock or "", clock or "")


def badge_display(badge: dict) -> dict:
    """`sla.selectors.sla_badge` plus what the page shows: text, CSS class, tooltip."""
    state, left, clock = badge["state"], badge["seconds_left"], badge["clock"]
    if state == "none":
        text = _("no SLA")
    elif state == "paused":
        text = pgettext("SLA badge", "paused")
    elif state == "breached":
        if left is not None and left < 0:
            text = _("overdue %(time)s") % {"time": duration_text(left)}
        else:
            text = pgettext("SLA badge", "breached")
    elif left is not None:
        text = _("%(time)s left") % {"time": duration_text(left)}
    else:
        text = state
    if state == "paused":
        title = _("Waiting on the applicant: the resolve clock is stopped.")
    elif badge["deadline"] is not None:
        deadline = timezone.localtime(badge["deadline"])
        title = _("%(clock)s deadline %(when)s") % {
            "clock": clock_label(clock),
            "when": f"{deadline:%Y-%m-%d %H:%M %Z}",
        }
    else:
        title = _("No SLA clock is running for this ticket.")
    return {
        **badge,
        "text": text,
        "clock_label": clock_label(clock),
        "css": f"sla-{state}",
        "title": title,
    }


def with_badges(tickets, now: datetime) -> list[Ticket]:
    rows = list(tickets)
    for ticket in rows:
        ticket.sla = badge_display(sla_badge(ticket, now))
    return rows
