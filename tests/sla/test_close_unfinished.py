"""A ticket closed while still being handled has its clocks finalised at the close: a clock
stopped in time is met, one still running is breached if past its deadline by then, otherwise
closed before due; the report counts that category. Rule: respond in 1 h, resolve in 4 h,
24×7 (tests/sla/conftest.py)."""

from datetime import timedelta

import pytest
import time_machine
from django.forms.models import model_to_dict

from sla.models import ClockResult, ClockSegment, SlaOutcome
from sla.services import sla_pause
from tests.factories import UserFactory
from tests.sla.conftest import T0
from ticketing.models import Ticket, TicketStatus
from workflow import services

pytestmark = pytest.mark.django_db

WINDOW = {"from": "2026-03-01T00:00:00Z", "to": "2026-03-31T00:00:00Z"}


def close_over_http(api, user, ticket, at):
    """POST /api/tickets/{id}/close/ as `user` at the instant `at`."""
    with time_machine.travel(at, tick=False):
        return api.as_user(user).post(f"/api/tickets/{ticket.pk}/close/")


def test_closing_a_processing_ticket_past_its_resolve_deadline_breaches_it(
    api, approved, people, rule
):
    ticket = approved()
    services.ticket_accept(
        ticket_id=ticket.pk, handler=people["handler"], now=T0 + timedelta(minutes=30)
    )
    response = close_over_http(api, people["applicant"], ticket, T0 + timedelta(hours=5))
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["ticket_status"] == TicketStatus.CLOSED
    assert body["sla_outcome"]["response_met"] is True
    assert body["sla_outcome"]["resolve_met"] is False

    outcome = SlaOutcome.objects.get(ticket=ticket)
    assert outcome.response_result == ClockResult.MET  # accepted in time
    assert outcome.resolve_result == ClockResult.BREACHED  # 5 h > 4 h at the close
    assert (outcome.response_met, outcome.resolve_met) == (True, False)
    assert outcome.closed_before_completion is True
    assert outcome.completed_time == T0 + timedelta(hours=5)  # finalised at the close
    assert outcome.response_minutes == 30
    assert outcome.resolve_minutes == 300
    assert outcome.rule == rule
    closed = Ticket.objects.get(pk=ticket.pk)
    assert closed.closed_time == T0 + timedelta(hours=5) and closed.completed_time is None


def test_an_unanswered_ticket_closed_past_its_response_deadline_breaches_only_that_clock(
    api, approved, people, rule
):
    ticket = approved()  # left in the pool: nobody accepts it
    response = close_over_http(api, people["applicant"], ticket, T0 + timedelta(hours=2))
    assert response.status_code == 200, response.json()
    outcome = SlaOutcome.objects.get(ticket=ticket)
    assert outcome.response_result == ClockResult.BREACHED  # 2 h > 1 h, never answered
    assert outcome.resolve_result == ClockResult.CLOSED_BEFORE_DUE  # 2 h < 4 h
    assert (outcome.response_met, outcome.resolve_met) == (False, None)
    assert (outcome.response_minutes, outcome.resolve_minutes) == (120, 120)


def test_closing_before_any_deadline_is_closed_before_due_not_a_breach(
    api, approved, people, rule, staff
):
    ticket = approved()
    response = close_over_http(api, people["applicant"], ticket, T0 + timedelta(minutes=20))
    assert response.status_code == 200, response.json()
    body = response.json()["sla_outcome"]
    assert (body["response_met"], body["resolve_met"]) == (None, None)

    outcome = SlaOutcome.objects.get(ticket=ticket)
    assert outcome.response_result == ClockResult.CLOSED_BEFORE_DUE
    assert outcome.resolve_result == ClockResult.CLOSED_BEFORE_DUE
    assert outcome.closed_before_completion is True
    assert (outcome.response_minutes, outcome.resolve_minutes) == (20, 20)

    report = api.as_user(staff).get("/api/sla/report/", WINDOW)
    assert report.status_code == 200, report.json()
    (row,) = report.json()["rows"]
    assert row["count"] == 1
    assert row["closed_before_completion"] == 1
    assert row["response_closed_before_due"] == row["resolve_closed_before_due"] == 1
    assert row["response_breaches"] == row["resolve_breaches"] == 0
    # Nothing was met or breached: no rate to give (not 0 %), and no duration to report.
    assert row["response_breach_rate"] is None and row["resolve_breach_rate"] is None
    assert row["response_minutes_median"] is None and row["resolve_minutes_median"] is None


