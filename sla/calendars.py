"""Turn a Calendar row into the pure clock's BusinessCalendar (cached per calendar version)."""

from datetime import time

from . import clock
from .models import Calendar

_cache: dict[tuple[int, float], clock.BusinessCalendar] = {}


def business_calendar(calendar: Calendar | None) -> clock.BusinessCalendar:
    if calendar is None:
        return clock.BusinessCalendar.always()
    key = (calendar.pk, calendar.updated.timestamp() if calendar.updated else 0.0)
    cached = _cache.get(key)
    if cached is not None:
        return cached
    windows = tuple(
        clock.WorkWindow(weekday=w.weekday, start=w.start, end=w.end)
        for w in calendar.windows.all()
        if w.end == time(0, 0) or w.end > w.start
    )
    holidays = frozenset(calendar.holidays.values_list("date", flat=True))
    built = clock.BusinessCalendar(tz=calendar.timezone, windows=windows, holidays=holidays)
    if len(_cache) > 256:
        _cache.clear()
    _cache[key] = built
    return built


def touch(calendar: Calendar) -> None:
    """Mark the calendar changed (its windows or holidays were edited), so caches rebuild."""
    calendar.save(update_fields=["updated"])
