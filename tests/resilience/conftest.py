import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
import redis


class PrivateRedis:
    """A redis-server of this test's own, on a free port, that the test stops and starts again
    (empty) on the same port — never the shared one."""

    def __init__(self, data_dir: Path):
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        self.data_dir = data_dir
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._proc: subprocess.Popen | None = None

    def start(self) -> None:
        argv = ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port), "--save", "",
                "--appendonly", "no", "--dir", str(self.data_dir)]  # fmt: skip
        self._proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, start_new_session=True)
        client = redis.Redis(port=self.port, socket_timeout=1)
        deadline = time.monotonic() + 20
        while True:
            try:
                client.ping()
                return
            except redis.ConnectionError:
                assert self._proc.poll() is None, "redis-server exited"
                assert time.monotonic() < deadline, "redis-server did not answer"
                time.sleep(0.05)

    def stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            os.kill(self._proc.pid, signal.SIGKILL)  # as a crash: no save, no goodbye
            self._proc.wait(timeout=10)
        self._proc = None

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, socket_timeout=1, decode_responses=True)


@pytest.fixture
def private_redis(tmp_path, settings):
    """Every Redis client of the request path (cache and throttles, routing, queue ranking,
    the Celery broker) pointed at a private Redis."""
    from celery import current_app

    # Celery's conf reads CELERY_BROKER_URL from Django's settings when nothing overrides it:
    # note what it overrides before the settings change, and put exactly that back.
    conf = current_app.conf
    unset = object()
    saved_url = conf.changes.get("broker_url", unset)
    server = PrivateRedis(tmp_path)
    server.start()
    settings.REDIS_URL = server.url
    settings.CACHES = {
        **settings.CACHES,
        "default": {**settings.CACHES["default"], "LOCATION": server.url},
    }
    settings.ASSIGNMENT_REDIS_URL = server.url
    settings.QUEUEING_REDIS_URL = server.url
    settings.CELERY_BROKER_URL = server.url
    _fresh_broker_pools(current_app)
    conf.broker_url = server.url
    try:
        yield server
    finally:
        server.stop()
        if saved_url is unset:
            conf.changes.pop("broker_url", None)
        else:
            conf.changes["broker_url"] = saved_url
        # kombu keeps one pool per broker in a process-wide registry, and a pool the outage
        # closed stays closed: start later tests on new pools, not on one this test broke.
        _fresh_broker_pools(current_app)


def _fresh_broker_pools(app) -> None:
    from kombu import pools

    pools.reset()
    app._pool = None
    app.amqp._producer_pool = None
