"""Links under real parallel connections: two parents given to one child at once leave one;
two tickets made each other's parent at once leave one link; two links that would close a
cycle of four tickets only together leave one; and a child added while its parent is being
completed is never missed by the completion."""

import pytest
from rest_framework.test import APIClient

from collaboration.models import TicketLink
from tests.concurrency import run_in_parallel
from tests.factories import HandlerGroupFactory, UserFactory
from ticketing.models import Ticket, TicketRecord
from workflow import services


@pytest.fixture
def desk(transactional_db):
    agent = UserFactory(username="agent")
    applicant = UserFactory(username="applicant")
    approver = UserFactory(username="approver", is_staff=True)
    group = HandlerGroupFactory(name="desk", members=[agent], assign_strategy=0)

    def work(title):
        ticket = services.ticket_submit(
            creator=applicant, title=title, content="c", priority=2, handler_group_id=group.pk
        )
        services.ticket_approve(ticket_id=ticket.pk, approver=approver)
        services.ticket_accept(ticket_id=ticket.pk, handler=agent)
        return Ticket.objects.get(pk=ticket.pk)

    return {"agent": agent, "work": work}


def _client(user) -> APIClient:
    from knox.models import AuthToken

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {AuthToken.objects.create(user=user)[1]}")
    return client


def _adding(user, ticket, other, kind):
    def call():
        response = _client(user).post(
            f"/api/tickets/{ticket.pk}/links/", {"ticket": other.pk, "kind": kind}, format="json"
        )
        return response.status_code

    return call


@pytest.mark.parametrize("round_", range(3))
def test_two_parents_given_to_one_child_at_once_leave_one(desk, round_):
    child, first, second = desk["work"]("child"), desk["work"]("p1"), desk["work"]("p2")
    agent = desk["agent"]
    codes = run_in_parallel(
        [_adding(agent, child, first, "parent"), _adding(agent, second, child, "child")]
    )
    assert sorted(codes) == [201, 400]
    assert TicketLink.objects.filter(source=child, kind="parent").count() == 1
    assert TicketRecord.objects.filter(action="link_added").count() == 2


@pytest.mark.parametrize("round_", range(3))
def test_two_tickets_made_each_others_parent_at_once_leave_one_link(desk, round_):
    a, b = desk["work"]("A"), desk["work"]("B")
    agent = desk["agent"]
    codes = run_in_parallel([_adding(agent, a, b, "parent"), _adding(agent, b, a, "parent")])
    assert sorted(codes) == [201, 400]
    assert TicketLink.objects.count() == 1


@pytest.mark.parametrize("round_", range(3))
def test_two_links_that_close_a_cycle_of_four_only_together_leave_one(desk, round_):
    """X's parent is Y and Z's is W; making Z Y's parent and X W's parent at once would give
    X -> Y -> Z -> W -> X, though the two additions lock no ticket in common."""
    work, agent = desk["work"], desk["agent"]
    x, y, z, w = work("X"), work("Y"), work("Z"), work("W")
    assert _adding(agent, x, y, "parent")() == 201
    assert _adding(agent, z, w, "parent")() == 201
    codes = run_in_parallel([_adding(agent, y, z, "parent"), _adding(agent, w, x, "parent")])
    assert sorted(codes) == [201, 400]
    assert TicketLink.objects.count() == 3


@pytest.mark.parametrize("round_", range(3))
def test_a_child_added_while_its_parent_is_completed_is_seen_or_comes_after(desk, round_):
    parent, child = desk["work"]("whole"), desk["work"]("part")
    agent = desk["agent"]

    def complete():
        return _client(agent).post(f"/api/tickets/{parent.pk}/complete/").status_code

    link_code, complete_code = run_in_parallel([_adding(agent, parent, child, "child"), complete])
    assert link_code == 201
    parent.refresh_from_db()
    if complete_code == 409:  # the link came first: the completion saw it
        assert parent.completed_time is None
    else:  # the completion came first: the child was linked after it committed
        assert complete_code == 200
        records = TicketRecord.objects.filter(ticket=parent)
        completed = records.get(action="complete")
        linked = records.get(action="link_added")
        assert completed.pk < linked.pk
