"""Deadlines from the clock-segment log: pure maths over the business-time clock."""

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from decimal import Decimal

from .clock import BusinessCalendar, add_business_time, business_time_between


def hours_to_timedelta(hours: Decimal | float | None) -> timedelta | None:
    """An SLA duration from the rule; empty or 0 means the rule has no such clock."""
    if hours is None or hours <= 0:
        return None
    return timedelta(seconds=round(float(hours) * 3600))


def pauses_from_events(
    events: Iterable[tuple[str, datetime]],
) -> list[tuple[datetime, datetime | None]]:
    """(pause, resume) intervals from ordered (kind, at) events; a trailing pause has no end."""
    intervals: list[tuple[datetime, datetime | None]] = []
    paused_at: datetime | None = None
    for kind, at in events:
        if kind == "pause" and paused_at is None:
            paused_at = at
        elif kind in ("resume", "stop") and paused_at is not None:
            intervals.append((paused_at, at))
            paused_at = None
    if paused_at is not None:
        intervals.append((paused_at, None))
    return intervals


def deadline_with_pauses(
    *,
    start: datetime,
    budget: timedelta,
    pauses: Sequence[tuple[datetime, datetime | None]],
    calendar: BusinessCalendar,
) -> datetime | None:
    """The instant at which `budget` of business time has run on a clock started at `start`
    and stopped during each pause. None while paused with budget left (no deadline runs)."""
    remaining = budget
    cursor = start
    for paused, resumed in pauses:
        if paused < cursor:
            paused = cursor
        ran = business_time_between(cursor, paused, calendar)
        if ran >= remaining:
            return add_business_time(cursor, remaining, calendar)
        remaining -= ran
        if resumed is None:
            return None
        cursor = max(cursor, resumed)
    return add_business_time(cursor, remaining, calendar)


def running_time(
    *,
    start: datetime,
    end: datetime,
    pauses: Sequence[tuple[datetime, datetime | None]],
    calendar: BusinessCalendar,
) -> timedelta:
    """Business time the clock ran between start and end, pauses excluded."""
    total = business_time_between(start, end, calendar)
    for paused, resumed in pauses:
        lo, hi = max(paused, start), min(resumed or end, end)
        if hi > lo:
            total -= business_time_between(lo, hi, calendar)
    return total
