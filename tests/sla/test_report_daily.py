"""sla_daily: the report's outcomes counted per day of the active time zone, every day of the
range present, closed before due counted apart from met and breached."""

from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone

from sla.reports import sla_daily
from tests.sla.conftest import T0
from workflow import services

pytestmark = pytest.mark.django_db


@pytest.fixture
def history(approved, people, rule):
    """Completed at 10:00, 11:00 and 14:00 UTC on Mon Mar 2 (the 14:00 one late on both
    clocks); one closed unfinished at 09:10 UTC (both clocks closed before due)."""
    handler = people["handler"]
    for accept_after, complete_after in ((20, 60), (30, 120), (90, 300)):
        ticket = approved()
        services.ticket_accept(
            ticket_id=ticket.pk, handler=handler, now=T0 + timedelta(minutes=accept_after)
        )
        services.ticket_complete(
            ticket_id=ticket.pk, handler=handler, now=T0 + timedelta(minutes=complete_after)
        )
    closed = approved()
    services.ticket_close(
        ticket_id=closed.pk, user=people["applicant"], now=T0 + timedelta(minutes=10)
    )
    return people


def counts(rows, day) -> tuple[int, ...]:
    (row,) = [r for r in rows if r["day"] == day]
    return tuple(v for k, v in row.items() if k != "day")


def test_every_day_of_the_range_has_a_row_with_met_breached_and_closed_before_due(history):
    with timezone.override("UTC"):
        rows = sla_daily(
            date_from=datetime(2026, 3, 1, tzinfo=T0.tzinfo),
            date_to=datetime(2026, 3, 4, tzinfo=T0.tzinfo),
        )
    assert [r["day"] for r in rows] == [date(2026, 3, 1), date(2026, 3, 2), date(2026, 3, 3)]
    # response met, breached, closed before due; resolve the same
    assert counts(rows, date(2026, 3, 2)) == (2, 1, 1, 2, 1, 1)
    assert counts(rows, date(2026, 3, 1)) == counts(rows, date(2026, 3, 3)) == (0,) * 6


def test_days_are_those_of_the_active_time_zone(history):
    with timezone.override("Pacific/Auckland"):  # UTC+13: 11:00 UTC is midnight, Mar 3
        start = datetime(2026, 3, 2, tzinfo=ZoneInfo("Pacific/Auckland"))
        rows = sla_daily(date_from=start, date_to=start + timedelta(days=2))
    assert counts(rows, date(2026, 3, 2)) == (1, 0, 1, 1, 0, 1)  # 09:10 and 10:00 UTC
    assert counts(rows, date(2026, 3, 3)) == (1, 1, 0, 1, 1, 0)  # 11:00 and 14:00 UTC


def test_the_reports_filters_apply(history):
    window = {"date_from": T0 - timedelta(days=1), "date_to": T0 + timedelta(days=1)}
    assert sum(sum(counts([r], r["day"])) for r in sla_daily(**window, priority=1)) == 0
    assert sum(sum(counts([r], r["day"])) for r in sla_daily(**window, handler_group_ids=[])) == 0
    mine = sla_daily(**window, handler_group_ids=[history["group"].pk], category="")
    assert sum(sum(counts([r], r["day"])) for r in mine) == 8  # 4 tickets × 2 clocks
