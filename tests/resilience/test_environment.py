"""The environment as operators write it: LOG_LEVEL in any case starts every process (web,
worker, beat, each from its production command line); production honours EMAIL_BACKEND."""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
import requests
from celery import current_app
from django.db import connection

from runtime.commands import beat_command, web_command, worker_command

ROOT = Path(__file__).resolve().parents[2]
PRODUCTION_ENV = {
    "DJANGO_SETTINGS_MODULE": "config.settings.production",
    "DJANGO_SECRET_KEY": "k3y-" + "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMN",
    "DJANGO_ALLOWED_HOSTS": "127.0.0.1,desk.example.com",
    "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/ticketdesk",
    "REDIS_URL": "redis://127.0.0.1:6379/0",
}


def _settings_say(code: str, **overrides: str) -> str:
    env = {k: v for k, v in os.environ.items() if k not in {"EMAIL_BACKEND", "EMAIL_URL"}}
    env.update(PRODUCTION_ENV, **overrides)
    setup = "import django; django.setup(); from django.conf import settings; "
    result = subprocess.run(
        [sys.executable, "-c", setup + code],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout.strip()


@pytest.mark.parametrize("level", ["info", "Info", "INFO", " warning "])
@pytest.mark.parametrize("module", ["config.settings.production", "config.settings.test"])
def test_log_level_is_read_in_any_case(level, module):
    said = _settings_say(
        "import logging; print(logging.getLevelName(logging.getLogger().level))",
        LOG_LEVEL=level,
        DJANGO_SETTINGS_MODULE=module,
    )
    assert said == level.strip().upper()


def test_production_honours_email_backend():
    code = (
        "from django.core.mail import get_connection; c = get_connection(); "
        "print(settings.EMAIL_BACKEND, type(c).__module__ + '.' + type(c).__name__, "
        "settings.EMAIL_HOST)"
    )
    chosen = _settings_say(
        code,
        EMAIL_BACKEND="django.core.mail.backends.console.EmailBackend",
        EMAIL_URL="smtp://mail.example.com:587",
    )
    assert chosen.split() == [
        "django.core.mail.backends.console.EmailBackend",
        "django.core.mail.backends.console.EmailBackend",
        "mail.example.com",
    ]
    # Unset, the SMTP server of EMAIL_URL (the documented default).
    default = _settings_say(code, EMAIL_URL="smtp://mail.example.com:587").split()
    assert default[0] == "django.core.mail.backends.smtp.EmailBackend" and default[2] == (
        "mail.example.com"
    )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.django_db(transaction=True)
def test_web_worker_and_beat_start_with_a_lower_case_log_level(tmp_path, settings):
    port = _free_port()
    database = urlsplit(os.environ.get("DATABASE_URL", PRODUCTION_ENV["DATABASE_URL"]))
    broker = settings.CELERY_BROKER_URL  # this run's Redis database, which the worker joins
    env = {
        **os.environ,
        **PRODUCTION_ENV,
        "DATABASE_URL": urlunsplit(database._replace(path=f"/{connection.settings_dict['NAME']}")),
        "REDIS_URL": broker,
        "CELERY_BROKER_URL": broker,
        "SECURE_SSL_REDIRECT": "false",
        "LOG_LEVEL": "info",
        "WEB_BIND": f"127.0.0.1:{port}",
        "WEB_CONCURRENCY": "1",
        "CELERY_CONCURRENCY": "1",
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path),
    }
    logs = {name: tmp_path / f"{name}.log" for name in ("web", "worker", "beat")}
    processes = {
        name: subprocess.Popen(
            command(env), cwd=ROOT, env=env, stdout=logs[name].open("wb"),
            stderr=subprocess.STDOUT, start_new_session=True,
        )
        for name, command in (("web", web_command), ("worker", worker_command),
                              ("beat", beat_command))
    }  # fmt: skip

    def alive() -> None:
        for name, process in processes.items():
            assert process.poll() is None, f"{name} stopped: {logs[name].read_text()[-2000:]}"

    try:
        deadline = time.monotonic() + 180  # a loaded machine boots the project slowly
        while True:
            alive()
            try:
                if requests.get(f"http://127.0.0.1:{port}/healthz", timeout=2).ok:
                    break
            except (requests.ConnectionError, requests.Timeout):
                pass
            assert time.monotonic() < deadline, "gunicorn did not answer"
            time.sleep(0.5)
        # A connection of its own: an earlier test may have closed the app's pool.
        with current_app.connection_for_write(url=broker) as broker_connection:
            while not current_app.control.ping(timeout=1, connection=broker_connection):
                alive()
                assert time.monotonic() < deadline, "the worker did not answer a ping"
        alive()  # beat, too, after all this time
    finally:
        for process in processes.values():
            os.killpg(process.pid, signal.SIGTERM)
        for process in processes.values():
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:  # fail, but leave nothing running
                os.killpg(process.pid, signal.SIGKILL)
                raise
    for name in ("web", "worker", "beat"):
        assert "Unknown level" not in logs[name].read_text()
