"""Simulations are never stuck: a run whose worker died (heartbeat silent) is queued again,
at most MAX_ATTEMPTS runs, then failed with the reason; one whose message the broker lost is
handed over again, and failed after an hour without a worker. Time through explicit `now`;
the crash and the lost message with a real slow worker (runtime/commands.py) killed by
SIGKILL and a real broker flushed (a Redis of the test's own)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from insight import services
from insight.models import Simulation, SimulationStatus
from runtime.commands import slow_worker_command
from tests.factories import StaffFactory
from tests.processes import OwnRedis, Processes, process_env, producing_to, wait_for

# A synthetic day at the documented maxima runs for minutes: long enough to kill it mid-run.
LONG = {"agents": 200, "calls": 100_000, "hours": 744, "aht": 300}
SHORT = {"agents": 4, "calls": 80, "hours": 8, "aht": 300, "wrap_up": 60}


@pytest.fixture
def sent(monkeypatch):
    """The simulations handed to the broker, by id (no broker in these tests)."""
    handed: list[int] = []
    monkeypatch.setattr(services, "_hand_over", handed.extend)
    return handed


def _simulation(**fields) -> Simulation:
    fields.setdefault("params", {"synthetic": SHORT, "strategies": [1]})
    return Simulation.objects.create(**fields)


def _state(pk: int) -> tuple:
    return Simulation.objects.filter(pk=pk).values_list(
        "status", "attempts", "heartbeat", "enqueued", "error"
    )[0]


@pytest.mark.django_db(transaction=True)
def test_a_run_whose_worker_went_silent_is_queued_again(sent):
    now = timezone.now()
    running = _simulation(status="running", attempts=1, started=now, heartbeat=now)
    alive = _simulation(status="running", attempts=1, started=now, heartbeat=now)
    later = now + services.STALE_AFTER - timedelta(seconds=1)
    Simulation.objects.filter(pk=alive.pk).update(heartbeat=later)
    before = _state(alive.pk)

    assert services.simulation_sweep(now=later) == {"requeued": 0, "resent": 0, "failed": 0}
    assert _state(running.pk)[0] == "running" and sent == []  # not silent long enough

    silent = now + services.STALE_AFTER + timedelta(seconds=1)
    assert services.simulation_sweep(now=silent)["requeued"] == 1
    status, attempts, heartbeat, enqueued, _error = _state(running.pk)
    assert (status, attempts, heartbeat, enqueued) == ("queued", 1, None, silent)
    assert sent == [running.pk]
    assert _state(alive.pk) == before  # its heartbeat is fresh: left alone

    # The message runs it again: a second attempt, done.
    assert services.run_simulation(running.pk) == "done"
    assert _state(running.pk)[:2] == ("done", 2)


@pytest.mark.django_db(transaction=True)
def test_a_run_that_keeps_losing_its_worker_fails_with_the_reason(sent):
    now = timezone.now()
    crashing = _simulation(
        status="running", attempts=services.MAX_ATTEMPTS, started=now, heartbeat=now
    )
    result = services.simulation_sweep(now=now + services.STALE_AFTER + timedelta(seconds=1))
    assert result == {"requeued": 0, "resent": 0, "failed": 1}
    crashing.refresh_from_db()
    assert crashing.status == SimulationStatus.FAILED and crashing.finished is not None
    assert f"stopped {services.MAX_ATTEMPTS} times" in crashing.error
    assert sent == []
    # A stray message of it finds nothing to run.
    assert services.run_simulation(crashing.pk) == "skipped"
    assert _state(crashing.pk)[0] == "failed"


@pytest.mark.django_db(transaction=True)
def test_a_queued_simulation_whose_message_was_lost_is_handed_over_again(sent):
    now = timezone.now()
    lost = _simulation(enqueued=now, created=now)
    assert services.simulation_sweep(now=now + timedelta(seconds=30))["resent"] == 0
    assert sent == []  # still on its way
    due = now + services.REQUEUE_AFTER + timedelta(seconds=1)
    assert services.simulation_sweep(now=due)["resent"] == 1
    assert sent == [lost.pk] and _state(lost.pk)[:2] == ("queued", 0)
    assert _state(lost.pk)[3] == due  # spaced: the next sweep does not send it again at once
    assert services.simulation_sweep(now=due + timedelta(seconds=30))["resent"] == 0
    # After an hour with no worker taking it, it fails rather than waiting forever.
    hour = now + services.GIVE_UP_QUEUED_AFTER + timedelta(seconds=1)
    assert services.simulation_sweep(now=hour)["failed"] == 1
    assert _state(lost.pk)[0] == "failed"
    assert "within an hour" in _state(lost.pk)[4]


@pytest.mark.django_db(transaction=True)
def test_a_superseded_run_does_not_overwrite_the_current_one(sent, monkeypatch):
    simulation = _simulation()
    # Another run took over while this one was computing (the sweep queued it again and a
    # second worker claimed it): this run's outcome is dropped.
    original = services.simulate_params

    def taken_over(params, **kwargs):
        Simulation.objects.filter(pk=simulation.pk).update(attempts=2)
        return original(params, **kwargs)

    monkeypatch.setattr(services, "simulate_params", taken_over)
    assert services.run_simulation(simulation.pk) == "superseded"
    assert _state(simulation.pk)[:2] == ("running", 2)


@pytest.mark.django_db(transaction=True)
def test_a_simulation_killed_with_its_worker_is_recovered_and_finishes(tmp_path, api):
    staff = StaffFactory()
    own = OwnRedis(tmp_path)
    env = process_env(tmp_path, own.url, CELERY_SLOW_CONCURRENCY="1")
    processes = Processes(tmp_path)
    try:
        with producing_to(own.url):
            response = api.as_user(staff).post(
                "/api/simulations/", {"synthetic": LONG}, format="json"
            )
            assert response.status_code == 202, response.content
            pk = response.json()["id"]
            processes.start("slow", slow_worker_command(env), env)
            wait_for(lambda: _state(pk)[0] == "running", 120, "the worker to start it")
            started = Simulation.objects.get(pk=pk).started
            # Alive: the worker's heartbeat moves on while it computes.
            wait_for(
                lambda: _state(pk)[2] > started,
                services.HEARTBEAT_SECONDS * 3,
                "a heartbeat",
            )
            processes.kill("slow")  # SIGKILL, parent and pool child
            assert _state(pk)[:2] == ("running", 1)  # what used to stay so forever
            # The second run need not take minutes: the test shortens the day.
            Simulation.objects.filter(pk=pk).update(params={"synthetic": SHORT})
            silent = timezone.now() + services.STALE_AFTER + timedelta(seconds=1)
            assert services.simulation_sweep(now=silent)["requeued"] == 1
            processes.start("slow-again", slow_worker_command(env), env)
            wait_for(lambda: _state(pk)[0] == "done", 120, "the second run")
        simulation = Simulation.objects.get(pk=pk)
        assert simulation.attempts == 2 and simulation.result
    finally:
        processes.stop()
        own.stop()


@pytest.mark.django_db(transaction=True)
def test_a_simulation_queued_before_the_broker_lost_its_queue_still_runs(tmp_path, api):
    staff = StaffFactory()
    own = OwnRedis(tmp_path)
    env = process_env(tmp_path, own.url, CELERY_SLOW_CONCURRENCY="1")
    processes = Processes(tmp_path)
    try:
        with producing_to(own.url):
            response = api.as_user(staff).post(
                "/api/simulations/", {"synthetic": SHORT, "strategies": [1]}, format="json"
            )
            assert response.status_code == 202
            pk = response.json()["id"]
            assert own.client.llen("slow") == 1  # on the slow queue, no worker yet
            own.client.flushall()  # Redis restarted empty
            due = timezone.now() + services.REQUEUE_AFTER + timedelta(seconds=1)
            assert services.simulation_sweep(now=due)["resent"] == 1
            assert own.client.llen("slow") == 1
            processes.start("slow", slow_worker_command(env), env)
            wait_for(lambda: _state(pk)[0] == "done", 120, "the worker to run it")
        assert Simulation.objects.get(pk=pk).attempts == 1
    finally:
        processes.stop()
        own.stop()
