"""Open consoles on one node: API latency with 0 and with N open live pages (Server-Sent
Events streams, GET /events/) side by side, and how fast an event reaches all of them.

One node = the web process runtime/commands.py names (gunicorn with uvicorn workers,
WEB_CONCURRENCY=2, production settings) against a dedicated database and the real Redis.
The consoles are N streams of one agent's ticket page, opened by one asyncio client; the API
figure is GET /api/tickets/ from 4 threads; delivery is from XADD to the frame's arrival at
each console. Run under `flock /tmp/ticketdesk-bench.lock`.

    python bench/consoles.py [--consoles 500] [--requests 400]"""

import argparse
import asyncio
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import ROOT, median, percentile, setup_django  # noqa: E402

PASSWORD = "bench-pw"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def build_world():
    from tests.factories import ApproverFactory, HandlerGroupFactory, UserFactory
    from workflow import services

    run = int(time.time())
    agent = UserFactory(username=f"bench_agent_{run}", password=PASSWORD)
    applicant = UserFactory(username=f"bench_applicant_{run}", password=PASSWORD)
    approver = ApproverFactory(username=f"bench_approver_{run}")
    group = HandlerGroupFactory(name=f"Bench {time.time()}", members=[agent], assign_strategy=0)
    ticket = services.ticket_submit(
        creator=applicant, title="Bench", content="Bench.", priority=3, handler_group_id=group.pk
    )
    services.ticket_approve(ticket_id=ticket.pk, approver=approver)
    # A hash the server's (production) hashers read: the test settings hash with MD5.
    from django.contrib.auth.hashers import PBKDF2PasswordHasher

    hasher = PBKDF2PasswordHasher()
    agent.password = hasher.encode(PASSWORD, hasher.salt(), iterations=1000)
    agent.save(update_fields=["password"])
    return ticket, agent.username


def start_web(port: int) -> subprocess.Popen:
    from runtime.commands import web_command

    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DJANGO_SECRET_KEY": "consoles-bench-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz",
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "SECURE_SSL_REDIRECT": "false",
        "SESSION_COOKIE_SECURE": "false",
        "CSRF_COOKIE_SECURE": "false",
        "THROTTLE_USER": "1000000/min",
        "THROTTLE_ANON": "1000000/min",
        "LOG_LEVEL": "WARNING",
        "PROMETHEUS_MULTIPROC_DIR": tempfile.mkdtemp(prefix="consoles-metrics-"),
        "WEB_BIND": f"127.0.0.1:{port}",
        "WEB_CONCURRENCY": "2",
        "WEB_THREADS": "4",
        "WEB_KEEPALIVE": "75",
    }
    log = open(Path(tempfile.gettempdir()) / "consoles-web.log", "ab")  # noqa: SIM115
    return subprocess.Popen(
        web_command(env),
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def log_in(base: str, username: str):
    import requests

    session = requests.Session()
    session.get(f"{base}/accounts/login/", timeout=10)
    session.post(
        f"{base}/accounts/login/",
        data={
            "username": username,
            "password": PASSWORD,
            "csrfmiddlewaretoken": session.cookies["csrftoken"],
        },
        headers={"Referer": f"{base}/accounts/login/"},
        timeout=10,
    )
    assert "sessionid" in session.cookies, "log-in failed"
    return session


def api_latency(base: str, cookies: dict, count: int) -> list[float]:
    import requests

    local = threading.local()

    def one(_):
        if not hasattr(local, "s"):
            local.s = requests.Session()
            local.s.cookies.update(cookies)
        started = time.perf_counter()
        response = local.s.get(f"{base}/api/tickets/", timeout=30)
        assert response.status_code == 200, response.status_code
        return (time.perf_counter() - started) * 1000

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(one, range(20)))  # warm-up
        return list(pool.map(one, range(count)))


class Consoles:
    """N open streams in one asyncio loop (its own thread); arrival times by event id."""

    def __init__(self, port: int, cookie: str, ticket_id: int, n: int):
        self.port, self.cookie, self.ticket_id, self.n = port, cookie, ticket_id, n
        self.arrivals: dict[str, list[float]] = {}
        self.open = 0
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.writers: list = []

    async def _one(self):
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        self.writers.append(writer)
        path = f"/events/?page=ticket&ticket={self.ticket_id}"
        writer.write(
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: sessionid={self.cookie}\r\n"
            "Accept: text/event-stream\r\n\r\n".encode()
        )
        await writer.drain()
        status = await reader.readline()
        assert b"200" in status, status
        self.open += 1
        entry_id = None
        while True:
            line = await reader.readline()
            if not line:
                return
            if line.startswith(b"id: "):
                entry_id = line[4:].strip().decode()
            elif line.startswith(b"data: ") and entry_id:
                self.arrivals.setdefault(entry_id, []).append(time.time())

    def connect(self) -> None:
        for _ in range(self.n):
            asyncio.run_coroutine_threadsafe(self._one(), self.loop)
            time.sleep(0.002)
        deadline = time.monotonic() + 60
        while self.open < self.n and time.monotonic() < deadline:
            time.sleep(0.1)

    async def _shutdown(self) -> None:
        for writer in self.writers:
            writer.close()
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self._shutdown(), self.loop).result(timeout=30)
        self.loop.call_soon_threadsafe(self.loop.stop)


def delivery(consoles: Consoles, ticket, events_count: int) -> list[float]:
    from live import events

    sent = {}
    for _ in range(events_count):
        payload = events.event(
            kind="reply",
            ticket_id=ticket.pk,
            audience=events.PUBLIC,
            creator_id=ticket.creator_id,
            handler_id=None,
            group_id=ticket.handler_group_id,
        )
        at = time.time()
        entry_id = events.publish_now(payload)
        sent[entry_id] = at
        time.sleep(0.5)
    time.sleep(3)
    return [
        (arrived - sent[entry_id]) * 1000
        for entry_id, times in consoles.arrivals.items()
        if entry_id in sent
        for arrived in times
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--consoles", type=int, default=500)
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--events", type=int, default=10)
    args = parser.parse_args()
    setup_django("ticketdesk_bench_consoles")
    import requests

    ticket, username = build_world()
    port = free_port()
    web = start_web(port)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                if requests.get(f"{base}/healthz", timeout=2).status_code == 200:
                    break
            except requests.RequestException:
                time.sleep(0.5)
        session = log_in(base, username)
        cookies = session.cookies.get_dict()
        idle = api_latency(base, cookies, args.requests)
        consoles = Consoles(port, cookies["sessionid"], ticket.pk, args.consoles)
        consoles.connect()
        time.sleep(2)
        busy = api_latency(base, cookies, args.requests)
        delivered = delivery(consoles, ticket, args.events)
        expected = args.events * consoles.open
        consoles.close()
    finally:
        os.killpg(web.pid, signal.SIGTERM)
        web.wait(timeout=60)
    print(f"one node: gunicorn + uvicorn workers, WEB_CONCURRENCY=2, {os.cpu_count()} cores")
    print(f"{'open consoles':>14} | {'GET /api/tickets/ p50':>22} | {'p95':>8}")
    print(f"{0:>14} | {median(idle):>19.1f} ms | {percentile(idle, 95):>5.1f} ms")
    print(f"{consoles.open:>14} | {median(busy):>19.1f} ms | {percentile(busy, 95):>5.1f} ms")
    print(
        f"event delivery to {consoles.open} consoles: {len(delivered)} of {expected} frames, "
        f"median {median(delivered):.1f} ms, p95 {percentile(delivered, 95):.1f} ms"
    )


if __name__ == "__main__":
    main()
