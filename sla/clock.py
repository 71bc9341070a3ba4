"""Business-time arithmetic for SLA clocks: pure maths, no Django or Redis.

A `BusinessCalendar` holds weekly working windows in the local wall-clock time of an IANA zone,
plus holiday dates. The working time of one local date becomes a few half-open UTC intervals
`[start, end)`; adding, measuring and testing business time all walk those same intervals, so
`business_time_between(s, add_business_time(s, d, cal), cal) == d` exactly, to the microsecond.

Local-time rules:

- `WorkWindow.end == time(0, 0)` means 24:00, the end of that day. Windows never cross midnight;
  a night shift is two windows (22:00–24:00 and 00:00–06:00 the next weekday).
- A window lasts what the wall clock gives on that date: 09:00–17:00 is 8 real hours, and a
  00:00–24:00 window is 23 hours on the spring-forward date and 25 hours on the fall-back date.
- Ambiguous wall times (the repeated hour when clocks go back) resolve with `fold=0`, the first
  occurrence: a window ending at 02:30 on the Europe/Berlin fall-back night ends at 02:30 CEST.
- Nonexistent wall times (the spring-forward gap) resolve to the instant the clocks jump, the
  first existing time after the gap: on 2024-03-31 in Europe/Berlin, 02:30 means 03:00 CEST, so a
  02:30–04:00 window lasts one hour that day. (Plain `fold=0` would give 03:30 CEST, later than a
  03:00 edge; resolving to the jump keeps the wall-clock → UTC mapping monotonic, so windows never
  invert or overlap once converted.)
- A deadline that lands exactly at a window's end stays there. Starting outside working time,
  the clock starts at the next window start. All results are in UTC.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from functools import cache, lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

__all__ = [
    "NO_WORKING_TIME_HORIZON_DAYS",
    "BusinessCalendar",
    "WorkWindow",
    "add_business_time",
    "business_time_between",
    "is_business_time",
]

# add_business_time gives up (ValueError) after this many consecutive local dates without any
# working time, e.g. a calendar whose holidays cover everything: roughly three years.
NO_WORKING_TIME_HORIZON_DAYS = 3 * 366

_ZERO = timedelta(0)
_DAY = timedelta(days=1)
_WEEK = timedelta(days=7)
_MIDNIGHT = time(0, 0)
_MICROSECOND = timedelta(microseconds=1)

_Interval = tuple[datetime, datetime]

# Only dates this far from the local date of an instant are safely entirely before or after it
# (an instant in a repeated hour can sit later than its fold=0 wall time).
_SAFE_MARGIN = timedelta(days=2)


@dataclass(frozen=True)
class WorkWindow:
    """One working window on a weekday (0 = Monday … 6 = Sunday), in local wall-clock time.

    `end` must be after `start`; `end == time(0, 0)` means 24:00 (the end of the day)."""

    weekday: int
    start: time
    end: time

    def __post_init__(self) -> None:
        if not isinstance(self.weekday, int) or not 0 <= self.weekday <= 6:
            raise ValueError(f"weekday must be 0 (Monday) … 6 (Sunday), not {self.weekday!r}")
        if self.start.tzinfo is not None or self.end.tzinfo is not None:
            raise ValueError("window times are local wall-clock times and must be naive")
        if self.end_offset <= self.start_offset:
            raise ValueError(f"window end {self.end} is not after its start {self.start}")

    @property
    def start_offset(self) -> timedelta:
        """Wall-clock time since local midnight at which the window opens."""
        return _since_midnight(self.start)

    @property
    def end_offset(self) -> timedelta:
        """Wall-clock time since local midnight at which the window closes (24:00 = 1 day)."""
        return _DAY if self.end == _MIDNIGHT else _since_midnight(self.end)

    @property
    def ends_at_midnight(self) -> bool:
        return self.end == _MIDNIGHT


@dataclass(frozen=True)
class BusinessCalendar:
    """Working windows per weekday in the zone `tz`, minus whole-day `holidays` (local dates).

    Windows may be given unsorted or overlapping; they are merged per weekday, so equal working
    time means equal (and equally hashed) calendars."""

    tz: str
    windows: tuple[WorkWindow, ...]
    holidays: frozenset[date] = frozenset()

    def __post_init__(self) -> None:
        try:
            ZoneInfo(self.tz)
        except (ZoneInfoNotFoundError, ValueError, TypeError) as exc:
            raise ValueError(f"unknown time zone {self.tz!r}") from exc
        object.__setattr__(self, "windows", _merge_windows(self.windows))
        object.__setattr__(self, "holidays", frozenset(self.holidays))

    @classmethod
    @cache
    def always(cls) -> BusinessCalendar:
        """The 24×7 calendar, for rules without a calendar: business time is elapsed time.
        Built once (calendars are immutable); every clock start without a calendar asks."""
        return cls(tz="UTC", windows=tuple(WorkWindow(d, _MIDNIGHT, _MIDNIGHT) for d in range(7)))

    @property
    def is_always_open(self) -> bool:
        """True when every day is worked around the clock (whatever the zone)."""
        return (
            not self.holidays
            and len(self.windows) == 7
            and all(w.start == _MIDNIGHT and w.ends_at_midnight for w in self.windows)
        )


def add_business_time(start: datetime, duration: timedelta, calendar: BusinessCalendar) -> datetime:
    """The instant (UTC) at which `duration` of business time has elapsed since `start`.

    A zero duration returns `start` (in UTC) even outside working time. Raises ValueError for a
    naive `start`, a negative duration, or when the calendar has no working time at all within
    NO_WORKING_TIME_HORIZON_DAYS consecutive days."""
    start = _as_utc(start, "start")
    if duration < _ZERO:
        raise ValueError(f"duration must not be negative, got {duration}")
    if not duration:
        return start
    plan = _plan_for(calendar)
    if plan.always_open:
        return start + duration
    if not plan.has_windows:
        raise ValueError("the calendar has no working windows")

    remaining = duration
    first = plan.local_date(start)
    day = first
    idle_days = 0
    while True:
        if day.weekday() == 0 and day >= first + _SAFE_MARGIN:
            week_total = plan.week_total(day)
            if week_total < remaining:
                remaining -= week_total
                idle_days = idle_days + 7 if not week_total else 0
                _check_horizon(idle_days)
                day += _WEEK
                continue
        intervals, day_total = plan.day(day)
        for opens, closes in intervals:
            if closes <= start:
                continue
            opens = max(opens, start)
            if closes - opens >= remaining:
                return opens + remaining
            remaining -= closes - opens
        idle_days = idle_days + 1 if not day_total else 0
        _check_horizon(idle_days)
        day += _DAY


def business_time_between(start: datetime, end: datetime, calendar: BusinessCalendar) -> timedelta:
    """Business time elapsed from `start` to `end`; zero if `end <= start`."""
    start = _as_utc(start, "start")
    end = _as_utc(end, "end")
    if end <= start:
        return _ZERO
    plan = _plan_for(calendar)
    if plan.always_open:
        return end - start

    first = plan.local_date(start)
    last = plan.local_date(end)
    total = _ZERO
    day = first - _DAY
    while day <= last + _SAFE_MARGIN:
        if (
            day.weekday() == 0
            and day >= first + _SAFE_MARGIN
            and day + _WEEK - _DAY <= last - _SAFE_MARGIN
        ):
            total += plan.week_total(day)
            day += _WEEK
            continue
        for opens, closes in plan.day(day)[0]:
            overlap = min(closes, end) - max(opens, start)
            if overlap > _ZERO:
                total += overlap
        day += _DAY
    return total


def is_business_time(at: datetime, calendar: BusinessCalendar) -> bool:
    """Whether `at` lies inside a working window (window starts count, window ends do not)."""
    at = _as_utc(at, "at")
    plan = _plan_for(calendar)
    if plan.always_open:
        return True
    local = plan.local_date(at)
    for day in (local - _DAY, local, local + _DAY):
        for opens, closes in plan.day(day)[0]:
            if opens <= at < closes:
                return True
    return False


class _Plan:
    """A calendar compiled for arithmetic, with per-date UTC intervals cached.

    Cached per calendar by `_plan_for`; SLA deadlines for many tickets share a few calendars."""

    _MAX_CACHED_DAYS = 50_000

    def __init__(self, calendar: BusinessCalendar) -> None:
        self.zone = ZoneInfo(calendar.tz)
        self.holidays = calendar.holidays
        self.always_open = calendar.is_always_open
        self.has_windows = bool(calendar.windows)
        per_weekday: list[list[WorkWindow]] = [[] for _ in range(7)]
        for window in calendar.windows:
            per_weekday[window.weekday].append(window)
        self.windows_by_weekday = tuple(tuple(ws) for ws in per_weekday)
        self._days: dict[date, tuple[tuple[_Interval, ...], timedelta]] = {}
        self._weeks: dict[date, timedelta] = {}

    def local_date(self, instant: datetime) -> date:
        return instant.astimezone(self.zone).date()

    def day(self, day: date) -> tuple[tuple[_Interval, ...], timedelta]:
        """The working intervals (UTC, sorted, disjoint) of a local date and their total."""
        cached = self._days.get(day)
        if cached is not None:
            return cached
        intervals: list[_Interval] = []
        if day not in self.holidays:
            for window in self.windows_by_weekday[day.weekday()]:
                opens = _wall_to_utc(day, window.start, self.zone)
                end_day = day + _DAY if window.ends_at_midnight else day
                closes = _wall_to_utc(end_day, window.end, self.zone)
                if closes > opens:  # a window entirely inside a spring-forward gap is empty
                    intervals.append((opens, closes))
        result = (tuple(intervals), sum((c - o for o, c in intervals), _ZERO))
        if len(self._days) >= self._MAX_CACHED_DAYS:
            self._days.clear()
        self._days[day] = result
        return result

    def week_total(self, monday: date) -> timedelta:
        """Total working time of the seven local dates from `monday`."""
        cached = self._weeks.get(monday)
        if cached is None:
            cached = sum((self.day(monday + i * _DAY)[1] for i in range(7)), _ZERO)
            if len(self._weeks) >= self._MAX_CACHED_DAYS:
                self._weeks.clear()
            self._weeks[monday] = cached
        return cached


@lru_cache(maxsize=128)
def _plan_for(calendar: BusinessCalendar) -> _Plan:
    return _Plan(calendar)


def _wall_to_utc(day: date, wall_time: time, zone: ZoneInfo) -> datetime:
    """The UTC instant of a local wall-clock time: fold=0 when ambiguous, the jump when in a gap."""
    wall = datetime.combine(day, wall_time, tzinfo=zone)  # fold=0: the first occurrence
    instant = wall.astimezone(UTC)
    if instant.astimezone(zone).replace(tzinfo=None) == wall.replace(tzinfo=None):
        return instant
    return _end_of_gap(wall, zone)


def _end_of_gap(wall: datetime, zone: ZoneInfo) -> datetime:
    """The instant the clocks jumped over the nonexistent wall time `wall`."""
    # fold=0 reads a gap time with the offset before the jump (an instant after the jump);
    # fold=1 with the offset after it (an instant before the jump).
    after = wall.astimezone(UTC)
    before = wall.replace(fold=1).astimezone(UTC)
    offset_after = after.astimezone(zone).utcoffset()
    low, high = 0, (after - before) // _MICROSECOND  # the jump is in (before, after]
    while high - low > 1:
        mid = (low + high) // 2
        if (before + mid * _MICROSECOND).astimezone(zone).utcoffset() == offset_after:
            high = mid
        else:
            low = mid
    return before + high * _MICROSECOND


def _merge_windows(windows: Iterable[WorkWindow]) -> tuple[WorkWindow, ...]:
    """Windows sorted by weekday and start, with overlapping or touching ones merged."""
    windows = tuple(windows)
    for window in windows:
        if not isinstance(window, WorkWindow):
            raise TypeError(f"expected WorkWindow, got {type(window).__name__}")
    merged: list[WorkWindow] = []
    for window in sorted(windows, key=lambda w: (w.weekday, w.start_offset)):
        previous = merged[-1] if merged else None
        if (
            previous is not None
            and previous.weekday == window.weekday
            and window.start_offset <= previous.end_offset
        ):
            if window.end_offset > previous.end_offset:
                merged[-1] = WorkWindow(previous.weekday, previous.start, window.end)
        else:
            merged.append(window)
    return tuple(merged)


def _since_midnight(wall_time: time) -> timedelta:
    return timedelta(
        hours=wall_time.hour,
        minutes=wall_time.minute,
        seconds=wall_time.second,
        microseconds=wall_time.microsecond,
    )


def _as_utc(instant: datetime, name: str) -> datetime:
    if instant.tzinfo is None or instant.utcoffset() is None:
        raise ValueError(f"{name} must be timezone-aware, got naive {instant!r}")
    return instant.astimezone(UTC)


def _check_horizon(idle_days: int) -> None:
    if idle_days > NO_WORKING_TIME_HORIZON_DAYS:
        raise ValueError(
            f"the calendar has no working time for over {NO_WORKING_TIME_HORIZON_DAYS} days"
        )
