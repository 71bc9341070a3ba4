"""Micro-benchmark of sla.clock: adding and measuring long stretches of business time.

Run: .venv/bin/python bench/business_time.py
Prints cold (first call for a calendar) and warm (cached per-date intervals) timings."""

import sys
import timeit
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sla import clock  # noqa: E402
from sla.clock import (  # noqa: E402
    BusinessCalendar,
    WorkWindow,
    add_business_time,
    business_time_between,
)

OFFICE = BusinessCalendar(
    tz="Europe/Berlin",
    windows=tuple(
        WorkWindow(day, start, end)
        for day in range(5)
        for start, end in ((time(9), time(12)), (time(13), time(18)))
    ),
    holidays=frozenset({date(2024, 12, 25), date(2024, 12, 26), date(2025, 1, 1)}),
)
START = datetime(2024, 1, 3, 10, 17, tzinfo=UTC)


def measure(label: str, call, repeat: int = 200) -> None:
    clock._plan_for.cache_clear()
    cold = timeit.timeit(call, number=1)
    warm = timeit.timeit(call, number=repeat) / repeat
    print(f"{label:<48} cold {cold * 1e3:8.3f} ms   warm {warm * 1e6:9.1f} µs")


def main() -> None:
    duration = timedelta(hours=2000)
    deadline = add_business_time(START, duration, OFFICE)
    assert business_time_between(START, deadline, OFFICE) == duration
    print(
        f"2,000 business hours from {START:%Y-%m-%d %H:%M} UTC end at {deadline:%Y-%m-%d %H:%M} UTC"
    )
    measure("add_business_time(+2,000 h)", lambda: add_business_time(START, duration, OFFICE))
    measure("add_business_time(+8 h)", lambda: add_business_time(START, timedelta(hours=8), OFFICE))
    measure(
        "business_time_between(start, +2,000 h deadline)",
        lambda: business_time_between(START, deadline, OFFICE),
    )
    always = BusinessCalendar.always()
    measure("add_business_time(+2,000 h, 24x7)", lambda: add_business_time(START, duration, always))


if __name__ == "__main__":
    main()
