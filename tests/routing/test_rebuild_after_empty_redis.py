"""After Redis comes back empty (FLUSHALL on a Redis of the test's own), the presence states
and idle pools are rebuilt from PostgreSQL by the next presence sweep (every 15 s), not only
by the 5-minute reconcile; /readyz says the routing state is missing meanwhile (degraded, not
unready); routing works again afterwards."""

import pytest

from config.redis_state import ROUTING_REBUILT_KEY
from routing import idle_pool, reconcile, tasks
from tests.factories import ApproverFactory, HandlerGroupFactory, UserFactory
from tests.processes import OwnRedis
from workflow import services


@pytest.fixture
def own_redis(tmp_path, settings):
    own = OwnRedis(tmp_path)
    settings.REDIS_URL = own.url
    settings.ASSIGNMENT_REDIS_URL = own.url
    settings.CELERY_BROKER_URL = own.url
    yield own
    own.stop()


def _snapshots(groups) -> dict:
    return {group.pk: idle_pool.snapshot(group.pk) for group in groups}


@pytest.mark.django_db(transaction=True)
def test_presence_and_idle_pools_are_rebuilt_from_postgresql_after_redis_lost_them(
    own_redis, api, monkeypatch
):
    monkeypatch.setattr("routing.drain.current_app.send_task", lambda *a, **k: None)
    agents = [UserFactory(username=f"agent{i}") for i in range(4)]
    acd = HandlerGroupFactory(
        name="acd", members=agents[:3], assign_strategy=4, requires_presence=True
    )
    second = HandlerGroupFactory(
        name="second", members=agents[2:], assign_strategy=4, requires_presence=True
    )
    for agent in agents[:3]:
        assert api.as_user(agent).post("/api/presence/heartbeat/").status_code == 200
    response = api.as_user(agents[1]).post("/api/presence/state/", {"state": "busy"}, format="json")
    assert response.status_code == 200, response.content
    assert tasks.presence_sweep()["rebuilt_groups"] == 2  # first start: nothing marked yet
    before = _snapshots([acd, second])
    assert before[acd.pk]["state"] == {
        agents[0].pk: "available",
        agents[1].pk: "busy",
        agents[2].pk: "available",
    }
    assert {u for u, _ in before[acd.pk]["idle"]} == {agents[0].pk, agents[2].pk}
    ready = api.get("/readyz").json()
    assert ready["degraded"] == [] and ready["checks"]["rebuilt_state"] == "ok"
    assert tasks.presence_sweep()["rebuilt_groups"] == 0  # marked: no needless rebuild

    own_redis.client.flushall()  # Redis restarted empty

    assert idle_pool.snapshot(acd.pk) == {"idle": [], "state": {}, "offered": set()}
    probe = api.get("/readyz")
    assert probe.status_code == 200  # degraded, not unready
    assert probe.json()["degraded"] == ["rebuilt_state"]
    assert "routing" in probe.json()["errors"]["rebuilt_state"]

    assert tasks.presence_sweep()["rebuilt_groups"] == 2
    assert _snapshots([acd, second]) == before  # exactly what PostgreSQL says
    assert api.get("/readyz").json()["degraded"] == []

    # Routing works: the longest idle available agent gets the next ticket.
    submitted = services.ticket_submit(
        creator=UserFactory(), title="t", content="c", priority=3, handler_group_id=acd.pk
    )
    ticket = services.ticket_approve(ticket_id=submitted.pk, approver=ApproverFactory())
    assert ticket.handler_id in {agents[0].pk, agents[2].pk}


@pytest.mark.django_db
def test_a_failed_rebuild_leaves_the_state_marked_missing(own_redis, monkeypatch):
    HandlerGroupFactory(name="acd", members=[UserFactory()], assign_strategy=4)

    def redis_gone(now):
        raise ConnectionError("Redis went away mid-rebuild")

    monkeypatch.setattr(reconcile, "_reconcile_all", redis_gone)
    with pytest.raises(ConnectionError):
        reconcile.ensure_rebuilt()
    assert not own_redis.client.exists(ROUTING_REBUILT_KEY)  # the next sweep tries again
    monkeypatch.undo()
    assert reconcile.ensure_rebuilt() == 1
    assert own_redis.client.exists(ROUTING_REBUILT_KEY)


@pytest.mark.django_db
def test_the_presence_sweep_still_runs_while_redis_is_down(settings):
    settings.ASSIGNMENT_REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens there
    result = tasks.presence_sweep()
    assert result["rebuilt_groups"] == 0 and result["offline"] == 0
