"""Levels fire on the second with the real processes: a Celery worker and beat started from the
project's own command lines (runtime/commands.py), the per-second tick from the migration's
schedule. The budget is generous (lag < 5 s) so the test holds on a busy machine; docs/benchmarks.md
gives the figure measured under `make run`."""

import json
import os
import signal
import subprocess
import time
from decimal import Decimal
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
import redis
from django.db import connection
from django.utils import timezone

from runtime.commands import beat_command, worker_command
from sla import ladder
from sla.models import SlaEvent, SlaRule
from sla.rules import set_levels
from tests.factories import ApproverFactory, HandlerGroupFactory, UserFactory
from workflow import services

ROOT = Path(__file__).resolve().parents[2]
TICKETS = 6


def _with_path(url: str, path: str) -> str:
    return urlunsplit(urlsplit(url)._replace(path=path))


def _schedule_the_tick() -> None:
    """The tick's beat entry (a data migration's; a transactional test may run after another
    one emptied the tables)."""
    from django_celery_beat.models import IntervalSchedule, PeriodicTask

    every_second, _ = IntervalSchedule.objects.get_or_create(every=1, period="seconds")
    PeriodicTask.objects.update_or_create(
        task="sla.tick",
        defaults={"name": "sla tick", "interval": every_second, "expire_seconds": 2},
    )


@pytest.mark.django_db(transaction=True)
def test_levels_fire_within_seconds_with_a_real_worker_and_beat(tmp_path):
    _schedule_the_tick()
    broker = _with_path(os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"), "/14")
    redis.Redis.from_url(broker).flushdb()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": _with_path(
            os.environ["DATABASE_URL"], f"/{connection.settings_dict['NAME']}"
        ),
        "REDIS_URL": broker,
        "CELERY_BROKER_URL": broker,
        "LOG_LEVEL": "INFO",
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path),
        "CELERY_CONCURRENCY": "2",
    }
    rule = SlaRule.objects.create(
        name="seconds", priority=4, response_hours=Decimal("0.01"), resolve_hours=Decimal("1")
    )  # response in 36 s
    set_levels(rule, [ladder.Level(1, "response", ladder.PERCENT_ELAPSED, Decimal(10))])
    group = HandlerGroupFactory(members=[UserFactory()], leader=UserFactory())
    applicant, approver = UserFactory(), ApproverFactory()

    def ticket():
        submitted = services.ticket_submit(
            creator=applicant, title="t", content="c", priority=4, handler_group_id=group.pk
        )
        return services.ticket_approve(ticket_id=submitted.pk, approver=approver)

    outputs = {name: tmp_path / f"{name}.out" for name in ("worker", "beat")}
    processes = [
        subprocess.Popen(
            command(env),
            cwd=ROOT,
            env=env,
            stdout=outputs[name].open("wb"),
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        for name, command in (("worker", worker_command), ("beat", beat_command))
    ]
    try:
        # Live once a first level has fired (due 3.6 s after submission).
        probe = ticket()
        _wait_for(lambda: SlaEvent.objects.filter(ticket=probe, state="fired").exists(), 90)
        measured = []
        for _ in range(TICKETS):
            measured.append(ticket())
            time.sleep(0.7)  # due instants spread over the tick's second
        ids = [t.pk for t in measured]
        _wait_for(
            lambda: SlaEvent.objects.filter(ticket__in=ids, state="fired").count() == TICKETS, 60
        )
    finally:
        for process in processes:
            os.killpg(process.pid, signal.SIGTERM)
        for process in processes:
            process.wait(timeout=60)
    lags = [
        (fired - due).total_seconds()
        for due, fired in SlaEvent.objects.filter(ticket__in=ids).values_list("due_at", "fired_at")
    ]
    assert len(lags) == TICKETS
    assert max(lags) < 5, lags
    assert min(lags) >= 0, lags  # never early
    # Both log on standard output, in JSON like the web (Celery's banner aside).
    for name, output in outputs.items():
        logged = [json.loads(line) for line in output.read_text().splitlines() if line[:1] == "{"]
        assert any(entry["logger"].startswith("celery") for entry in logged), name


def _wait_for(condition, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.2)
    assert timezone.now()  # keep the connection used (a clean teardown)
