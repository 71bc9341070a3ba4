"""Business-time arithmetic (sla.clock): hand-computed examples and hypothesis properties.

Pure tests: no database, no Django."""

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sla.clock import (
    NO_WORKING_TIME_HORIZON_DAYS,
    BusinessCalendar,
    WorkWindow,
    add_business_time,
    business_time_between,
    is_business_time,
)

BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")
SYDNEY = ZoneInfo("Australia/Sydney")
ZONES = [
    "Europe/Berlin",
    "America/New_York",
    "Asia/Shanghai",
    "Australia/Sydney",
    "UTC",
    "Asia/Kolkata",
]
H = timedelta(hours=1)
MIN = timedelta(minutes=1)
US = timedelta(microseconds=1)


def weekdays(*spans: tuple[time, time], days=range(5)) -> tuple[WorkWindow, ...]:
    return tuple(WorkWindow(d, start, end) for d in days for start, end in spans)


def berlin(*args: int) -> datetime:
    return datetime(*args, tzinfo=BERLIN)


# Mon–Fri 09:00–12:00 and 13:00–18:00 in Berlin: 8 hours a day with a lunch break.
OFFICE = BusinessCalendar(
    tz="Europe/Berlin", windows=weekdays((time(9), time(12)), (time(13), time(18)))
)
NINE_TO_FIVE_BERLIN = BusinessCalendar(tz="Europe/Berlin", windows=weekdays((time(9), time(17))))


# --- hand-computed examples -------------------------------------------------------------------


def test_friday_evening_plus_two_hours_is_monday_ten():
    friday_5pm = berlin(2024, 2, 2, 17)
    deadline = add_business_time(friday_5pm, 2 * H, OFFICE)
    assert deadline == berlin(2024, 2, 5, 10)
    assert business_time_between(friday_5pm, deadline, OFFICE) == 2 * H


def test_half_an_hour_before_lunch_continues_after_lunch():
    assert add_business_time(berlin(2024, 2, 5, 11, 45), 0.5 * H, OFFICE) == berlin(
        2024, 2, 5, 13, 15
    )


def test_deadline_on_a_window_end_stays_there():
    monday_9am = berlin(2024, 2, 5, 9)
    assert add_business_time(monday_9am, 3 * H, OFFICE) == berlin(2024, 2, 5, 12)
    assert add_business_time(monday_9am, 8 * H, OFFICE) == berlin(2024, 2, 5, 18)


@pytest.mark.parametrize(
    ("start", "expected"),
    [
        (berlin(2024, 2, 10, 10), berlin(2024, 2, 12, 10)),  # Saturday
        (berlin(2024, 2, 5, 7), berlin(2024, 2, 5, 10)),  # before opening
        (berlin(2024, 2, 5, 12, 30), berlin(2024, 2, 5, 14)),  # lunch break
        (berlin(2024, 2, 5, 18), berlin(2024, 2, 6, 10)),  # exactly at closing
        (berlin(2024, 2, 5, 13), berlin(2024, 2, 5, 14)),  # exactly at a window start
    ],
)
def test_clock_starts_at_the_next_window_start(start, expected):
    assert add_business_time(start, H, OFFICE) == expected


def test_holiday_is_skipped():
    calendar = BusinessCalendar(
        tz=OFFICE.tz, windows=OFFICE.windows, holidays=frozenset({date(2024, 2, 5)})
    )
    assert add_business_time(berlin(2024, 2, 2, 17), 2 * H, calendar) == berlin(2024, 2, 6, 10)


def test_dst_weekend_keeps_wall_clock_deadline():
    # Clocks go forward on Sunday 2024-03-31: Friday 17:00 CET to Monday 10:00 CEST.
    friday_5pm = berlin(2024, 3, 29, 17)
    deadline = add_business_time(friday_5pm, 2 * H, OFFICE)
    assert deadline == datetime(2024, 4, 1, 8, tzinfo=UTC)
    assert deadline - friday_5pm == 64 * H  # 65 wall-clock hours, 64 real ones
    assert business_time_between(friday_5pm, deadline, OFFICE) == 2 * H


