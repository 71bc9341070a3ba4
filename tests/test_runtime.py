"""The production command lines (runtime/commands.py) — the ones `make run` and the containers
start — run here: gunicorn serves the app and stops cleanly on SIGTERM, at once even with live
pages open; the Celery settings fit the longest countdown the code schedules."""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
from django.conf import settings

from handler_groups.models import MAX_OFFER_TIMEOUT_SECONDS
from notifications.delivery import BACKOFF_CAP_SECONDS
from runtime.commands import beat_command, slow_worker_command, web_command, worker_command
from tests.live.server import session_for
from tests.live.sse import Events

ROOT = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_the_commands_come_from_the_environment():
    web = web_command({"WEB_BIND": "0.0.0.0:9000", "WEB_CONCURRENCY": "4", "WEB_THREADS": "8"})
    assert web[1:4] == ["-m", "gunicorn", "config.asgi:application"]
    assert web[web.index("--bind") + 1] == "0.0.0.0:9000"
    assert web[web.index("--workers") + 1] == "4"
    # uvicorn workers; WEB_THREADS sizes each one's pool for the WSGI views (config/asgi.py).
    assert web[web.index("--worker-class") + 1] == "runtime.worker.Worker"
    assert web_command({})[web_command({}).index("--workers") + 1] == "4"  # the default
    assert worker_command({"CELERY_CONCURRENCY": "3"})[-1] == "3"
    critical, slow = worker_command({}), slow_worker_command({"CELERY_SLOW_CONCURRENCY": "4"})
    assert critical[critical.index("-Q") + 1] == "critical"
    assert slow[slow.index("-Q") + 1] == "deliveries,mail,slow" and slow[-1] == "4"
    assert critical[critical.index("-n") + 1] != slow[slow.index("-n") + 1]
    assert slow[:3][1:] == ["-n", "10"]  # slow work yields the CPU (nice)
    assert worker_command({"CELERY_QUEUES": "critical,deliveries"})[critical.index("-Q") + 1] == (
        "critical,deliveries"
    )
    assert beat_command({})[4:6] == ["config", "beat"]


@pytest.mark.django_db(transaction=True)
def test_gunicorn_serves_the_app_and_stops_cleanly_on_sigterm(tmp_path, django_user_model):
    port = _free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "WEB_BIND": f"127.0.0.1:{port}",
        "WEB_CONCURRENCY": "3",
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path),
        "METRICS_TOKEN": "scrape-me",
    }
    # The test database, which this test's transactional fixture keeps migrated.
    env["DATABASE_URL"] = _test_database_url()
    proc = subprocess.Popen(web_command(env), cwd=ROOT, env=env, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                live = requests.get(f"http://127.0.0.1:{port}/healthz", timeout=2)
                break
            # Refused before gunicorn listens; timed out while its workers are still booting
            # (they import the project; a loaded machine makes that take seconds).
            except (requests.ConnectionError, requests.Timeout):
                assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
                assert time.monotonic() < deadline, "gunicorn did not start"
                time.sleep(0.3)
        assert live.status_code == 200
        ready = requests.get(f"http://127.0.0.1:{port}/readyz", timeout=10)
        assert ready.status_code == 200, ready.text
        for _ in range(30):  # a new connection each: the workers share them out
            api = requests.get(f"http://127.0.0.1:{port}/api/tickets/", timeout=10)
            assert api.status_code == 401 and api.json()["code"] == "not_authenticated"
        # Whichever worker answers the scrape, it reports all 30.
        for _ in range(3):
            scraped = requests.get(
                f"http://127.0.0.1:{port}/metrics",
                headers={"Authorization": "Bearer scrape-me"},
                timeout=10,
            )
            assert scraped.status_code == 200
            assert _requests_counted(scraped.text, status="401") == 30
        assert len({p.name.rsplit("_", 1)[1] for p in tmp_path.glob("counter_*.db")}) >= 2
        # Open consoles: event streams, which never end by themselves.
        reader = django_user_model.objects.create_user("reader", password="x")
        streams = [
            Events(session_for(reader), f"http://127.0.0.1:{port}/events/?page=my-tickets")
            for _ in range(3)
        ]
        assert [s.response.status_code for s in streams] == [200] * 3
        assert all(s.response.headers["Content-Type"] == "text/event-stream" for s in streams)
    finally:
        stopping = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=40)
    took = time.monotonic() - stopping
    log = proc.stderr.read().decode()
    assert code == 0, log[-2000:]
    assert "Shutting down: Master" in log
    # The streams ended rather than holding their workers for the 30 s graceful timeout.
    assert took < 15, log[-2000:]
    for opened in streams:
        opened.thread.join(timeout=5)
        assert not opened.thread.is_alive()


def _requests_counted(exposition: str, *, status: str) -> float:
    from prometheus_client.parser import text_string_to_metric_families

    return sum(
        sample.value
        for family in text_string_to_metric_families(exposition)
        for sample in family.samples
        if sample.name == "http_requests_total"
        and sample.labels["status"] == status
        and "tickets" in sample.labels["route"]
    )


def _test_database_url() -> str:
    """DATABASE_URL with the test database's name: same server, same options (a socket
    directory for the embedded server travels in the query string)."""
    from urllib.parse import urlsplit, urlunsplit

    from django.db import connection

    parts = urlsplit(os.environ["DATABASE_URL"])
    return urlunsplit(parts._replace(path=f"/{connection.settings_dict['NAME']}"))


def test_the_broker_redelivers_nothing_the_code_delays_on_purpose():
    visibility = settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"]
    assert visibility > max(MAX_OFFER_TIMEOUT_SECONDS, BACKOFF_CAP_SECONDS)


def test_python_m_runtime_refuses_an_unknown_process():
    result = subprocess.run(
        [sys.executable, "-m", "runtime", "nonsense"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode != 0 and "usage" in result.stderr
