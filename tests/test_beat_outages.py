"""Beat rides out PostgreSQL and Redis going away: a real beat (production settings) reaches
both through a TCP relay the test can cut — every connection dropped and new ones refused, as
a server that crashed or a network that broke — and must stay up and resume sending once
they are back, starting with the database down included. The worker and the servers
themselves are real and untouched (they are shared)."""

import os
import socket
import threading
import time
from urllib.parse import urlsplit, urlunsplit

import pytest
import redis
from django.db import connection

from runtime.commands import beat_command, worker_command
from tests.test_beat_two_nodes import TOKEN, Node, _runs, _schedule_the_tick, _wait_for


class Relay:
    """127.0.0.1:<port> forwarded to a server; `cut()` drops every connection and refuses new
    ones until `restore()`."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self._lock = threading.Lock()
        self._sockets: set[socket.socket] = set()
        self._listener: socket.socket | None = None
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.restore()

    def restore(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", self.port))
        threading.Thread(target=self._accept, args=(self._listener,), daemon=True).start()

    def cut(self) -> None:
        with self._lock:
            if self._listener is not None:
                try:  # wakes the thread blocked in accept() so the port is free again
                    self._listener.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                self._listener.close()
                self._listener = None
            for sock in self._sockets:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                sock.close()
            self._sockets.clear()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            server.settimeout(None)
            with self._lock:
                self._sockets |= {client, server}
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while chunk := source.recv(65536):
                sink.sendall(chunk)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


def _through(url: str, relay: Relay, path: str | None = None) -> str:
    parts = urlsplit(url)
    netloc = parts.netloc.rsplit("@", 1)
    netloc[-1] = f"127.0.0.1:{relay.port}"
    return urlunsplit(parts._replace(netloc="@".join(netloc), path=path or parts.path))


@pytest.mark.django_db(transaction=True)
def test_beat_survives_postgresql_and_redis_going_away_and_resumes(client, settings, tmp_path):
    _schedule_the_tick()
    broker = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    redis.Redis.from_url(broker).flushdb()
    database = urlunsplit(
        urlsplit(os.environ["DATABASE_URL"])._replace(path=f"/{connection.settings_dict['NAME']}")
    )
    db_parts, redis_parts = urlsplit(database), urlsplit(broker)
    postgres = Relay(db_parts.hostname or "127.0.0.1", db_parts.port or 5432)
    broker_relay = Relay(redis_parts.hostname or "127.0.0.1", redis_parts.port or 6379)
    metrics_dir = tmp_path / "metrics"
    metrics_dir.mkdir()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DJANGO_SECRET_KEY": "outages-" + "x" * 50,
        "DJANGO_ALLOWED_HOSTS": "localhost",
        "DATABASE_URL": database,
        "REDIS_URL": broker,
        "CELERY_BROKER_URL": broker,
        "LOG_LEVEL": "INFO",
        "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir),
        "CELERY_CONCURRENCY": "2",
    }
    beat_env = {
        **env,
        "DATABASE_URL": _through(database, postgres),
        "REDIS_URL": _through(broker, broker_relay),
        "CELERY_BROKER_URL": _through(broker, broker_relay),
    }
    settings.METRICS_TOKEN = TOKEN
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(metrics_dir)

    def ticks() -> float:
        return _runs(client).get("sla.tick", 0)

    postgres.cut()  # beat starts with the database down
    worker = Node("worker", worker_command(env), env, tmp_path / "worker.out")
    beat = Node("beat", beat_command(beat_env), beat_env, tmp_path / "beat.out")
    try:
        _wait_for(lambda: "database unavailable at start" in beat.log(), 60, [worker, beat])
        time.sleep(3)  # ticking on, not exiting into a supervisor's restart loop
        assert beat.alive(), beat.log()
        assert ticks() == 0
        postgres.restore()
        _wait_for(lambda: ticks() >= 2, 40, [worker, beat])

        for relay, what in ((postgres, "PostgreSQL"), (broker_relay, "Redis")):
            relay.cut()
            # A tick sent just before may still start (its message expires after 2 s, but a
            # busy worker's pool may start one it received in time a little later).
            time.sleep(4)
            during = ticks()
            time.sleep(2.5)
            assert beat.alive(), (what, beat.log())
            assert ticks() == during, what  # nothing sent while it was away
            relay.restore()
            back = time.monotonic()
            _wait_for(lambda during=during: ticks() > during, 20, [worker, beat])
            assert time.monotonic() - back < 20, what
        assert beat.alive(), beat.log()
    finally:
        beat.stop()
        worker.stop()
        postgres.cut()
        broker_relay.cut()
        os.environ.pop("PROMETHEUS_MULTIPROC_DIR", None)
