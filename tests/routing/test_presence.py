"""Presence: heartbeats, states, the offline sweep, wrap-up, reconciliation, the API."""

from datetime import timedelta

import pytest
from django.utils import timezone

from routing import idle_pool, presence, reconcile
from routing.models import AgentPresence
from tests.factories import HandlerGroupFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def agents():
    return [UserFactory(username=f"agent{i}") for i in range(3)]


@pytest.fixture
def acd(agents):
    """A presence-required longest-idle group."""
    return HandlerGroupFactory(
        name="acd",
        members=agents,
        assign_strategy=4,
        requires_presence=True,
        warmup_seconds=60,
        wrap_up_seconds=120,
    )


def test_heartbeat_brings_an_offline_agent_online_and_into_the_pool(acd, agents, on_commit):
    now = timezone.now()
    with on_commit(execute=True):
        presence.heartbeat(user=agents[0], now=now)
    row = AgentPresence.objects.get(pk=agents[0].pk)
    assert row.state == "available" and row.online_since == now and row.last_heartbeat == now
    pool = idle_pool.snapshot(acd.pk)
    assert pool["state"] == {agents[0].pk: "available"}
    # Warm-up: a newly online agent counts as idle from 60 s later.
    assert pool["idle"] == [(agents[0].pk, (now + timedelta(seconds=60)).timestamp())]


def test_busy_leaves_the_pool_first_and_available_returns(acd, agents, on_commit):
    with on_commit(execute=True):
        presence.heartbeat(user=agents[0])
    presence.set_state(user=agents[0], state="busy")
    pool = idle_pool.snapshot(acd.pk)
    assert pool["idle"] == [] and pool["state"][agents[0].pk] == "busy"
    with on_commit(execute=True):
        presence.set_state(user=agents[0], state="available")
    assert [u for u, _ in idle_pool.snapshot(acd.pk)["idle"]] == [agents[0].pk]


def test_a_bad_state_is_rejected(agents):
    from config.errors import InvalidArgument

    with pytest.raises(InvalidArgument):
        presence.set_state(user=agents[0], state="napping")


def test_sweep_takes_silent_agents_offline_and_they_keep_their_tickets(acd, agents, on_commit):
    now = timezone.now()
    with on_commit(execute=True):
        presence.heartbeat(user=agents[0], now=now - timedelta(seconds=90))
        presence.heartbeat(user=agents[1], now=now - timedelta(seconds=30))
    result = presence.presence_sweep(now=now)
    assert result["offline"] == 1
    assert AgentPresence.objects.get(pk=agents[0].pk).state == "offline"
    assert AgentPresence.objects.get(pk=agents[1].pk).state == "available"
    assert [u for u, _ in idle_pool.snapshot(acd.pk)["idle"]] == [agents[1].pk]
    assert presence.presence_sweep(now=now)["offline"] == 0


def test_wrap_up_after_completion_then_back_to_available(
    acd, agents, approver, applicant, on_commit
):
    from workflow import services

    now = timezone.now()
    with on_commit(execute=True):
        presence.heartbeat(user=agents[0], now=now)
    ticket = services.ticket_submit(
        creator=applicant, title="t", content="c", priority=2, handler_group_id=acd.pk, now=now
    )
    with on_commit(execute=True):
        ticket = services.ticket_approve(ticket_id=ticket.pk, approver=approver, now=now)
    assert ticket.handler_id == agents[0].pk
    services.ticket_accept(ticket_id=ticket.pk, handler=agents[0], now=now)
    services.ticket_complete(ticket_id=ticket.pk, handler=agents[0], now=now)
    row = AgentPresence.objects.get(pk=agents[0].pk)
    assert row.state == "wrap_up" and row.wrap_up_until == now + timedelta(seconds=120)
    assert idle_pool.snapshot(acd.pk)["idle"] == []
    presence.heartbeat(user=agents[0], now=now + timedelta(seconds=60))
    assert presence.presence_sweep(now=now + timedelta(seconds=60))["wrap_up_ended"] == 0
    with on_commit(execute=True):
        presence.heartbeat(user=agents[0], now=now + timedelta(seconds=119))
        ended = presence.presence_sweep(now=now + timedelta(seconds=121))
    assert ended["wrap_up_ended"] == 1
    assert AgentPresence.objects.get(pk=agents[0].pk).state == "available"
    assert [u for u, _ in idle_pool.snapshot(acd.pk)["idle"]] == [agents[0].pk]


def test_reconciliation_repairs_redis_from_postgresql(acd, agents, on_commit):
    with on_commit(execute=True):
        presence.heartbeat(user=agents[0])
        presence.heartbeat(user=agents[1])
    presence.set_state(user=agents[1], state="busy")
    client = idle_pool.client()
    idle_key = f"td:{{g{acd.pk}}}:idle"
    client.delete(idle_key)  # available agent lost from the pool
    client.zadd(idle_key, {str(agents[2].pk): 1.0})  # an offline agent wrongly routable
    reconcile.reconcile()
    pool = idle_pool.snapshot(acd.pk)
    assert [u for u, _ in pool["idle"]] == [agents[0].pk]
    assert pool["state"] == {
        agents[0].pk: "available",
        agents[1].pk: "busy",
        agents[2].pk: "offline",
    }


def test_presence_api(api, acd, agents):
    client = api.as_user(agents[0])
    beat = client.post("/api/presence/heartbeat/")
    assert beat.status_code == 200 and beat.json()["state"] == "available"
    busy = client.post("/api/presence/state/", {"state": "busy"}, format="json")
    assert busy.json()["state"] == "busy"
    bad = client.post("/api/presence/state/", {"state": "asleep"}, format="json")
    assert bad.status_code == 400 and "state" in bad.json()["errors"]
    mine = client.get("/api/presence/").json()
    assert [r["username"] for r in mine] == ["agent0"]


def test_leader_sees_the_members_presence(api, acd, agents):
    leader = UserFactory(username="boss")
    acd.leader = leader
    acd.save()
    api.as_user(agents[1]).post("/api/presence/heartbeat/")
    rows = {r["username"]: r for r in api.as_user(leader).get("/api/presence/").json()}
    # The leader is in no group as a member: no presence of their own.
    assert set(rows) == {"agent0", "agent1", "agent2"}
    assert rows["agent1"]["state"] == "available"
    assert rows["agent0"]["state"] == "offline"
    assert rows["agent1"]["active_tickets"] == 0 and rows["agent1"]["assignments_today"] == 0


def test_sweep_and_reconcile_commands(acd, agents, on_commit, capsys):
    from django.core.management import call_command

    with on_commit(execute=True):
        presence.heartbeat(user=agents[0], now=timezone.now() - timedelta(minutes=5))
    call_command("presence_sweep")
    assert "offline: 1" in capsys.readouterr().out
    idle_pool.client().delete(f"td:{{g{acd.pk}}}:state")
    call_command("reconcile_presence")
    assert "reconciled" in capsys.readouterr().out
    assert idle_pool.snapshot(acd.pk)["state"][agents[0].pk] == "offline"
    call_command("routing_sweep", "--now", timezone.now().isoformat())
    assert "drained: 0" in capsys.readouterr().out
