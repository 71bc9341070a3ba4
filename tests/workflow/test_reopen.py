"""Reopening a completed ticket (workflow.services.ticket_reopen, POST /api/tickets/{id}/reopen/):
who may (the team at any time, the applicant within REOPEN_DAYS), from which state (completed
only), the resolve clock running on from where it stopped (the time while completed does not
count, the outcome no longer final, the escalation levels re-timed), the handler's load, one
winner of two at once, and who is told, once."""

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from collaboration.models import Watcher, WatcherSource
from notifications.models import Notification
from routing.strategies.candidates import member_rows
from sla import ladder
from sla.escalation import fire_due
from sla.models import ClockSegment, EventState, SlaEvent, SlaOutcome, SlaRule
from sla.rules import set_levels
from tests.concurrency import run_in_parallel
from tests.factories import HandlerGroupFactory, StaffFactory, UserFactory
from tests.sla.conftest import office_hours  # noqa: F401 - a fixture
from ticketing import access
from ticketing.lifecycle import IllegalTransition
from ticketing.models import Ticket, TicketRecord, TicketStatus
from workflow import services

pytestmark = pytest.mark.django_db

MONDAY = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)  # 09:00 in Berlin


@pytest.fixture
def people(db):
    handler = UserFactory(username="handler")
    colleague = UserFactory(username="colleague")
    leader = UserFactory(username="leader")
    group = HandlerGroupFactory(
        name="desk", members=[handler, colleague], leader=leader, assign_strategy=0
    )
    outsider = UserFactory(username="outsider")
    HandlerGroupFactory(name="facilities", members=[outsider], assign_strategy=0)
    return {
        "applicant": UserFactory(username="applicant"),
        "handler": handler,
        "colleague": colleague,
        "leader": leader,
        "group": group,
        "outsider": outsider,
        "watcher": UserFactory(username="watcher"),
        "approver": StaffFactory(username="boss"),
    }


@pytest.fixture
def completed(people):
    """completed(at=…, priority=…) → a ticket accepted by the handler and completed at `at`
    (submitted, approved and accepted just before)."""

    def make(at=None, priority=3, submitted=None):
        at = at or timezone.now()
        submitted = submitted or at - timedelta(hours=1)
        ticket = services.ticket_submit(
            creator=people["applicant"],
            title="VPN down",
            content="c",
            priority=priority,
            handler_group_id=people["group"].pk,
            now=submitted,
        )
        services.ticket_approve(ticket_id=ticket.pk, approver=people["approver"], now=submitted)
        services.ticket_accept(
            ticket_id=ticket.pk, handler=people["handler"], now=submitted + timedelta(minutes=5)
        )
        return services.ticket_complete(ticket_id=ticket.pk, handler=people["handler"], now=at)

    return make


def state(ticket) -> dict:
    """Everything a refused reopen must leave as it was."""
    return {
        "ticket": Ticket.objects.values().get(pk=ticket.pk),
        "records": list(TicketRecord.objects.filter(ticket=ticket).values_list("id", flat=True)),
        "segments": ClockSegment.objects.filter(ticket=ticket).count(),
        "outcome": list(SlaOutcome.objects.filter(ticket=ticket).values()),
        "events": list(SlaEvent.objects.filter(ticket=ticket).values().order_by("id")),
        "notifications": Notification.objects.filter(ticket=ticket).count(),
    }


def reopen_url(ticket) -> str:
    return f"/api/tickets/{ticket.pk}/reopen/"


# --- who may ---------------------------------------------------------------------------------


def test_the_applicant_reopens_within_the_window(api, people, completed):
    ticket = completed(at=timezone.now() - timedelta(days=13))

    response = api.as_user(people["applicant"]).post(
        reopen_url(ticket), {"reason": "It broke again."}, format="json"
    )

    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["ticket_status"] == TicketStatus.PROCESSING
    assert body["completed_time"] is None
    ticket.refresh_from_db()
    assert ticket.ticket_status == TicketStatus.PROCESSING
    assert ticket.handler_id == people["handler"].pk  # the same handler
    assert ticket.completed_time is None
    rec = TicketRecord.objects.filter(ticket=ticket, action="reopen").get()
    assert rec.actor_id == people["applicant"].pk
    assert (rec.from_status, rec.to_status) == (TicketStatus.COMPLETED, TicketStatus.PROCESSING)
    assert rec.detail["reason"] == "It broke again."
    # The applicant's public story says so, with the reason.
    records = api.as_user(people["applicant"]).get(f"/api/tickets/{ticket.pk}/records/").json()
    assert [r["action"] for r in records][-2:] == ["complete", "reopen"]
    assert records[-1]["detail"] == {"field": "ticket_status", "reason": "It broke again."}


