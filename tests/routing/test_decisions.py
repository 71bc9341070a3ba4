"""Why this agent (issue 13, point 1), through HTTP: every routing decision records what it saw
(the strategy, every member's figures, eligible or why not) and its outcome;
GET /api/tickets/{id}/routing/ returns them oldest first to the ticket's team only, and the
ticket page shows them in plain words."""

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from handler_groups.models import MemberCapacity
from routing import offers, overflow, presence
from routing.models import RoutingDecision
from tests.factories import HandlerGroupFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def it():
    """it_alice, it_bob, it_carol: member order of the groups below."""
    return [UserFactory(username=f"it_{name}") for name in ("alice", "bob", "carol")]


@pytest.fixture
def leader():
    return UserFactory(username="it_lead")


@pytest.fixture
def make_group(leader):
    def make(members, **kwargs):
        return HandlerGroupFactory(members=members, leader=leader, **kwargs)

    return make


@pytest.fixture
def approve(api, applicant, approver, on_commit):
    """Submit and approve a ticket into `group` over the API; returns the ticket's JSON."""

    def make(group):
        created = api.as_user(applicant).post(
            "/api/tickets/",
            {
                "title": "VPN down",
                "content": "Cannot connect.",
                "priority": 2,
                "handler_group_id": group.pk,
            },
            format="json",
        )
        assert created.status_code == 201, created.json()
        with on_commit(execute=True):
            response = api.as_user(approver).post(f"/api/tickets/{created.json()['id']}/approve/")
        assert response.status_code == 200, response.json()
        return response.json()

    return make


@pytest.fixture
def routing(api, leader):
    """The ticket's decisions as its group's leader reads them."""

    def get(ticket, user=None):
        response = api.as_user(user or leader).get(f"/api/tickets/{ticket['id']}/routing/")
        assert response.status_code == 200, response.content
        return response.json()

    return get


def online(users, on_commit, now=None):
    with on_commit(execute=True):
        for user in users:
            presence.heartbeat(user=user, now=now or timezone.now())


def by_name(decision) -> dict:
    return {m["username"]: m for m in decision["members"]}


def handler_id(ticket: dict) -> int | None:
    from ticketing.models import Ticket

    return Ticket.objects.get(pk=ticket["id"]).handler_id


# --- each strategy --------------------------------------------------------------------------


def test_round_robin_records_next_in_turn_with_every_members_figures(
    it, make_group, approve, routing, on_commit
):
    alice, bob, carol = it
    group = make_group(it, assign_strategy=1, requires_presence=True, max_active=1)
    online([alice, bob], on_commit)
    first = approve(group)
    assert handler_id(first) == alice.pk
    second = approve(group)
    assert handler_id(second) == bob.pk
    [decision] = routing(second)
    assert decision["trigger"] == "approval"
    assert (decision["strategy"], decision["strategy_label"]) == (1, "round robin")
    assert decision["outcome"] == "assigned"
    assert (decision["chosen_id"], decision["chosen_username"]) == (bob.pk, "it_bob")
    assert (
        decision["summary"] == "it_alice: at capacity 1/1; it_bob: next in turn; it_carol: offline"
    )
    members = by_name(decision)
    assert [m["username"] for m in decision["members"]] == ["it_alice", "it_bob", "it_carol"]
    assert members["it_alice"] | {"idle_since": None} == {
        "user_id": alice.pk,
        "username": "it_alice",
        "state": "available",
        "active": 1,
        "max_active": 1,
        "open_offers": 1,  # not accepted yet (the group makes no offers: no matter)
        "online_since": members["it_alice"]["online_since"],
        "idle_since": None,
        "assigned_today": 1,
        "eligible": False,
        "reason": "at_capacity",
        "why": "at capacity 1/1",
    }
    assert members["it_alice"]["idle_since"] is not None  # she was assigned the first one
    assert members["it_bob"]["eligible"] and members["it_bob"]["reason"] is None
    assert (members["it_bob"]["active"], members["it_bob"]["assigned_today"]) == (0, 0)
    assert members["it_carol"]["state"] == "offline" and members["it_carol"]["reason"] == "offline"
    assert decision["headline"].startswith("Round robin assigned it to it_bob in ")


def test_least_load_records_the_fewest_active(it, make_group, approve, routing):
    alice, bob, _ = it
    group = make_group(it[:2], assign_strategy=2)
    assert handler_id(approve(group)) == alice.pk
    ticket = approve(group)
    assert handler_id(ticket) == bob.pk
    [decision] = routing(ticket)
    assert decision["strategy_label"] == "least load"
    members = by_name(decision)
    assert (members["it_alice"]["active"], members["it_bob"]["active"]) == (1, 0)
    assert members["it_bob"]["why"] == "fewest active (0)"
    assert members["it_alice"]["why"] == "eligible, 1 active"
    assert members["it_alice"]["max_active"] is None


