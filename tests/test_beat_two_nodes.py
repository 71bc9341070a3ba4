"""Beat on two nodes, with the real processes: a Celery worker and two beats started from the
project's own command lines (runtime/commands.py) with production settings, one metrics
directory for all of them, and /metrics read as the scraper reads it. Both beats run at once:
each periodic task runs once per schedule slot, not once per beat; SIGKILL the one sending
and the other sends within 10 s, still nothing doubled."""

import math
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
import redis
from django.db import connection
from django.utils import timezone
from django_celery_beat.models import IntervalSchedule, PeriodicTask
from prometheus_client.parser import text_string_to_metric_families

from config.beat.models import BeatLease, BeatSlot
from runtime.commands import beat_command, worker_command

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "scrape-the-beats"


def _with_path(url: str, path: str) -> str:
    return urlunsplit(urlsplit(url)._replace(path=path))


def _schedule_the_tick() -> None:
    """The per-second tick's entry (a data migration's; a transactional test may run after
    another one emptied the tables). The other periodic tasks are the reference data's."""
    every_second, _ = IntervalSchedule.objects.get_or_create(every=1, period="seconds")
    PeriodicTask.objects.update_or_create(
        task="sla.tick",
        defaults={"name": "sla: tick", "interval": every_second, "expire_seconds": 2},
    )


def _intervals() -> dict[str, float]:
    """Each interval task's interval in seconds, by task (beat adds Celery's crontab one)."""
    seconds = {"seconds": 1, "minutes": 60, "hours": 3600, "days": 86400}
    return {
        task.task: task.interval.every * seconds[task.interval.period]
        for task in PeriodicTask.objects.filter(
            enabled=True, interval__isnull=False
        ).select_related("interval")
    }


class Node:
    def __init__(self, name: str, argv: list[str], env: dict[str, str], out: Path) -> None:
        self.name = name
        self.out = out
        self.proc = subprocess.Popen(
            argv,
            cwd=ROOT,
            env=env,
            stdout=out.open("wb"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def alive(self) -> bool:
        return self.proc.poll() is None

    def log(self) -> str:
        return self.out.read_text(errors="replace")[-3000:]

    def stop(self) -> None:
        if self.alive():
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        finally:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


@pytest.mark.django_db(transaction=True)
def test_two_beats_send_each_slot_once_and_the_survivor_takes_over(client, settings, tmp_path):
    _schedule_the_tick()
    intervals = _intervals()
    assert intervals["sla.tick"] == 1
    broker = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    redis.Redis.from_url(broker).flushdb()  # no message left from an earlier run
    metrics_dir = tmp_path / "metrics"
    metrics_dir.mkdir()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DJANGO_SECRET_KEY": "two-beats-" + "x" * 50,
        "DJANGO_ALLOWED_HOSTS": "localhost",
        "DATABASE_URL": _with_path(
            os.environ["DATABASE_URL"], f"/{connection.settings_dict['NAME']}"
        ),
        "REDIS_URL": broker,
        "CELERY_BROKER_URL": broker,
        "LOG_LEVEL": "INFO",
        "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir),
        "CELERY_CONCURRENCY": "2",
    }
    # /metrics in this process adds up the files the worker writes, as a web node's would.
    settings.METRICS_TOKEN = TOKEN
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(metrics_dir)

    nodes = [Node("worker", worker_command(env), env, tmp_path / "worker.out")]
    nodes += [Node(f"beat-{n}", beat_command(env), env, tmp_path / f"beat-{n}.out") for n in "ab"]
    beats = {node.proc.pid: node for node in nodes[1:]}
    started = time.time()
    try:
        _wait_for(lambda: _runs(client).get("sla.tick", 0) >= 2, 60, nodes)

        # Both beats up, one sending: the tick runs once a second, not twice.
        leader = beats[_leader_pid()]
        assert all(node.alive() for node in nodes)
        first = _measure(client, seconds=8)
        assert first.runs("sla.tick") <= first.slots(1) + 1, first
        assert first.runs("sla.tick") >= first.slots(1) * 0.6, first

        # The sender dies without a word; the other takes the lease and sends within 10 s.
        os.kill(leader.proc.pid, signal.SIGKILL)
        killed = timezone.now()
        leader.proc.wait(timeout=10)
        survivor = next(node for node in beats.values() if node is not leader)
        _wait_for(
            lambda: BeatSlot.objects.filter(task_name="sla: tick", claimed_at__gt=killed).exists(),
            12,
            [survivor],
        )
        taken = BeatSlot.objects.get(task_name="sla: tick")
        assert taken.holder.split(":")[1] == str(survivor.proc.pid)
        assert (taken.claimed_at - killed).total_seconds() < 10, (taken.claimed_at, killed)
        # The tick's messages expire after 2 s: what runs from now on was sent by the survivor.
        time.sleep(2.5)
        base = _runs(client).get("sla.tick", 0)
        _wait_for(lambda: _runs(client).get("sla.tick", 0) > base, 8, [survivor])

        second = _measure(client, seconds=6)
        assert second.runs("sla.tick") <= second.slots(1) + 1, second
        assert second.runs("sla.tick") >= second.slots(1) * 0.6, second
        assert survivor.alive(), survivor.log()

        # Over the whole run, no periodic task ran more often than it has slots.
        elapsed = time.time() - started
        for task, total in _runs(client).items():
            if task in intervals:
                allowed = math.ceil(elapsed / intervals[task]) + 1
                assert total <= allowed, (task, total, allowed, elapsed)
    finally:
        for node in nodes:
            node.stop()
        os.environ.pop("PROMETHEUS_MULTIPROC_DIR", None)


def _leader_pid() -> int:
    deadline = time.monotonic() + 10
    while not BeatLease.objects.filter(expires_at__gt=timezone.now()).exists():
        assert time.monotonic() < deadline, "no beat took the lease"
        time.sleep(0.2)
    return int(BeatLease.objects.get().holder.split(":")[1])


class Window:
    def __init__(self, started: float, ended: float, before: dict, after: dict) -> None:
        self.started, self.ended = started, ended
        self.before, self.after = before, after

    def runs(self, task: str) -> float:
        return self.after.get(task, 0) - self.before.get(task, 0)

    def slots(self, every: float) -> int:
        """Slots of `every` seconds that started between the two scrapes."""
        return math.floor(self.ended / every) - math.floor(self.started / every)

    def __repr__(self) -> str:
        return f"Window({self.ended - self.started:.1f} s, runs={self.runs('sla.tick')})"


def _measure(client, *, seconds: float) -> Window:
    started, before = time.time(), _runs(client)
    time.sleep(seconds)
    return Window(started, time.time(), before, _runs(client))


def _runs(client) -> dict[str, float]:
    """ticketdesk_task_runs_total by task, from /metrics as the scraper reads it."""
    response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200
    return {
        sample.labels["task"]: sample.value
        for family in text_string_to_metric_families(response.content.decode())
        for sample in family.samples
        if sample.name == "ticketdesk_task_runs_total"
    }


def _wait_for(condition: Callable[[], bool], seconds: float, nodes: list[Node]) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        for node in nodes:
            assert node.alive(), f"{node.name} stopped:\n{node.log()}"
        assert time.monotonic() < deadline, "timed out:\n" + "\n".join(n.log() for n in nodes)
        time.sleep(0.25)