def test_the_applicant_is_refused_after_the_window_and_nothing_changes(api, people, completed):
    ticket = completed(at=timezone.now() - timedelta(days=15))
    before = state(ticket)

    response = api.as_user(people["applicant"]).post(reopen_url(ticket), format="json")

    assert response.status_code == 403
    assert response.json()["code"] == "permission_denied"
    assert "within 14 days" in response.json()["detail"]
    assert state(ticket) == before
    assert access.permitted_actions(people["applicant"], ticket)["reopen"] is False


def test_the_window_follows_the_setting(api, people, completed, settings):
    settings.REOPEN_DAYS = 30
    ticket = completed(at=timezone.now() - timedelta(days=20))
    assert api.as_user(people["applicant"]).post(reopen_url(ticket)).status_code == 200


@pytest.mark.parametrize("who", ["handler", "colleague", "leader", "approver"])
def test_the_team_reopens_at_any_time(api, people, completed, who):
    ticket = completed(at=timezone.now() - timedelta(days=90))

    response = api.as_user(people[who]).post(reopen_url(ticket), format="json")

    assert response.status_code == 200, response.json()
    ticket.refresh_from_db()
    assert ticket.ticket_status == TicketStatus.PROCESSING
    assert ticket.handler_id == people["handler"].pk


def test_a_watcher_may_not_reopen_and_an_outsider_does_not_see_the_ticket(api, people, completed):
    ticket = completed()
    Watcher.objects.create(
        ticket=ticket, user=people["watcher"], source=WatcherSource.CC, added=timezone.now()
    )
    before = state(ticket)

    refused = api.as_user(people["watcher"]).post(reopen_url(ticket), format="json")
    hidden = api.as_user(people["outsider"]).post(reopen_url(ticket), format="json")

    assert refused.status_code == 403
    assert hidden.status_code == 404
    assert state(ticket) == before


def test_an_open_ticket_is_a_409_and_nothing_changes(api, people, completed):
    ticket = services.ticket_submit(
        creator=people["applicant"],
        title="t",
        content="c",
        priority=3,
        handler_group_id=people["group"].pk,
    )
    services.ticket_approve(ticket_id=ticket.pk, approver=people["approver"])
    services.ticket_accept(ticket_id=ticket.pk, handler=people["handler"])
    before = state(ticket)

    response = api.as_user(people["handler"]).post(reopen_url(ticket), format="json")

    assert response.status_code == 409
    assert response.json()["code"] == "conflict"
    assert "Cannot reopen this ticket" in response.json()["detail"]
    assert state(ticket) == before


def test_a_closed_ticket_is_a_409_and_nothing_changes(api, people, completed):
    ticket = completed()
    services.ticket_close(ticket_id=ticket.pk, user=people["applicant"])
    before = state(ticket)

    for who in ("applicant", "handler"):
        response = api.as_user(people[who]).post(reopen_url(ticket), format="json")
        assert response.status_code == 409
        assert "'closed'" in response.json()["detail"]
    assert state(ticket) == before


def test_a_reason_too_long_is_a_400_naming_it(api, people, completed):
    ticket = completed()
    before = state(ticket)
    response = api.as_user(people["handler"]).post(
        reopen_url(ticket), {"reason": "x" * 2001}, format="json"
    )
    assert response.status_code == 400
    assert "reason" in response.json()["errors"]
    assert state(ticket) == before


def test_the_rules_for_mail_replies_and_the_window_at_a_given_instant(people, completed):
    at = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
    ticket = completed(at=at)
    Watcher.objects.create(ticket=ticket, user=people["watcher"], source=WatcherSource.CC, added=at)
    for who in ("applicant", "watcher", "handler", "colleague", "leader", "approver"):
        assert access.may("mail_reply", people[who], ticket), who
    assert not access.may("mail_reply", people["outsider"], ticket)
    applicant = people["applicant"]
    assert access.can_reopen(applicant, ticket, now=at + timedelta(days=14))
    assert not access.can_reopen(applicant, ticket, now=at + timedelta(days=14, seconds=1))
    assert access.can_reopen(people["handler"], ticket, now=at + timedelta(days=400))
    assert not access.can_reopen(people["watcher"], ticket, now=at)


# --- the SLA ---------------------------------------------------------------------------------


@pytest.fixture
def office_rule(office_hours):  # noqa: F811 - the fixture imported above
    """High priority: resolve in 8 business hours (Berlin office hours), one resolve level
    30 minutes before the deadline to the handler."""
    rule = SlaRule.objects.create(
        name="office", priority=3, resolve_hours=Decimal(8), calendar=office_hours, sort=1
    )
    set_levels(rule, [ladder.Level(1, "resolve", ladder.MINUTES_BEFORE, Decimal(30), ("handler",))])
    return rule