def test_year_end_with_new_year_holiday():
    calendar = BusinessCalendar(
        tz=NINE_TO_FIVE_BERLIN.tz,
        windows=NINE_TO_FIVE_BERLIN.windows,
        holidays=frozenset({date(2025, 1, 1)}),
    )
    new_years_eve_4pm = berlin(2024, 12, 31, 16)
    deadline = add_business_time(new_years_eve_4pm, 2 * H, calendar)
    assert deadline == berlin(2025, 1, 2, 10)
    assert business_time_between(new_years_eve_4pm, deadline, calendar) == 2 * H


def test_two_thousand_hours_end_on_a_friday_closing_time_across_both_dst_changes():
    # 40 hours a week: 2,000 hours are exactly 50 weeks, ending at Friday's close, not Monday.
    start = berlin(2024, 1, 1, 9)
    deadline = add_business_time(start, 2000 * H, NINE_TO_FIVE_BERLIN)
    assert deadline == berlin(2024, 12, 13, 17)
    assert business_time_between(start, deadline, NINE_TO_FIVE_BERLIN) == 2000 * H


def test_result_is_in_utc_whatever_the_input_zone():
    start_new_york = datetime(2024, 2, 2, 11, tzinfo=NEW_YORK)  # Friday 17:00 in Berlin
    deadline = add_business_time(start_new_york, 2 * H, OFFICE)
    assert deadline.tzinfo is UTC
    assert deadline == berlin(2024, 2, 5, 10)


def test_business_time_between_counts_only_windows():
    assert business_time_between(berlin(2024, 2, 5, 8), berlin(2024, 2, 5, 20), OFFICE) == 8 * H
    assert business_time_between(berlin(2024, 2, 5, 11), berlin(2024, 2, 5, 14), OFFICE) == 2 * H
    whole_week = business_time_between(berlin(2024, 2, 3), berlin(2024, 2, 17), OFFICE)
    assert whole_week == 80 * H


def test_business_time_between_is_zero_when_end_is_not_after_start():
    assert business_time_between(berlin(2024, 2, 5, 11), berlin(2024, 2, 5, 10), OFFICE) == (
        timedelta(0)
    )
    assert business_time_between(berlin(2024, 2, 5, 11), berlin(2024, 2, 5, 11), OFFICE) == (
        timedelta(0)
    )


def test_is_business_time_includes_window_start_and_excludes_window_end():
    assert is_business_time(berlin(2024, 2, 5, 9), OFFICE)
    assert is_business_time(berlin(2024, 2, 5, 11, 59, 59), OFFICE)
    assert not is_business_time(berlin(2024, 2, 5, 12), OFFICE)
    assert not is_business_time(berlin(2024, 2, 5, 8, 59), OFFICE)
    assert not is_business_time(berlin(2024, 2, 10, 10), OFFICE)  # Saturday
    holiday = BusinessCalendar(
        tz=OFFICE.tz, windows=OFFICE.windows, holidays=frozenset({date(2024, 2, 5)})
    )
    assert not is_business_time(berlin(2024, 2, 5, 10), holiday)


def test_night_shift_split_at_midnight_runs_through():
    calendar = BusinessCalendar(
        tz="Europe/Berlin",
        windows=(WorkWindow(0, time(22), time(0)), WorkWindow(1, time(0), time(6))),
    )
    assert add_business_time(berlin(2024, 2, 5, 23), 3 * H, calendar) == berlin(2024, 2, 6, 2)
    assert is_business_time(berlin(2024, 2, 6, 0), calendar)
    assert business_time_between(berlin(2024, 2, 5), berlin(2024, 2, 7), calendar) == 8 * H


# --- DST: windows last what the wall clock gives ----------------------------------------------


@pytest.mark.parametrize(
    ("zone", "sunday", "hours"),
    [
        ("Europe/Berlin", date(2024, 3, 31), 23),
        ("Europe/Berlin", date(2024, 10, 27), 25),
        ("America/New_York", date(2024, 3, 10), 23),
        ("America/New_York", date(2024, 11, 3), 25),
        ("Australia/Sydney", date(2024, 4, 7), 25),
        ("Australia/Sydney", date(2024, 10, 6), 23),
        ("Europe/Berlin", date(2024, 6, 2), 24),
    ],
)
def test_whole_day_window_lasts_the_real_length_of_the_day(zone, sunday, hours):
    calendar = BusinessCalendar(tz=zone, windows=(WorkWindow(6, time(0), time(0)),))
    tz = ZoneInfo(zone)
    around = (
        datetime.combine(sunday - timedelta(days=3), time(), tzinfo=tz),
        datetime.combine(sunday + timedelta(days=3), time(), tzinfo=tz),
    )
    assert business_time_between(*around, calendar) == hours * H
    saturday_noon = datetime.combine(sunday - timedelta(days=1), time(12), tzinfo=tz)
    assert add_business_time(saturday_noon, hours * H, calendar) == datetime.combine(
        sunday + timedelta(days=1), time(), tzinfo=tz
    )


