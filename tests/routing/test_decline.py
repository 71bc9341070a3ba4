"""Declining an offer (issue 13, point 2), through HTTP: the agent a ticket is offered or
auto-assigned to turns it down before accepting it; it is routed again without them (for good,
for that ticket), the decline is recorded and counted per agent apart from misses."""

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.utils import timezone

from routing import drain, offers
from routing.models import AssignmentEvent
from tests.factories import HandlerGroupFactory, UserFactory
from ticketing.models import Ticket, TicketRecord, TicketStatus
from workflow import services

pytestmark = pytest.mark.django_db

# What a refused decline must leave as it was.
FIELDS = ("ticket_status", "handler_id", "assigned_time", "accepted_time", "queued_time")


@pytest.fixture
def agents():
    return [UserFactory(username=f"agent{i}") for i in range(3)]


@pytest.fixture
def submit_approve(applicant, approver, on_commit):
    def make(group, now=None):
        ticket = services.ticket_submit(
            creator=applicant,
            title="VPN down",
            content="Cannot connect.",
            priority=2,
            handler_group_id=group.pk,
            now=now,
        )
        with on_commit(execute=True):
            return services.ticket_approve(ticket_id=ticket.pk, approver=approver, now=now)

    return make


@pytest.fixture
def decline(api, on_commit):
    """POST /api/tickets/{id}/decline/ as `user`, running its after-commit work."""

    def post(ticket, user, body=None):
        with on_commit(execute=True):
            return api.as_user(user).post(
                f"/api/tickets/{ticket.pk}/decline/", body or {}, format="json"
            )

    return post


def state(ticket) -> tuple:
    return Ticket.objects.filter(pk=ticket.pk).values_list(*FIELDS).get()


def test_the_offered_agent_declines_and_the_ticket_goes_to_the_next_member(
    agents, submit_approve, decline
):
    group = HandlerGroupFactory(members=agents, assign_strategy=1)
    ticket = submit_approve(group)
    assert ticket.handler_id == agents[0].pk

    response = decline(ticket, agents[0], {"reason": "Not my area: network."})

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["handler_id"] == agents[1].pk
    assert body["ticket_status"] == TicketStatus.PENDING_PROCESS
    records = TicketRecord.objects.filter(ticket_id=ticket.pk, action="decline")
    assert [(r.actor_id, r.from_status, r.to_status) for r in records] == [
        (agents[0].pk, TicketStatus.PENDING_PROCESS, TicketStatus.PENDING_ASSIGN)
    ]
    assert records[0].detail["reason"] == "Not my area: network."
    assert records[0].detail["group_id"] == group.pk
    # A decline is not a miss.
    assert not AssignmentEvent.objects.filter(kind="missed").exists()


def test_the_reason_is_optional(agents, submit_approve, decline):
    group = HandlerGroupFactory(members=agents, assign_strategy=1)
    ticket = submit_approve(group)

    assert decline(ticket, agents[0]).status_code == 200
    assert decline(ticket, agents[1], {"reason": "x" * 500}).status_code == 200

    assert Ticket.objects.get(pk=ticket.pk).handler_id == agents[2].pk


def test_whoever_declined_never_gets_that_ticket_back_even_after_a_drain(
    agents, submit_approve, decline
):
    group = HandlerGroupFactory(members=agents, assign_strategy=1)
    ticket = submit_approve(group)
    for agent in agents:
        assert Ticket.objects.get(pk=ticket.pk).handler_id == agent.pk
        assert decline(ticket, agent).status_code == 200

    # Everyone declined it: it waits in the pool, and drains leave it there.
    assert state(ticket)[:2] == (TicketStatus.PENDING_ASSIGN, None)
    assert drain.drain_group(group_id=group.pk) == 0
    assert state(ticket)[:2] == (TicketStatus.PENDING_ASSIGN, None)
    # Only for that ticket: the next one goes to them as usual.
    assert submit_approve(group).handler_id is not None


def test_declines_and_misses_both_keep_agents_away_from_an_offer(agents, submit_approve, decline):
    group = HandlerGroupFactory(members=agents[:2], assign_strategy=1, offer_timeout_seconds=120)
    now = timezone.now()
    ticket = submit_approve(group, now=now)
    assert ticket.handler_id == agents[0].pk

    assert decline(ticket, agents[0]).status_code == 200
    offered = Ticket.objects.get(pk=ticket.pk)
    assert offered.handler_id == agents[1].pk
    # agent1 lets the offer run out: reclaimed, and agent0 (who declined) is not offered it.
    assert offers.offer_sweep(now=offered.assigned_time + timedelta(seconds=121)) == 1
    assert state(ticket)[:2] == (TicketStatus.PENDING_ASSIGN, None)
    assert drain.drain_group(group_id=group.pk) == 0
    assert state(ticket)[:2] == (TicketStatus.PENDING_ASSIGN, None)


def test_declines_are_counted_per_agent_apart_from_misses(
    agents, submit_approve, decline, api, staff
):
    group = HandlerGroupFactory(members=agents[:2], assign_strategy=1, offer_timeout_seconds=120)
    # Mid-day, so the declines and the misses two minutes later fall on the same day however
    # close to midnight the suite runs.
    with time_machine.travel(datetime(2026, 3, 2, 12, 0, tzinfo=UTC), tick=False):
        now = timezone.now()
        declined = submit_approve(group, now=now)  # offered to agent0, who declines it
        assert decline(declined, agents[0]).status_code == 200  # now offered to agent1
        missed = submit_approve(group, now=now)  # offered to agent0, who lets it run out
        assert missed.handler_id == agents[0].pk
        assert offers.offer_sweep(now=now + timedelta(seconds=121)) == 2

        body = api.as_user(staff).get(f"/api/metrics/assignment/?group={group.pk}").json()

    per_agent = {a["user_id"]: (a["missed"], a["declined"]) for a in body["agents"]}
    # agent0 declined one and missed one; agent1 missed the declined one when its offer ran out.
    assert per_agent == {agents[0].pk: (1, 1), agents[1].pk: (1, 0)}
    assert (body["missed"], body["declined"]) == (2, 1)


