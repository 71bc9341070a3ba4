from datetime import timedelta

import pytest

from config.errors import ConflictError
from sla.models import ClockSegment
from sla.services import sla_pause, sla_resume
from tests.sla.conftest import T0
from workflow import services

pytestmark = pytest.mark.django_db


def test_pause_and_resume_move_the_resolve_deadline_by_the_paused_time(approved, people, rule):
    ticket = approved()
    handler = people["handler"]
    services.ticket_accept(ticket_id=ticket.pk, handler=handler, now=T0 + timedelta(minutes=10))
    paused = sla_pause(ticket_id=ticket.pk, user=handler, now=T0 + timedelta(hours=1))
    assert paused.sla_paused and paused.sla_paused_at == T0 + timedelta(hours=1)
    resumed = sla_resume(ticket_id=ticket.pk, user=handler, now=T0 + timedelta(hours=3))
    assert not resumed.sla_paused
    assert resumed.resolve_deadline == T0 + timedelta(hours=6)  # 4 h + 2 h paused
    assert resumed.response_deadline == T0 + timedelta(hours=1)  # never paused
    kinds = list(
        ClockSegment.objects.filter(ticket=ticket, clock="resolve").values_list("kind", flat=True)
    )
    assert kinds == ["start", "pause", "resume"]
    assert [r.action for r in ticket.records.all()][-2:] == ["sla_pause", "sla_resume"]


def test_pause_in_business_time_moves_by_business_time_only(approved, people, office_hours):
    from datetime import UTC, datetime

    from sla.models import SlaRule

    SlaRule.objects.create(name="biz", priority=2, resolve_hours=8, calendar=office_hours, sort=1)
    monday = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)  # 09:00 Berlin
    ticket = approved(priority=2, submitted=monday)
    # 8 business hours from Mon 09:00 → Mon 18:00 Berlin (17:00 UTC)
    assert ticket.resolve_deadline == datetime(2026, 3, 2, 17, 0, tzinfo=UTC)
    handler = people["handler"]
    # Paused from Mon 17:00 Berlin to Tue 10:00 Berlin: 1 h Monday + 1 h Tuesday business time
    sla_pause(ticket_id=ticket.pk, user=handler, now=datetime(2026, 3, 2, 16, 0, tzinfo=UTC))
    resumed = sla_resume(
        ticket_id=ticket.pk, user=handler, now=datetime(2026, 3, 3, 9, 0, tzinfo=UTC)
    )
    # 7 h ran before the pause, 1 h left from Tue 10:00 → Tue 11:00 Berlin (10:00 UTC)
    assert resumed.resolve_deadline == datetime(2026, 3, 3, 10, 0, tzinfo=UTC)


def test_pausing_twice_or_resuming_a_running_clock_is_a_conflict(approved, people, rule):
    ticket = approved()
    with pytest.raises(ConflictError):
        sla_resume(ticket_id=ticket.pk, user=people["handler"])
    sla_pause(ticket_id=ticket.pk, user=people["handler"])
    with pytest.raises(ConflictError):
        sla_pause(ticket_id=ticket.pk, user=people["handler"])


def test_applicant_public_reply_resumes_the_clock(approved, people, rule):
    ticket = approved()
    sla_pause(ticket_id=ticket.pk, user=people["handler"], now=T0 + timedelta(hours=1))
    services.ticket_reply(
        ticket_id=ticket.pk,
        author=people["applicant"],
        reply_type=1,
        content="here is the log",
        now=T0 + timedelta(hours=2),
    )
    ticket.refresh_from_db()
    assert not ticket.sla_paused
    assert ticket.resolve_deadline == T0 + timedelta(hours=5)


def test_pause_api(api, approved, people, rule):
    ticket = approved()
    client = api.as_user(people["handler"])
    assert client.post(f"/api/tickets/{ticket.pk}/pause/").json()["sla_paused"] is True
    assert client.post(f"/api/tickets/{ticket.pk}/pause/").status_code == 409
    assert client.post(f"/api/tickets/{ticket.pk}/resume/").json()["sla_paused"] is False
    applicant = api.as_user(people["applicant"])
    assert applicant.post(f"/api/tickets/{ticket.pk}/pause/").status_code == 403


def test_completion_records_the_final_outcome(api, approved, people, rule):
    def services_api_detail(ticket):
        return api.as_user(people["applicant"]).get(f"/api/tickets/{ticket.pk}/").json()

    ticket = approved()
    handler = people["handler"]
    services.ticket_accept(ticket_id=ticket.pk, handler=handler, now=T0 + timedelta(minutes=30))
    sla_pause(ticket_id=ticket.pk, user=handler, now=T0 + timedelta(hours=1))
    sla_resume(ticket_id=ticket.pk, user=handler, now=T0 + timedelta(hours=2))
    services.ticket_complete(ticket_id=ticket.pk, handler=handler, now=T0 + timedelta(hours=3))
    outcome = ticket.sla_outcome
    assert outcome.response_minutes == 30
    assert outcome.resolve_minutes == 120  # 3 h elapsed − 1 h paused
    assert outcome.response_met is True and outcome.resolve_met is True
    api_body = services_api_detail(ticket)
    assert api_body["sla_outcome"]["resolve_minutes"] == "120.00"


def test_late_completion_is_a_breach(approved, people, rule):
    ticket = approved()
    handler = people["handler"]
    services.ticket_accept(ticket_id=ticket.pk, handler=handler, now=T0 + timedelta(hours=2))
    services.ticket_complete(ticket_id=ticket.pk, handler=handler, now=T0 + timedelta(hours=5))
    ticket.refresh_from_db()
    assert ticket.sla_outcome.response_met is False
    assert ticket.sla_outcome.resolve_met is False


def test_completing_while_paused_stops_the_clock_at_completion(approved, people, rule):
    ticket = approved()
    handler = people["handler"]
    services.ticket_accept(ticket_id=ticket.pk, handler=handler, now=T0 + timedelta(minutes=5))
    sla_pause(ticket_id=ticket.pk, user=handler, now=T0 + timedelta(hours=1))
    done = services.ticket_complete(
        ticket_id=ticket.pk, handler=handler, now=T0 + timedelta(hours=10)
    )
    assert done.sla_paused is False
    outcome = done.sla_outcome
    assert outcome.resolve_minutes == 60
    assert outcome.resolve_met is True


def test_a_transfer_does_not_restart_the_response_clock(approved, people, rule, staff):
    from sla.scanner import sla_scan
    from tests.factories import UserFactory

    ticket = approved()
    handler = people["handler"]
    services.ticket_accept(ticket_id=ticket.pk, handler=handler, now=T0 + timedelta(minutes=10))
    other = UserFactory(username="other")
    group = people["group"]
    group.member_ids = [handler.pk, other.pk]
    group.save()
    services.ticket_transfer(
        ticket_id=ticket.pk, user=staff, handler_id=other.pk, now=T0 + timedelta(minutes=90)
    )
    result = sla_scan(now=T0 + timedelta(minutes=91))
    assert result.counts["response_timeout"] == 0
    ticket.refresh_from_db()
    assert ticket.responded_time == T0 + timedelta(minutes=10)