def test_window_edge_in_spring_forward_gap_resolves_to_the_jump():
    # 2024-03-31 Berlin: 02:00 CET jumps to 03:00 CEST at 01:00 UTC; 02:30 does not exist.
    calendar = BusinessCalendar(tz="Europe/Berlin", windows=(WorkWindow(6, time(2, 30), time(4)),))
    day = (datetime(2024, 3, 30, tzinfo=UTC), datetime(2024, 4, 1, tzinfo=UTC))
    assert business_time_between(*day, calendar) == H
    assert is_business_time(datetime(2024, 3, 31, 1, tzinfo=UTC), calendar)
    assert not is_business_time(datetime(2024, 3, 31, 0, 59, tzinfo=UTC), calendar)
    assert add_business_time(day[0], 30 * MIN, calendar) == datetime(2024, 3, 31, 1, 30, tzinfo=UTC)


def test_window_before_the_gap_ends_at_the_jump():
    calendar = BusinessCalendar(tz="Europe/Berlin", windows=(WorkWindow(6, time(1), time(2, 30)),))
    day = (datetime(2024, 3, 30, tzinfo=UTC), datetime(2024, 4, 1, tzinfo=UTC))
    assert business_time_between(*day, calendar) == H  # 01:00 CET to the jump at 03:00 CEST
    assert add_business_time(day[0], H, calendar) == datetime(2024, 3, 31, 1, tzinfo=UTC)


def test_window_entirely_inside_the_gap_has_no_working_time():
    calendar = BusinessCalendar(
        tz="Europe/Berlin",
        windows=(WorkWindow(6, time(2, 10), time(2, 50)), WorkWindow(0, time(9), time(10))),
    )
    start = datetime(2024, 3, 30, tzinfo=UTC)
    assert business_time_between(start, datetime(2024, 4, 1, tzinfo=UTC), calendar) == (
        timedelta(0)
    )
    assert add_business_time(start, 10 * MIN, calendar) == berlin(2024, 4, 1, 9, 10)
    # The next Sunday the window exists again.
    assert add_business_time(berlin(2024, 4, 6), 10 * MIN, calendar) == berlin(2024, 4, 7, 2, 20)


def test_window_over_the_repeated_hour_counts_both_occurrences():
    # 2024-10-27 Berlin: 03:00 CEST goes back to 02:00 CET, so 02:00-03:00 happens twice.
    calendar = BusinessCalendar(tz="Europe/Berlin", windows=(WorkWindow(6, time(2), time(3)),))
    day = (datetime(2024, 10, 26, tzinfo=UTC), datetime(2024, 10, 28, tzinfo=UTC))
    assert business_time_between(*day, calendar) == 2 * H


def test_window_ending_in_the_repeated_hour_ends_at_its_first_occurrence():
    calendar = BusinessCalendar(tz="Europe/Berlin", windows=(WorkWindow(6, time(1), time(2, 30)),))
    day = (datetime(2024, 10, 26, tzinfo=UTC), datetime(2024, 10, 28, tzinfo=UTC))
    assert business_time_between(*day, calendar) == 90 * MIN
    assert add_business_time(day[0], 90 * MIN, calendar) == datetime(
        2024, 10, 27, 0, 30, tzinfo=UTC
    )


# --- 24x7 and edge cases ----------------------------------------------------------------------


def test_always_calendar_is_plain_addition_of_elapsed_time():
    always = BusinessCalendar.always()
    start = datetime(2024, 3, 30, 23, 59, 59, 999_999, tzinfo=BERLIN)
    # Elapsed time, not Python's wall-clock `+` on a Berlin datetime (that would be 1h off here).
    assert add_business_time(start, 1000 * H + US, always) == (
        start.astimezone(UTC) + 1000 * H + US
    )
    assert business_time_between(start, start.astimezone(UTC) + 30 * H, always) == 30 * H
    assert is_business_time(start, always)