def test_online_priority_records_who_was_online_longest(
    it, make_group, approve, routing, on_commit
):
    alice, bob, carol = it
    group = make_group(it, assign_strategy=3, requires_presence=True)
    now = timezone.now()
    online([bob], on_commit, now - timedelta(hours=2))
    online([alice], on_commit, now - timedelta(hours=1))
    ticket = approve(group)
    assert handler_id(ticket) == bob.pk
    [decision] = routing(ticket)
    members = by_name(decision)
    assert members["it_bob"]["why"].startswith("online longest (since ")
    assert members["it_alice"]["why"].startswith("eligible, online since ")
    assert members["it_bob"]["online_since"] < members["it_alice"]["online_since"]
    assert members["it_carol"]["why"] == "offline"


def test_longest_idle_records_who_was_idle_longest(it, make_group, approve, routing, on_commit):
    alice, bob, _ = it
    group = make_group(it[:2], assign_strategy=4, requires_presence=True)
    now = timezone.now()
    online([alice], on_commit, now - timedelta(minutes=30))
    online([bob], on_commit, now - timedelta(minutes=5))
    ticket = approve(group)
    assert handler_id(ticket) == alice.pk
    [decision] = routing(ticket)
    assert decision["strategy_label"] == "longest idle"
    members = by_name(decision)
    assert members["it_alice"]["why"].startswith("idle longest (since ")
    assert members["it_bob"]["why"].startswith("eligible, idle since ")
    assert members["it_alice"]["idle_since"] < members["it_bob"]["idle_since"]


# --- each reason not to be eligible ---------------------------------------------------------


def test_not_available_records_the_actual_state(it, make_group, approve, routing, on_commit):
    alice, bob, _ = it
    group = make_group(it[:2], assign_strategy=1, requires_presence=True)
    online([alice, bob], on_commit)
    with on_commit(execute=True):
        presence.set_state(user=alice, state="busy")
    [decision] = routing(approve(group))
    members = by_name(decision)
    assert (members["it_alice"]["state"], members["it_alice"]["reason"]) == ("busy", "offline")
    assert members["it_alice"]["why"] == "not available (busy)"


def test_holding_an_offer_and_the_offered_outcome(it, make_group, approve, routing):
    alice, bob, _ = it
    group = make_group(it[:2], assign_strategy=1, offer_timeout_seconds=120)
    approve(group)
    ticket = approve(group)
    [decision] = routing(ticket)
    assert (decision["outcome"], decision["chosen_username"]) == ("offered", "it_bob")
    members = by_name(decision)
    assert members["it_alice"]["reason"] == "holding_offer"
    assert members["it_alice"]["open_offers"] == 1
    assert decision["summary"] == "it_alice: holding an unanswered offer; it_bob: next in turn"
    assert decision["headline"].startswith("Round robin offered it to it_bob")


def test_a_reclaim_records_who_missed_the_ticket(it, make_group, approve, routing):
    alice, bob, _ = it
    group = make_group(it[:2], assign_strategy=1, offer_timeout_seconds=60)
    ticket = approve(group)
    assert handler_id(ticket) == alice.pk
    now = timezone.now() + timedelta(seconds=61)
    assert offers.offer_sweep(now=now) == 1
    first, second = routing(ticket)
    assert (first["trigger"], first["chosen_username"]) == ("approval", "it_alice")
    assert (second["trigger"], second["outcome"]) == ("reclaim", "offered")
    assert second["chosen_username"] == "it_bob"
    assert by_name(second)["it_alice"]["reason"] == "missed_this_ticket"
    assert by_name(second)["it_alice"]["why"] == "missed this ticket"


def test_a_decline_records_who_declined_apart_from_misses(
    api, it, make_group, approve, routing, on_commit
):
    alice, bob, carol = it
    group = make_group(it, assign_strategy=1, offer_timeout_seconds=60)
    ticket = approve(group)
    assert handler_id(ticket) == alice.pk
    offers.offer_sweep(now=timezone.now() + timedelta(seconds=61))  # alice misses it
    assert handler_id(ticket) == bob.pk
    with on_commit(execute=True):
        response = api.as_user(bob).post(
            f"/api/tickets/{ticket['id']}/decline/", {"reason": "Not mine."}, format="json"
        )
    assert response.status_code == 200, response.json()
    decisions = routing(ticket)
    assert [d["trigger"] for d in decisions] == ["approval", "reclaim", "decline"]
    last = by_name(decisions[-1])
    assert last["it_alice"]["reason"] == "missed_this_ticket"
    assert last["it_bob"]["reason"] == "declined_this_ticket"
    assert last["it_bob"]["why"] == "declined this ticket"
    assert decisions[-1]["chosen_username"] == "it_carol"