def test_the_resolve_clock_runs_on_from_where_it_stopped(people, completed, office_rule):
    # Submitted Mon 09:00 Berlin: 8 business hours → Mon 18:00 Berlin (17:00 UTC).
    # Completed Mon 12:00 Berlin, after 3 business hours.
    ticket = completed(at=MONDAY + timedelta(hours=3), submitted=MONDAY)
    assert ticket.resolve_deadline == datetime(2026, 3, 2, 17, 0, tzinfo=UTC)
    assert SlaOutcome.objects.get(ticket=ticket).resolve_minutes == Decimal("180.00")
    # The level's moment (Mon 17:30 Berlin) passes while completed: void, the clock stood.
    fire_due(now=datetime(2026, 3, 2, 16, 31, tzinfo=UTC))
    level = SlaEvent.objects.get(ticket=ticket, clock="resolve")
    assert level.state == EventState.VOID

    # Reopened Tue 10:00 Berlin: Mon 13–18 and Tue 9–10 (6 business hours) do not count.
    reopened = services.ticket_reopen(
        ticket_id=ticket.pk, user=people["applicant"], now=datetime(2026, 3, 3, 9, 0, tzinfo=UTC)
    )

    # 5 hours left from Tue 10:00 Berlin: Tue 10–12 and 13–16 → Tue 16:00 Berlin (15:00 UTC),
    # the old deadline plus the 6 business hours the ticket was completed for.
    deadline = datetime(2026, 3, 3, 15, 0, tzinfo=UTC)
    assert reopened.resolve_deadline == deadline
    ticket.refresh_from_db()
    assert ticket.resolve_deadline == deadline and not ticket.resolve_timeout
    assert not SlaOutcome.objects.filter(ticket=ticket).exists()  # no longer final
    level.refresh_from_db()
    assert level.state == EventState.PENDING
    assert level.due_at == deadline - timedelta(minutes=30)
    resumed = TicketRecord.objects.filter(ticket=ticket, action="sla_resume").get()
    assert resumed.detail["reopen"] is True
    assert resumed.detail["resolve_deadline"] == deadline.isoformat()

    # Completed again Tue 12:00 Berlin: 3 h on Monday and 2 h on Tuesday, the gap excluded.
    services.ticket_complete(
        ticket_id=ticket.pk, handler=people["handler"], now=datetime(2026, 3, 3, 11, 0, tzinfo=UTC)
    )
    outcome = SlaOutcome.objects.get(ticket=ticket)
    assert outcome.resolve_minutes == Decimal("300.00")
    assert outcome.resolve_met is True
    assert outcome.completed_time == datetime(2026, 3, 3, 11, 0, tzinfo=UTC)


def test_a_level_fires_after_the_reopen_at_its_moved_moment(people, completed, office_rule):
    ticket = completed(at=MONDAY + timedelta(hours=3), submitted=MONDAY)
    fire_due(now=datetime(2026, 3, 2, 16, 31, tzinfo=UTC))  # void while completed
    services.ticket_reopen(
        ticket_id=ticket.pk, user=people["handler"], now=datetime(2026, 3, 3, 9, 0, tzinfo=UTC)
    )
    assert fire_due(now=datetime(2026, 3, 3, 14, 29, tzinfo=UTC))["resolve_warn"] == 0
    assert fire_due(now=datetime(2026, 3, 3, 14, 30, tzinfo=UTC))["resolve_warn"] == 1
    assert SlaEvent.objects.get(ticket=ticket, clock="resolve").state == EventState.FIRED


def test_a_ticket_completed_while_waiting_on_the_applicant_counts_neither_gap(
    people, completed, office_rule
):
    from sla.services import sla_pause

    ticket = services.ticket_submit(
        creator=people["applicant"],
        title="t",
        content="c",
        priority=3,
        handler_group_id=people["group"].pk,
        now=MONDAY,
    )
    services.ticket_approve(ticket_id=ticket.pk, approver=people["approver"], now=MONDAY)
    services.ticket_accept(ticket_id=ticket.pk, handler=people["handler"], now=MONDAY)
    # Runs Mon 9–10 Berlin, waits on the applicant from 10, completed at 12 while waiting.
    sla_pause(ticket_id=ticket.pk, user=people["handler"], now=MONDAY + timedelta(hours=1))
    services.ticket_complete(
        ticket_id=ticket.pk, handler=people["handler"], now=MONDAY + timedelta(hours=3)
    )
    assert SlaOutcome.objects.get(ticket=ticket).resolve_minutes == Decimal("60.00")
    services.ticket_reopen(
        ticket_id=ticket.pk, user=people["handler"], now=datetime(2026, 3, 3, 8, 0, tzinfo=UTC)
    )
    # Completed again Tue 10:00 Berlin: one more hour ran (Tue 9–10), two in all.
    services.ticket_complete(
        ticket_id=ticket.pk, handler=people["handler"], now=datetime(2026, 3, 3, 9, 0, tzinfo=UTC)
    )
    assert SlaOutcome.objects.get(ticket=ticket).resolve_minutes == Decimal("120.00")
    kinds = list(
        ClockSegment.objects.filter(ticket=ticket, clock="resolve").values_list("kind", flat=True)
    )
    assert kinds == ["start", "pause", "stop", "pause", "resume"]