def test_whole_days_in_a_dst_zone_without_holidays_are_always_open():
    calendar = BusinessCalendar(
        tz="Europe/Berlin", windows=weekdays((time(0), time(0)), days=range(7))
    )
    assert calendar.is_always_open
    start = berlin(2024, 3, 30, 12)
    assert add_business_time(start, 48 * H, calendar) == berlin(2024, 4, 1, 13)


def test_zero_duration_returns_start_even_outside_business_time():
    saturday = berlin(2024, 2, 10, 10)
    assert add_business_time(saturday, timedelta(0), OFFICE) == saturday
    no_windows = BusinessCalendar(tz="UTC", windows=())
    assert add_business_time(saturday, timedelta(0), no_windows) == saturday


def test_zero_duration_in_a_repeated_hour_keeps_the_instant():
    second_two_thirty = datetime(2024, 10, 27, 2, 30, tzinfo=BERLIN, fold=1)
    same = add_business_time(second_two_thirty, timedelta(0), OFFICE)
    assert same == datetime(2024, 10, 27, 1, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    "call",
    [
        lambda: add_business_time(datetime(2024, 2, 5, 9), H, OFFICE),  # noqa: DTZ001
        lambda: business_time_between(datetime(2024, 2, 5, 9), berlin(2024, 2, 6), OFFICE),  # noqa: DTZ001
        lambda: business_time_between(berlin(2024, 2, 5), datetime(2024, 2, 6, 9), OFFICE),  # noqa: DTZ001
        lambda: is_business_time(datetime(2024, 2, 5, 9), OFFICE),  # noqa: DTZ001
    ],
)
def test_naive_datetimes_are_rejected(call):
    with pytest.raises(ValueError, match="timezone-aware"):
        call()


def test_negative_duration_is_rejected():
    with pytest.raises(ValueError, match="negative"):
        add_business_time(berlin(2024, 2, 5, 9), -H, OFFICE)


def test_calendar_without_windows_cannot_reach_a_deadline():
    with pytest.raises(ValueError, match="no working windows"):
        add_business_time(berlin(2024, 2, 5, 9), H, BusinessCalendar(tz="UTC", windows=()))


def mondays(first: date, count: int) -> frozenset[date]:
    return frozenset(first + timedelta(weeks=i) for i in range(count))


def test_holidays_beyond_the_horizon_raise_instead_of_looping():
    monday_only = weekdays((time(9), time(10)), days=[0])
    years = NO_WORKING_TIME_HORIZON_DAYS // 7 + 10
    calendar = BusinessCalendar(
        tz="UTC", windows=monday_only, holidays=mondays(date(2024, 1, 1), years)
    )
    with pytest.raises(ValueError, match="no working time"):
        add_business_time(datetime(2024, 1, 1, tzinfo=UTC), H, calendar)


def test_long_holiday_stretch_within_the_horizon_is_crossed():
    monday_only = weekdays((time(9), time(10)), days=[0])
    calendar = BusinessCalendar(
        tz="UTC", windows=monday_only, holidays=mondays(date(2024, 1, 1), 104)
    )
    start = datetime(2024, 1, 1, tzinfo=UTC)
    deadline = add_business_time(start, H, calendar)
    assert deadline == datetime.combine(date(2024, 1, 1) + timedelta(weeks=104), time(10), UTC)
    assert business_time_between(start, deadline, calendar) == H


# --- calendar construction --------------------------------------------------------------------


def test_overlapping_unsorted_windows_are_merged():
    messy = BusinessCalendar(
        tz="UTC",
        windows=(
            WorkWindow(0, time(14), time(15)),
            WorkWindow(0, time(11), time(14)),
            WorkWindow(0, time(9), time(12)),
            WorkWindow(0, time(16), time(0)),
            WorkWindow(0, time(20), time(21)),
        ),
    )
    assert messy.windows == (
        WorkWindow(0, time(9), time(15)),
        WorkWindow(0, time(16), time(0)),
    )
    tidy = BusinessCalendar(tz="UTC", windows=messy.windows)
    assert messy == tidy
    assert hash(messy) == hash(tidy)


@pytest.mark.parametrize(
    ("weekday", "start", "end"),
    [
        (0, time(10), time(9)),
        (0, time(10), time(10)),
        (7, time(9), time(10)),
        (-1, time(9), time(10)),
        (0, time(9, tzinfo=UTC), time(10)),
    ],
)
def test_invalid_windows_are_rejected(weekday, start, end):
    with pytest.raises(ValueError, match="weekday|not after|naive"):
        WorkWindow(weekday, start, end)


