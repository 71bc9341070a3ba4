"""An approval tells the assigned agent after its transaction commits, outside the group lock —
exactly once, with the routing sweep as the backstop when the process dies in between."""

from datetime import timedelta

import pytest
from django.utils import timezone

from notifications.models import Notification
from routing import notices
from routing.models import AssignmentEvent
from tests.factories import ApproverFactory, HandlerGroupFactory, UserFactory
from ticketing import services


@pytest.fixture
def team(db):
    agents = [UserFactory(username=f"agent{i}") for i in range(2)]
    return agents, HandlerGroupFactory(members=agents, assign_strategy=1)


def submit(group, applicant):
    return services.ticket_submit(
        creator=applicant, title="t", content="c", priority=2, handler_group_id=group.pk
    )


def test_an_approval_tells_the_agent_once_after_commit(team):
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


def test_a_notice_lost_after_commit_is_sent_by_the_sweep_exactly_once(team, monkeypatch):
    agents, group = team

    def crash(**kwargs):
        raise RuntimeError("process died between commit and notice")

    monkeypatch.setattr(services, "send_assignment_notice", crash)
    ticket = services.ticket_approve(
        ticket_id=submit(group, UserFactory()).pk, approver=ApproverFactory()
    )
    assert ticket.handler_id is not None  # the approval stands
    event = AssignmentEvent.objects.get(ticket_id=ticket.pk)
    assert not event.notified
    assert not Notification.objects.filter(ticket_id=ticket.pk).exists()
    # Not yet: a notice on its way after commit gets a grace period.
    assert notices.notice_sweep(now=event.created + timedelta(seconds=5)) == 0
    later = event.created + timedelta(seconds=30)
    assert notices.notice_sweep(now=later) == 1
    assert notices.notice_sweep(now=later) == 0
    notes = Notification.objects.filter(recipient_id=ticket.handler_id, ticket_id=ticket.pk)
    assert [n.template_code for n in notes] == ["ticket-assigned"]


def test_a_stale_notice_is_not_sent_when_the_ticket_moved_on(team, monkeypatch):
    agents, group = team
    monkeypatch.setattr(services, "send_assignment_notice", lambda **kwargs: None)
    ticket = services.ticket_approve(
        ticket_id=submit(group, UserFactory()).pk, approver=ApproverFactory()
    )
    services.ticket_accept(ticket_id=ticket.pk, handler=ticket.handler)
    services.ticket_complete(ticket_id=ticket.pk, handler=ticket.handler)
    event = AssignmentEvent.objects.get(ticket_id=ticket.pk)
    # Still its handler, still the same assignment: the agent is told (late, but true).
    assert notices.send_assignment_notice(event_id=event.pk) is True
    other = services.ticket_approve(
        ticket_id=submit(group, UserFactory()).pk, approver=ApproverFactory()
    )
    leader = UserFactory(username="lead")
    group.leader = leader
    group.save()
    services.ticket_transfer(ticket_id=other.pk, user=leader, handler_id=agents[0].pk)
    moved = AssignmentEvent.objects.get(ticket_id=other.pk)
    assert notices.send_assignment_notice(event_id=moved.pk) is False
    assert (
        not Notification.objects.filter(
            ticket_id=other.pk, template_code="ticket-assigned", recipient_id=moved.user_id
        )
        .exclude(recipient_id=agents[0].pk)
        .exists()
    )


def test_the_offer_notice_is_deferred_too(db):
    agent = UserFactory(username="solo")
    group = HandlerGroupFactory(members=[agent], assign_strategy=1, offer_timeout_seconds=120)
    ticket = services.ticket_approve(
        ticket_id=submit(group, UserFactory()).pk, approver=ApproverFactory()
    )
    assert ticket.handler_id == agent.pk
    notes = Notification.objects.filter(recipient=agent, ticket_id=ticket.pk)
    assert [n.template_code for n in notes] == ["ticket-offered"]