def test_another_member_may_not_decline_it(agents, submit_approve, decline):
    group = HandlerGroupFactory(members=agents, assign_strategy=1)
    ticket = submit_approve(group)
    before = state(ticket)

    response = decline(ticket, agents[1], {"reason": "Not mine."})

    assert response.status_code == 409
    assert response.json()["detail"] == (
        "Cannot decline this ticket: it is assigned to another handler."
    )
    assert state(ticket) == before
    assert not TicketRecord.objects.filter(action="decline").exists()


def test_an_accepted_ticket_cannot_be_declined(agents, submit_approve, decline):
    group = HandlerGroupFactory(members=agents, assign_strategy=1)
    ticket = submit_approve(group)
    services.ticket_accept(ticket_id=ticket.pk, handler=agents[0])
    before = state(ticket)

    response = decline(ticket, agents[0])

    assert response.status_code == 409
    assert "accepted already" in response.json()["detail"]
    assert state(ticket) == before
    assert not TicketRecord.objects.filter(action="decline").exists()


def test_a_ticket_in_the_pool_cannot_be_declined(agents, submit_approve, decline):
    group = HandlerGroupFactory(members=agents, assign_strategy=0)  # manual: waits in the pool
    ticket = submit_approve(group)
    before = state(ticket)
    assert before[:2] == (TicketStatus.PENDING_ASSIGN, None)

    response = decline(ticket, agents[0])

    assert response.status_code == 409
    assert "waiting in the pool" in response.json()["detail"]
    assert state(ticket) == before


def test_a_reason_over_500_characters_is_refused(agents, submit_approve, decline):
    group = HandlerGroupFactory(members=agents, assign_strategy=1)
    ticket = submit_approve(group)
    before = state(ticket)

    response = decline(ticket, agents[0], {"reason": "x" * 501})

    assert response.status_code == 400
    assert response.json()["code"] == "invalid_argument"
    assert "reason" in response.json()["errors"]
    assert state(ticket) == before
    assert not TicketRecord.objects.filter(action="decline").exists()


def test_the_applicant_may_not_and_outsiders_cannot_see_it(
    agents, submit_approve, decline, applicant
):
    group = HandlerGroupFactory(members=agents, assign_strategy=1)
    ticket = submit_approve(group)
    other_applicant = UserFactory(username="other_applicant")
    other_member = UserFactory(username="other_member")
    HandlerGroupFactory(members=[other_member], assign_strategy=1)
    before = state(ticket)

    # The applicant sees their ticket but handles nothing in it (access rules: 403).
    assert decline(ticket, applicant).status_code == 403
    assert decline(ticket, other_applicant).status_code == 404
    assert decline(ticket, other_member).status_code == 404
    assert state(ticket) == before


def test_the_decline_button_is_shown_only_to_the_agent_it_is_offered_to(
    agents, submit_approve, client, applicant, staff
):
    group = HandlerGroupFactory(members=agents, assign_strategy=1)
    ticket = submit_approve(group)
    url = f"/console/tickets/{ticket.pk}/"
    decline_url = f"/console/tickets/{ticket.pk}/decline/"

    client.force_login(agents[0])
    page = client.get(url).content.decode()
    assert decline_url in page and ">Decline</button>" in page
    for someone in (agents[1], applicant, staff):
        client.force_login(someone)
        assert decline_url not in client.get(url).content.decode(), someone

    services.ticket_accept(ticket_id=ticket.pk, handler=agents[0])
    client.force_login(agents[0])
    assert decline_url not in client.get(url).content.decode()


def test_the_console_decline_button_routes_the_ticket_to_someone_else(
    agents, submit_approve, client, on_commit
):
    group = HandlerGroupFactory(members=agents, assign_strategy=1)
    ticket = submit_approve(group)
    client.force_login(agents[0])

    with on_commit(execute=True):
        response = client.post(f"/console/tickets/{ticket.pk}/decline/", {"reason": "Away"})

    assert response.status_code == 302
    assert response["Location"] == "/console/"
    assert Ticket.objects.get(pk=ticket.pk).handler_id == agents[1].pk
    record = TicketRecord.objects.get(ticket_id=ticket.pk, action="decline")
    assert (record.actor_id, record.detail["reason"]) == (agents[0].pk, "Away")
    assert f"You declined {ticket.bill_code}" in client.get("/console/").content.decode()


def test_the_console_shows_why_a_decline_was_refused(agents, submit_approve, client):
    group = HandlerGroupFactory(members=agents, assign_strategy=1)
    ticket = submit_approve(group)
    before = state(ticket)

    client.force_login(agents[1])
    refused = client.post(f"/console/tickets/{ticket.pk}/decline/", {"reason": "Not mine"})
    assert refused.status_code == 409
    assert "it is assigned to another handler" in refused.content.decode()

    client.force_login(agents[0])
    too_long = client.post(f"/console/tickets/{ticket.pk}/decline/", {"reason": "x" * 501})
    assert too_long.status_code == 400
    assert state(ticket) == before