def test_closing_while_waiting_on_the_applicant_stops_the_pause_and_excludes_it(
    api, approved, people, rule
):
    ticket = approved()
    handler = people["handler"]
    services.ticket_accept(ticket_id=ticket.pk, handler=handler, now=T0 + timedelta(minutes=10))
    sla_pause(ticket_id=ticket.pk, user=handler, now=T0 + timedelta(hours=1))
    # Six hours after submission, but the resolve clock ran only the first hour.
    response = close_over_http(api, people["applicant"], ticket, T0 + timedelta(hours=6))
    assert response.status_code == 200, response.json()
    assert response.json()["sla_paused"] is False
    outcome = SlaOutcome.objects.get(ticket=ticket)
    assert outcome.resolve_minutes == 60
    assert outcome.resolve_result == ClockResult.CLOSED_BEFORE_DUE
    assert outcome.response_result == ClockResult.MET
    kinds = list(
        ClockSegment.objects.filter(ticket=ticket, clock="resolve").values_list("kind", flat=True)
    )
    assert kinds == ["start", "pause", "stop"]


def test_closing_a_completed_ticket_leaves_its_outcome_as_written_at_completion(
    api, approved, people, rule
):
    ticket = approved()
    handler = people["handler"]
    services.ticket_accept(ticket_id=ticket.pk, handler=handler, now=T0 + timedelta(minutes=30))
    services.ticket_complete(ticket_id=ticket.pk, handler=handler, now=T0 + timedelta(hours=2))
    written = model_to_dict(SlaOutcome.objects.get(ticket=ticket))
    written_pk = SlaOutcome.objects.get(ticket=ticket).pk
    assert written["response_result"] == written["resolve_result"] == ClockResult.MET
    assert written["closed_before_completion"] is False

    # Closed long after the resolve deadline: the outcome must not be re-judged at the close.
    response = close_over_http(api, people["applicant"], ticket, T0 + timedelta(hours=9))
    assert response.status_code == 200, response.json()
    assert response.json()["ticket_status"] == TicketStatus.CLOSED
    (outcome,) = SlaOutcome.objects.filter(ticket=ticket)
    assert outcome.pk == written_pk
    assert model_to_dict(outcome) == written
    assert outcome.completed_time == T0 + timedelta(hours=2)


def test_refused_closes_write_no_outcome_and_change_nothing(api, approved, people, rule):
    ticket = approved()
    before = model_to_dict(Ticket.objects.get(pk=ticket.pk))
    # The handler may not close the applicant's ticket.
    refused = close_over_http(api, people["handler"], ticket, T0 + timedelta(hours=5))
    assert refused.status_code == 403
    assert not SlaOutcome.objects.filter(ticket=ticket).exists()
    assert model_to_dict(Ticket.objects.get(pk=ticket.pk)) == before

    # Closed once before due; a second close later (past every deadline) is a conflict and
    # does not re-judge the clocks.
    assert (
        close_over_http(api, people["applicant"], ticket, T0 + timedelta(minutes=20)).status_code
        == 200
    )
    written = model_to_dict(SlaOutcome.objects.get(ticket=ticket))
    closed = model_to_dict(Ticket.objects.get(pk=ticket.pk))
    again = close_over_http(api, people["applicant"], ticket, T0 + timedelta(hours=9))
    assert again.status_code == 409
    assert model_to_dict(SlaOutcome.objects.get(ticket=ticket)) == written
    assert model_to_dict(Ticket.objects.get(pk=ticket.pk)) == closed
    assert written["resolve_result"] == ClockResult.CLOSED_BEFORE_DUE


def test_a_ticket_awaiting_approval_cannot_be_closed_and_gets_no_outcome(api, people, rule):
    ticket = services.ticket_submit(
        creator=people["applicant"], title="t", content="c", priority=3, now=T0
    )
    refused = close_over_http(api, people["applicant"], ticket, T0 + timedelta(hours=5))
    assert refused.status_code == 409
    assert Ticket.objects.get(pk=ticket.pk).ticket_status == TicketStatus.SUBMITTED
    assert not SlaOutcome.objects.exists()


