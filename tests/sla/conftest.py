from datetime import UTC, datetime, time
from decimal import Decimal

import pytest

from sla.models import Calendar, SlaRule, WorkingWindow
from tests.factories import ApproverFactory, HandlerGroupFactory, UserFactory
from workflow import services

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)  # a Monday


@pytest.fixture
def office_hours(db) -> Calendar:
    """Mon–Fri 09:00–12:00 and 13:00–18:00 in Europe/Berlin."""
    calendar = Calendar.objects.create(name="Berlin office", timezone="Europe/Berlin")
    for weekday in range(5):
        WorkingWindow.objects.create(
            calendar=calendar, weekday=weekday, start=time(9), end=time(12)
        )
        WorkingWindow.objects.create(
            calendar=calendar, weekday=weekday, start=time(13), end=time(18)
        )
    calendar.save()
    return calendar


@pytest.fixture
def rule(db) -> SlaRule:
    """High priority: respond in 1 h, resolve in 4 h, warn 15 min before; 24×7."""
    return SlaRule.objects.create(
        name="high",
        priority=3,
        response_hours=Decimal("1"),
        resolve_hours=Decimal("4"),
        warn_before_minutes=15,
        sort=10,
    )


@pytest.fixture
def people(db):
    handler = UserFactory(username="handler")
    leader = UserFactory(username="leader")
    group = HandlerGroupFactory(name="desk", members=[handler], leader=leader, assign_strategy=1)
    return {
        "handler": handler,
        "leader": leader,
        "group": group,
        "approver": ApproverFactory(username="approver"),
        "applicant": UserFactory(username="applicant"),
    }


@pytest.fixture
def approved(people):
    """approved(priority=3, submitted=T0, approved=T0, group=True) → ticket."""

    def make(priority=3, category="", submitted=T0, approved_at=None, group=True):
        ticket = services.ticket_submit(
            creator=people["applicant"],
            title="Broken",
            content="c",
            priority=priority,
            category=category,
            handler_group_id=people["group"].pk if group else None,
            now=submitted,
        )
        return services.ticket_approve(
            ticket_id=ticket.pk, approver=people["approver"], now=approved_at or submitted
        )

    return make
