"""The SLA badge as pages show it: text, colour and tooltip from `sla.selectors.sla_badge`."""

from datetime import datetime

from django.utils import timezone

from sla.selectors import sla_badge
from ticketing.models import Ticket


def duration_text(seconds: int) -> str:
    """A compact duration: "<1m", "45m", "2h 05m", "3d 4h"."""
    seconds = abs(int(seconds))
    minutes = seconds // 60
    if minutes < 1:
        return "<1m"
    if minutes < 60:
        return f"{minutes}m"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours}h {minutes:02d}m"
    days, hours = divmod(hours, 24)
    return f"{days}d {hours}h"


def badge_display(badge: dict) -> dict:
    """`sla.selectors.sla_badge` plus what the page shows: text, CSS class, tooltip."""
    state, left, clock = badge["state"], badge["seconds_left"], badge["clock"]
    if state == "none":
        text = "no SLA"
    elif state == "paused":
        text = "paused"
    elif state == "breached":
        text = f"overdue {duration_text(left)}" if left is not None and left < 0 else "breached"
    elif left is not None:
        text = f"{duration_text(left)} left"
    else:
        text = state
    if state == "paused":
        title = "Waiting on the applicant: the resolve clock is stopped."
    elif badge["deadline"] is not None:
        deadline = timezone.localtime(badge["deadline"])
        title = f"{clock} deadline {deadline:%Y-%m-%d %H:%M %Z}"
    else:
        title = "No SLA clock is running for this ticket."
    return {**badge, "text": text, "css": f"sla-{state}", "title": title}


def with_badges(tickets, now: datetime) -> list[Ticket]:
    rows = list(tickets)
    for ticket in rows:
        ticket.sla = badge_display(sla_badge(ticket, now))
    return rows