@pytest.fixture
def mixed(api, approved, people, rule):
    """In March 2026: one ticket completed in time (accepted after 30 min, done after 2 h),
    one closed in processing past its resolve deadline (accepted after 90 min, closed after
    5 h), one closed in the pool before any deadline (after 20 min)."""
    handler = people["handler"]
    done = approved()
    services.ticket_accept(ticket_id=done.pk, handler=handler, now=T0 + timedelta(minutes=30))
    services.ticket_complete(ticket_id=done.pk, handler=handler, now=T0 + timedelta(hours=2))
    late = approved()
    services.ticket_accept(ticket_id=late.pk, handler=handler, now=T0 + timedelta(minutes=90))
    assert (
        close_over_http(api, people["applicant"], late, T0 + timedelta(hours=5)).status_code == 200
    )
    early = approved()
    assert (
        close_over_http(api, people["applicant"], early, T0 + timedelta(minutes=20)).status_code
        == 200
    )
    return people


def test_report_counts_closed_unfinished_tickets(api, mixed, staff):
    response = api.as_user(staff).get("/api/sla/report/", {**WINDOW, "group_by": "group"})
    assert response.status_code == 200, response.json()
    (row,) = response.json()["rows"]
    assert row["key"] == mixed["group"].pk
    assert row["count"] == 3
    assert row["closed_before_completion"] == 2
    # Response: met (30 min), breached (answered after 90 min), closed before due.
    assert row["response_breaches"] == 1
    assert row["response_closed_before_due"] == 1
    assert row["response_breach_rate"] == 0.5
    # Resolve: met (2 h), breached at the close (5 h), closed before due.
    assert row["resolve_breaches"] == 1
    assert row["resolve_closed_before_due"] == 1
    assert row["resolve_breach_rate"] == 0.5
    # The 20 minutes of the ticket closed before due are no response or resolution time.
    assert row["response_minutes_median"] == 60  # of 30 and 90
    assert row["resolve_minutes_median"] == 210  # of 120 and 300
    assert row["resolve_minutes_p90"] == pytest.approx(282)


def test_the_report_window_takes_a_closed_ticket_by_its_close_instant(
    api, approved, people, rule, staff
):
    # Submitted in February, closed on March 2: a March outcome.
    ticket = approved(submitted=T0 - timedelta(days=3))
    assert close_over_http(api, people["applicant"], ticket, T0).status_code == 200
    client = api.as_user(staff)
    (row,) = client.get("/api/sla/report/", WINDOW).json()["rows"]
    assert (row["count"], row["response_breaches"], row["resolve_breaches"]) == (1, 1, 1)
    february = client.get("/api/sla/report/", {"from": "2026-02-01", "to": "2026-02-28"})
    assert february.json()["rows"] == []


def test_report_schema_documents_the_new_counts():
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    row = schema["components"]["schemas"]["ReportRow"]
    for field in (
        "closed_before_completion",
        "response_closed_before_due",
        "resolve_closed_before_due",
    ):
        assert row["properties"][field]["type"] == "integer"
        assert field in row["required"]


@pytest.mark.django_db(transaction=True)
def test_the_migration_derives_each_clock_result_from_the_met_booleans():
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    executor.migrate([("sla", "0002_catch_all_rule_and_scan_schedule")])
    old = (
        MigrationExecutor(connection)
        .loader.project_state([("sla", "0002_catch_all_rule_and_scan_schedule")])
        .apps
    )
    Ticket_ = old.get_model("ticketing", "Ticket")
    Outcome = old.get_model("sla", "SlaOutcome")
    applicant = UserFactory(username="old_applicant")
    rows = {}
    for n, (response_met, resolve_met) in enumerate(((True, False), (False, None), (None, True))):
        ticket = Ticket_.objects.create(
            bill_code=f"TK{n}",
            title="t",
            content="c",
            priority=3,
            creator_id=applicant.pk,
            process_status=2,
            ticket_status=4,
            submitted_time=T0,
            completed_time=T0 + timedelta(hours=1),
        )
        rows[ticket.pk] = Outcome.objects.create(
            ticket_id=ticket.pk,
            response_met=response_met,
            resolve_met=resolve_met,
            completed_time=T0 + timedelta(hours=1),
        ).pk

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    results = {
        o.ticket_id: (o.response_result, o.resolve_result, o.closed_before_completion)
        for o in SlaOutcome.objects.filter(pk__in=rows.values())
    }
    assert sorted(results.values()) == sorted(
        [
            ("met", "breached", False),
            ("breached", "none", False),
            ("none", "met", False),
        ]
    )