def test_unknown_time_zone_is_rejected():
    with pytest.raises(ValueError, match="unknown time zone"):
        BusinessCalendar(tz="Mars/Olympus_Mons", windows=())


# --- properties -------------------------------------------------------------------------------


def _dst_and_year_end_anchors() -> list[datetime]:
    """Local midnights (UTC) just before each DST change and year end, 2022–2027, per zone."""
    anchors = []
    for name in ZONES:
        tz = ZoneInfo(name)
        day = date(2022, 1, 1)
        previous = datetime.combine(day, time(12), tz).utcoffset()
        while day < date(2028, 1, 1):
            day += timedelta(days=1)
            offset = datetime.combine(day, time(12), tz).utcoffset()
            if offset != previous or (day.month, day.day) == (12, 31):
                anchors.append(datetime.combine(day, time(), tz).astimezone(UTC))
            previous = offset
    return anchors


ANCHORS = _dst_and_year_end_anchors()


def _wall(minutes: int) -> time:
    return time(0) if minutes == 24 * 60 else time(minutes // 60, minutes % 60)


@st.composite
def random_windows(draw, step: int = 1, earliest: int = 0) -> tuple[WorkWindow, ...]:
    """Any windows on a `step`-minute grid starting no earlier than `earliest` minutes."""
    windows = []
    for _ in range(draw(st.integers(1, 10))):
        start = draw(st.integers(earliest // step, 24 * 60 // step - 1)) * step
        end = draw(st.integers(start // step + 1, 24 * 60 // step)) * step
        windows.append(WorkWindow(draw(st.integers(0, 6)), _wall(start), _wall(end)))
    return tuple(windows)


@st.composite
def split_shift_windows(draw, step: int = 1, earliest: int = 0) -> tuple[WorkWindow, ...]:
    """Office-like weeks: the same one or two shifts on a random set of weekdays."""
    edges = sorted(
        draw(
            st.lists(
                st.integers(earliest // step, 24 * 60 // step), min_size=4, max_size=4, unique=True
            )
        )
    )
    spans = [(_wall(edges[0] * step), _wall(edges[1] * step))]
    if draw(st.booleans()):
        spans.append((_wall(edges[2] * step), _wall(edges[3] * step)))
    days = draw(st.sets(st.integers(0, 6), min_size=1))
    return weekdays(*spans, days=sorted(days))


FULL_DAYS = st.sets(st.integers(0, 6), min_size=1).map(
    lambda days: weekdays((time(0), time(0)), days=sorted(days))
)


def instants_near_anchors() -> st.SearchStrategy[datetime]:
    return st.builds(
        lambda anchor, offset: anchor + offset,
        st.sampled_from(ANCHORS),
        st.integers(-4 * 86_400 * 10**6, 4 * 86_400 * 10**6).map(lambda us: us * US),
    )


# hypothesis wants naive bounds for aware datetimes
ANY_INSTANT = st.one_of(
    instants_near_anchors(),
    st.datetimes(
        datetime(2022, 1, 1),  # noqa: DTZ001
        datetime(2027, 12, 31),  # noqa: DTZ001
        timezones=st.just(UTC),
    ),
)


@st.composite
def scenarios(draw, step: int = 1, earliest: int = 0, instants=ANY_INSTANT):
    """A calendar and a start instant (expressed in a random zone), holidays near the start."""
    tz = draw(st.sampled_from(ZONES))
    windows = draw(
        st.one_of(random_windows(step, earliest), split_shift_windows(step, earliest), FULL_DAYS)
        if earliest == 0
        else st.one_of(random_windows(step, earliest), split_shift_windows(step, earliest))
    )
    start = draw(instants)
    first = start.astimezone(ZoneInfo(tz)).date()
    holidays = frozenset(
        first + timedelta(days=n) for n in draw(st.lists(st.integers(-2, 60), max_size=12))
    )
    calendar = BusinessCalendar(tz=tz, windows=windows, holidays=holidays)
    return calendar, start.astimezone(ZoneInfo(draw(st.sampled_from(ZONES))))


DURATIONS = st.one_of(
    st.integers(1, 300 * 60).map(lambda minutes: minutes * MIN),
    st.integers(1, 300 * 3600 * 10**6).map(lambda us: us * US),
)
PROPERTY_SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@PROPERTY_SETTINGS
@given(scenario=scenarios(), duration=DURATIONS)
def test_business_time_to_the_deadline_is_the_duration(scenario, duration):
    calendar, start = scenario
    deadline = add_business_time(start, duration, calendar)
    assert deadline.tzinfo is UTC
    assert business_time_between(start, deadline, calendar) == duration
    # ...and no earlier instant would do.
    assert business_time_between(start, deadline - US, calendar) < duration
    assert deadline - start >= duration


@PROPERTY_SETTINGS
@given(scenario=scenarios(), duration=DURATIONS)
def test_deadline_is_in_business_time_or_at_a_window_end(scenario, duration):
    calendar, start = scenario
    deadline = add_business_time(start, duration, calendar)
    assert is_business_time(deadline, calendar) or is_business_time(deadline - US, calendar)


@PROPERTY_SETTINGS
@given(scenario=scenarios(), durations=st.lists(DURATIONS, min_size=2, max_size=2, unique=True))
def test_longer_durations_give_later_deadlines(scenario, durations):
    calendar, start = scenario
    shorter, longer = sorted(durations)
    assert add_business_time(start, shorter, calendar) < add_business_time(start, longer, calendar)


@PROPERTY_SETTINGS
@given(scenario=scenarios(), first=DURATIONS, second=DURATIONS)
def test_adding_in_two_steps_equals_adding_at_once(scenario, first, second):
    # The SLA engine extends deadlines by paused business time; this must not drift.
    calendar, start = scenario
    in_steps = add_business_time(add_business_time(start, first, calendar), second, calendar)
    assert in_steps == add_business_time(start, first + second, calendar)


@PROPERTY_SETTINGS
@given(
    scenario=scenarios(),
    spans=st.lists(st.integers(0, 20 * 86_400 * 10**6), min_size=2, max_size=2),
)
def test_business_time_adds_up_over_consecutive_spans(scenario, spans):
    calendar, start = scenario
    start = start.astimezone(UTC)  # `+` on a zoned datetime would be wall-clock arithmetic
    middle = start + spans[0] * US
    end = middle + spans[1] * US
    whole = business_time_between(start, end, calendar)
    assert whole == business_time_between(start, middle, calendar) + business_time_between(
        middle, end, calendar
    )
    assert timedelta(0) <= whole <= end - start


QUARTER = 15 * MIN


def on_quarter_hours(instant: datetime) -> datetime:
    return instant - (instant - datetime(2000, 1, 1, tzinfo=UTC)) % QUARTER


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    scenario=scenarios(step=15, earliest=4 * 60, instants=ANY_INSTANT.map(on_quarter_hours)),
    quarters=st.integers(0, 6 * 96),
)
def test_business_time_matches_a_wall_clock_count_of_quarter_hours(scenario, quarters):
    """An independent oracle: read each quarter hour on the wall clock and check the windows.

    Windows start at 04:00 or later, so no window edge falls in a DST gap or repeated hour of
    these zones, where the wall clock alone is ambiguous."""
    calendar, start = scenario
    start = start.astimezone(UTC)  # step in real time, not wall-clock time
    tz = ZoneInfo(calendar.tz)
    expected = timedelta(0)
    for n in range(quarters):
        instant = start + n * QUARTER
        wall = instant.astimezone(tz)
        since_midnight = timedelta(hours=wall.hour, minutes=wall.minute)
        working = wall.date() not in calendar.holidays and any(
            w.weekday == wall.weekday() and w.start_offset <= since_midnight < w.end_offset
            for w in calendar.windows
        )
        assert is_business_time(instant, calendar) == working
        expected += QUARTER if working else timedelta(0)
    assert business_time_between(start, start + quarters * QUARTER, calendar) == expected


@settings(max_examples=100, deadline=None)
@given(
    start=st.datetimes(
        datetime(2000, 1, 1),  # noqa: DTZ001
        datetime(2040, 1, 1),  # noqa: DTZ001
        timezones=st.sampled_from(ZONES).map(ZoneInfo),
    ),
    duration=st.integers(0, 10**16).map(lambda us: us * US),
)
def test_always_calendar_adds_and_measures_elapsed_time_exactly(start, duration):
    always = BusinessCalendar.always()
    end = add_business_time(start, duration, always)
    assert end == start.astimezone(UTC) + duration
    assert business_time_between(start, end, always) == duration