def test_over_the_daily_cap_only_while_someone_under_it_is_eligible(
    it, make_group, approve, routing
):
    alice, bob, carol = it
    group = make_group(it[:2], assign_strategy=2, daily_cap=1)
    approve(group)  # alice
    second = approve(group)  # bob
    third = approve(group)  # both over the cap: the soft cap lets them both be eligible
    [decision] = routing(second)
    assert by_name(decision)["it_alice"]["reason"] == "over_daily_cap"
    assert by_name(decision)["it_alice"]["why"] == "over the daily cap (1 today)"
    [decision] = routing(third)
    assert all(m["eligible"] for m in decision["members"])


def test_an_inactive_account_and_a_capacity_of_its_own(it, make_group, approve, routing):
    alice, bob, carol = it
    alice.is_active = False
    alice.save(update_fields=["is_active"])
    group = make_group(it, assign_strategy=1)
    MemberCapacity.objects.create(group=group, user=bob, max_active=0)
    [decision] = routing(approve(group))
    assert decision["summary"] == (
        "it_alice: inactive account; it_bob: at capacity 0/0; it_carol: next in turn"
    )


def test_nobody_eligible_is_queued_then_a_drain_assigns(
    it, make_group, approve, routing, on_commit
):
    alice, _, _ = it
    group = make_group(it[:2], assign_strategy=1, requires_presence=True)
    ticket = approve(group)
    [queued] = routing(ticket)
    assert (queued["outcome"], queued["chosen_id"]) == ("queued", None)
    assert not any(m["eligible"] for m in queued["members"])
    assert "was eligible on approval: it waits in the queue" in queued["headline"]
    online([alice], on_commit)  # the heartbeat drains the group
    first, drained = routing(ticket)
    assert first == queued
    assert (drained["trigger"], drained["outcome"]) == ("drain", "assigned")
    assert drained["chosen_username"] == "it_alice"


def test_a_transfer_to_a_group_and_an_overflow_are_decisions(
    api, it, make_group, approve, routing, staff, on_commit
):
    alice, bob, carol = it
    front = make_group([alice], assign_strategy=0)  # manual: no decision on approval
    other = make_group([bob], assign_strategy=1)
    ticket = approve(front)
    assert routing(ticket) == []
    with on_commit(execute=True):
        response = api.as_user(staff).post(
            f"/api/tickets/{ticket['id']}/transfer/", {"handler_group_id": other.pk}, format="json"
        )
    assert response.status_code == 200, response.json()
    [decision] = routing(ticket, staff)
    assert (decision["trigger"], decision["group_id"]) == ("transfer", other.pk)
    assert decision["chosen_username"] == "it_bob"

    backup = make_group([carol], assign_strategy=1)
    stuck = make_group(
        [alice],
        assign_strategy=1,
        requires_presence=True,
        overflow_group=backup,
        overflow_after_seconds=60,
    )
    waiting = approve(stuck)
    assert overflow.overflow_sweep(now=timezone.now() + timedelta(seconds=61)) == 1
    queued, out, moved = routing(waiting)
    assert queued["outcome"] == "queued"
    assert (out["trigger"], out["outcome"], out["group_id"]) == ("overflow", "overflowed", stuck.pk)
    assert out["members"][0]["reason"] == "offline"
    assert (moved["trigger"], moved["outcome"], moved["group_id"]) == (
        "overflow",
        "assigned",
        backup.pk,
    )
    assert moved["chosen_username"] == "it_carol"


# --- who may read it ------------------------------------------------------------------------


def test_the_team_reads_the_decisions_applicants_and_approvers_get_404(
    api, it, make_group, approve, applicant, approver, staff, leader
):
    group = make_group(it, assign_strategy=1)
    ticket = approve(group)
    url = f"/api/tickets/{ticket['id']}/routing/"
    assert api.as_user(applicant).get(url).status_code == 404
    assert api.as_user(approver).get(url).status_code == 404
    assert api.as_user(UserFactory(username="outsider")).get(url).status_code == 404
    for user in (leader, staff, it[1]):
        response = api.as_user(user).get(url)
        assert response.status_code == 200
        assert [d["chosen_username"] for d in response.json()] == ["it_alice"]
    assert RoutingDecision.objects.filter(ticket_id=ticket["id"]).count() == 1


def test_the_ticket_page_explains_why_this_agent_to_the_team_only(
    it, make_group, approve, applicant, leader, on_commit
):
    alice, bob, carol = it
    group = make_group(it, assign_strategy=1, requires_presence=True, max_active=1)
    online([alice, bob], on_commit)
    approve(group)
    ticket = approve(group)
    client = Client()
    client.force_login(leader)
    page = client.get(f"/console/tickets/{ticket['id']}/").content.decode()
    assert "Why this agent?" in page
    assert "Round robin assigned it to it_bob" in page
    assert "<strong>it_bob</strong>: next in turn" in page
    assert "<strong>it_alice</strong>: at capacity 1/1" in page
    assert "<strong>it_carol</strong>: offline" in page
    client.force_login(applicant)
    page = client.get(f"/console/tickets/{ticket['id']}/").content.decode()
    assert "Why this agent?" not in page and "it_carol" not in page
