"""An assignment tells its agent in its own transaction: the notice commits with it or not
at all, exactly once; the routing sweep tells of events a version that notified after commit
left unnotified."""

from datetime import timedelta

import pytest
from django.db import ProgrammingError
from django.utils import timezone

from notifications import sending
from notifications.models import Notification, NotifyTemplate
from routing import notices
from routing.models import AssignmentEvent
from tests.factories import ApproverFactory, HandlerGroupFactory, UserFactory
from ticketing.models import ProcessStatus, TicketStatus
from workflow import services


@pytest.fixture
def team(db):
    agents = [UserFactory(username=f"agent{i}") for i in range(2)]
    return agents, HandlerGroupFactory(members=agents, assign_strategy=1)


def submit(group, applicant):
    return services.ticket_submit(
        creator=applicant, title="t", content="c", priority=2, handler_group_id=group.pk
    )


def test_an_approval_tells_the_agent_once_in_the_assignments_own_transaction(team):
    agents, group = team
    ticket = services.ticket_approve(
        ticket_id=submit(group, UserFactory()).pk, approver=ApproverFactory()
    )
    notes = Notification.objects.filter(recipient_id=ticket.handler_id, ticket_id=ticket.pk)
    assert [n.template_code for n in notes] == ["ticket-assigned"]
    event = AssignmentEvent.objects.get(ticket_id=ticket.pk)
    assert event.notified
    assert notices.send_assignment_notice(event_id=event.pk) is False  # never twice
    assert notices.notice_sweep(now=timezone.now() + timedelta(minutes=5)) == 0
    assert notes.count() == 1


def unnotified(ticket):
    """What a version that told the agent after commit left when its process died in
    between: the assignment committed, its event unnotified, no notice."""
    Notification.objects.filter(ticket_id=ticket.pk).delete()
    AssignmentEvent.objects.filter(ticket_id=ticket.pk).update(notified=False)
    return AssignmentEvent.objects.get(ticket_id=ticket.pk)


def test_an_event_left_unnotified_is_told_by_the_sweep_exactly_once(team):
    agents, group = team
    ticket = services.ticket_approve(
        ticket_id=submit(group, UserFactory()).pk, approver=ApproverFactory()
    )
    event = unnotified(ticket)
    # Not yet: a notice on its way after commit gets a grace period.
    assert notices.notice_sweep(now=event.created + timedelta(seconds=5)) == 0
    later = event.created + timedelta(seconds=30)
    assert notices.notice_sweep(now=later) == 1
    assert notices.notice_sweep(now=later) == 0
    notes = Notification.objects.filter(recipient_id=ticket.handler_id, ticket_id=ticket.pk)
    assert [n.template_code for n in notes] == ["ticket-assigned"]


def test_a_notice_that_cannot_be_written_takes_the_assignment_with_it(team, monkeypatch):
    """The notice is written in the assignment's transaction: if writing it fails, nothing of
    the approval stays (no assignment without its notice, no notice without its
    assignment)."""
    agents, group = team
    ticket = submit(group, UserFactory())
    monkeypatch.setattr(
        sending,
        "INSERT_ONCE_SQL",
        sending.INSERT_ONCE_SQL.replace("oa_notification", "oa_no_such_table"),
    )
    with pytest.raises(ProgrammingError):
        services.ticket_approve(ticket_id=ticket.pk, approver=ApproverFactory())
    ticket.refresh_from_db()
    assert (ticket.process_status, ticket.ticket_status, ticket.handler_id) == (
        ProcessStatus.APPROVING,
        TicketStatus.SUBMITTED,
        None,
    )
    assert not AssignmentEvent.objects.filter(ticket_id=ticket.pk).exists()
    assert not Notification.objects.filter(ticket_id=ticket.pk).exists()


def test_a_template_that_cannot_render_never_fails_the_assignment(team):
    agents, group = team
    NotifyTemplate.objects.filter(code="ticket-assigned").update(content="{{missing}}")
    ticket = services.ticket_approve(
        ticket_id=submit(group, UserFactory()).pk, approver=ApproverFactory()
    )
    assert ticket.handler_id == agents[0].pk
    assert AssignmentEvent.objects.get(ticket_id=ticket.pk).notified  # nothing left to tell
    assert not Notification.objects.filter(ticket_id=ticket.pk).exists()


def test_a_stale_notice_is_not_sent_when_the_ticket_moved_on(team):
    agents, group = team
    ticket = services.ticket_approve(
        ticket_id=submit(group, UserFactory()).pk, approver=ApproverFactory()
    )
    services.ticket_accept(ticket_id=ticket.pk, handler=ticket.handler)
    services.ticket_complete(ticket_id=ticket.pk, handler=ticket.handler)
    event = unnotified(ticket)
    # Still its handler, still the same assignment: the agent is told (late, but true).
    assert notices.send_assignment_notice(event_id=event.pk) is True
    other = services.ticket_approve(
        ticket_id=submit(group, UserFactory()).pk, approver=ApproverFactory()
    )
    moved = unnotified(other)
    leader = UserFactory(username="lead")
    group.leader = leader
    group.save()
    services.ticket_transfer(ticket_id=other.pk, user=leader, handler_id=agents[0].pk)
    assert notices.send_assignment_notice(event_id=moved.pk) is False
    assert (
        not Notification.objects.filter(
            ticket_id=other.pk, template_code="ticket-assigned", recipient_id=moved.user_id
        )
        .exclude(recipient_id=agents[0].pk)
        .exists()
    )


def test_the_offer_notice_goes_with_the_assignment_too(db):
    agent = UserFactory(username="solo")
    group = HandlerGroupFactory(members=[agent], assign_strategy=1, offer_timeout_seconds=120)
    ticket = services.ticket_approve(
        ticket_id=submit(group, UserFactory()).pk, approver=ApproverFactory()
    )
    assert ticket.handler_id == agent.pk
    notes = Notification.objects.filter(recipient=agent, ticket_id=ticket.pk)
    assert [n.template_code for n in notes] == ["ticket-offered"]