# --- the handler's load ------------------------------------------------------------------------


def test_the_handlers_active_load_goes_back_up(people, completed):
    group, handler = people["group"], people["handler"]
    ticket = completed()

    def active() -> int:
        (row,) = member_rows(group=group, member_ids=[handler.pk], now=timezone.now())
        return row.active

    assert active() == 0
    services.ticket_reopen(ticket_id=ticket.pk, user=people["applicant"])
    assert active() == 1
    services.ticket_complete(ticket_id=ticket.pk, handler=handler)
    assert active() == 0


# --- who is told -------------------------------------------------------------------------------


def inbox(ticket, template_code) -> list[str]:
    return sorted(
        Notification.objects.filter(ticket=ticket, template_code=template_code).values_list(
            "recipient__username", flat=True
        )
    )


def test_the_applicants_reopen_tells_the_handler_and_the_watchers(people, completed):
    ticket = completed()
    Watcher.objects.create(
        ticket=ticket, user=people["watcher"], source=WatcherSource.CC, added=timezone.now()
    )
    # The handler watches too: they read one message, not two.
    Watcher.objects.create(
        ticket=ticket, user=people["handler"], source=WatcherSource.SELF, added=timezone.now()
    )
    services.ticket_reopen(ticket_id=ticket.pk, user=people["applicant"], reason="Still down.")

    assert inbox(ticket, "ticket-reopened") == ["handler"]
    message = Notification.objects.get(ticket=ticket, template_code="ticket-reopened")
    assert message.title == f"{ticket.bill_code} is reopened"
    assert "applicant reopened ticket" in message.content
    assert message.params["body"] == "Still down."
    status = Notification.objects.filter(
        ticket=ticket, template_code="ticket-status-changed", params__status="reopened"
    )
    assert [n.recipient.username for n in status] == ["watcher"]


def test_the_teams_reopen_tells_the_applicant_and_the_handler(people, completed):
    ticket = completed()
    services.ticket_reopen(ticket_id=ticket.pk, user=people["leader"])
    assert inbox(ticket, "ticket-reopened") == ["applicant", "handler"]


def test_completed_again_the_applicant_is_told_again(people, completed):
    ticket = completed(at=timezone.now() - timedelta(hours=1))
    services.ticket_reopen(ticket_id=ticket.pk, user=people["applicant"])
    services.ticket_complete(ticket_id=ticket.pk, handler=people["handler"])
    assert inbox(ticket, "ticket-completed") == ["applicant", "applicant"]
    # Asked how it went once only: the survey of the first completion stays.
    assert Notification.objects.filter(ticket=ticket, template_code="ticket-survey").count() == 1


# --- two at once -------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_two_reopens_at_once_one_wins_and_everyone_is_told_once(people, completed):
    for _round in range(3):
        ticket = completed()
        results = run_in_parallel(
            [
                lambda t=ticket: services.ticket_reopen(ticket_id=t.pk, user=people["applicant"]),
                lambda t=ticket: services.ticket_reopen(ticket_id=t.pk, user=people["leader"]),
            ]
        )
        won = [r for r in results if isinstance(r, Ticket)]
        lost = [r for r in results if isinstance(r, IllegalTransition)]
        assert len(won) == 1 and len(lost) == 1, results
        ticket.refresh_from_db()
        assert ticket.ticket_status == TicketStatus.PROCESSING
        assert TicketRecord.objects.filter(ticket=ticket, action="reopen").count() == 1
        kinds = list(
            ClockSegment.objects.filter(ticket=ticket, clock="resolve").values_list(
                "kind", flat=True
            )
        )
        assert kinds.count("pause") == 1 and kinds.count("resume") == 1
        told = Notification.objects.filter(ticket=ticket, template_code="ticket-reopened")
        recipients = list(told.values_list("recipient__username", flat=True))
        assert sorted(recipients) == sorted(set(recipients))  # nobody twice
        assert "handler" in recipients
