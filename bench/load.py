"""Load run against the production stack on this machine (issue 11, "proven under load").

Starts the project's own production command lines (runtime/commands.py) with production
settings: gunicorn with 4 uvicorn workers (config.asgi; the views in WEB_THREADS threads
each), Celery workers for critical and for slow work with 2 processes each, one beat, on the
real PostgreSQL and Redis named by DATABASE_URL / REDIS_URL (a dedicated database,
`ticketdesk_load`, and the Redis database in REDIS_URL, which is flushed). Then:

- 200 agents in 10 groups (strategies round robin, least load, online priority, longest idle
  in turn; presence required, 5 active tickets each at most; the longest-idle groups offer
  with a 120 s timeout) heartbeat every 15 s, look at their work every 10 s, accept what they
  were given and complete it 5–20 s later;
- applicants submit tickets and approvers approve them at a steady rate for 60 s (open loop:
  the schedule does not wait for the server); beat runs the minute SLA scan and the sweeps.

Reported: requests/s, p50/p95/p99 latency and 5xx per endpoint, PostgreSQL connections at
peak, and the consistency checks once the work has settled — every approved ticket assigned or
waiting in exactly one pool, no agent above max_active, every assignment notified exactly
once, the outbox drained, and /metrics (added up over every process) counting the very
requests the clients made. Then a search: steps of rising approval rate, each held steady,
until approval p95 reaches 100 ms; the highest rate under it is reported.

`--make-run` drives what `make run` starts instead: `python -m devserver.run` itself (its
settings, config.settings.local; its process counts, gunicorn 2 workers × 4 threads; its
log level), on the same database and Redis, on a free PORT, stopped with SIGTERM as Ctrl-C
stops it. Only the demo history is left out (DEMO_HISTORY_DAYS=0): the checks count every
ticket in the database. `--stack both` runs the production stack and then `make run`'s, the
same load on each, and prints their figures side by side with the ratios.

`--pgbouncer` runs the production stack twice, the same load on each: on the database
directly, then through a PgBouncer in transaction pooling mode (devserver/services.py,
Debian's package, installed when missing) with DB_PREPARED_STATEMENTS=false, as a deployment
behind one runs; the checks must hold on both, and the figures are printed side by side.
BENCH_DATABASE names the load database (default ticketdesk_load).

`--nodes 2` runs two whole production stacks (gunicorn, worker and beat each, each with its
own metrics directory) on the one PostgreSQL and Redis, as two app nodes behind one database:
each agent keeps to one node, tickets are submitted on one node and approved on the other;
the consistency checks are the same, and the main run's figures are given per node and in
total (each node's /metrics must count the requests made to it).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres REDIS_URL=redis://127.0.0.1:6379/7 \\
        .venv/bin/python bench/load.py [--rate 4] [--seconds 60] [--search 4,8,12,16,20,24,32] \\
        [--make-run | --stack production|make-run|both | --pgbouncer] [--nodes 2]
"""

from __future__ import annotations

import argparse
import heapq
import itertools
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (  # noqa: E402
    ROOT,
    median,
    percentile,
    restore_default_ladders,
    setup_django,
)

DATABASE = os.environ.get("BENCH_DATABASE") or "ticketdesk_load"
GROUPS = 10
AGENTS = 200
STRATEGIES = (1, 2, 3, 4)  # round robin, least load, online priority, longest idle
MAX_ACTIVE = 5
HEARTBEAT_SECONDS = 15
POLL_SECONDS = 10
HANDLE_SECONDS = (5, 20)
APPROVAL_P95_TARGET_MS = 100
METRICS_TOKEN = "load-run-metrics"
RETRY_SECONDS = 60  # how long a client keeps retrying a submit, an approval or a completion


# The stack -------------------------------------------------------------------------------------


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Stack:
    """web (gunicorn, 4 workers), the critical worker (2 processes), the slow worker (2) and
    beat — every long-running process runtime/commands.py names — with production settings;
    stopped with SIGTERM as a supervisor would."""

    def __init__(self, database_url: str, redis_url: str, *, node: int = 1):
        from runtime.commands import COMMANDS

        self.node = node
        self.port = _free_port()
        # One metrics directory per node: each node's /metrics adds up its own processes.
        self.metrics_dir = tempfile.mkdtemp(prefix=f"load-metrics-node{node}-")
        self.logs = Path(tempfile.mkdtemp(prefix=f"load-logs-node{node}-"))
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings.production",
            "DJANGO_SECRET_KEY": "load-run-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz",
            "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
            "DATABASE_URL": database_url,
            "REDIS_URL": redis_url,
            "SECURE_SSL_REDIRECT": "false",
            "THROTTLE_USER": "1000000/min",
            "THROTTLE_ANON": "1000000/min",
            "EMAIL_BACKEND": "django.core.mail.backends.dummy.EmailBackend",
            "LOG_LEVEL": "WARNING",
            "METRICS_TOKEN": METRICS_TOKEN,
            "PROMETHEUS_MULTIPROC_DIR": self.metrics_dir,
            "WEB_BIND": f"127.0.0.1:{self.port}",
            "WEB_CONCURRENCY": "4",
            "WEB_THREADS": "4",
            # As behind a proxy: idle client connections stay open (no close/reuse race).
            "WEB_KEEPALIVE": "75",
            "CELERY_CONCURRENCY": "2",
            "REFERENCE_CACHE_SECONDS": "5",
        }
        self.env = env
        # Every long-running process a deployment runs (all but the one-shot migrate), by its
        # name in runtime/commands.py; bench/faults.py stops and starts them by that name.
        self.commands = {
            name: command(env) for name, command in COMMANDS.items() if name != "migrate"
        }
        self.processes: dict[str, subprocess.Popen] = {}
        for name in self.commands:
            self.start(name)
        self.base = f"http://127.0.0.1:{self.port}"
        self._wait_ready()

    def start(self, name: str) -> None:
        """Start (or start again) one of the stack's processes; its log is appended to."""
        log = open(self.logs / f"{name}.log", "ab")  # noqa: SIM115 (closed with the process)
        self.processes[name] = subprocess.Popen(
            self.commands[name],
            cwd=ROOT,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def stop_process(self, name: str, sig: int = signal.SIGTERM, timeout: float = 60) -> int:
        """Stop one process (its whole process group) as a supervisor would; its exit code."""
        proc = self.processes[name]
        if proc.poll() is None:
            os.killpg(proc.pid, sig)
        try:
            return proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            return proc.wait()

    def _wait_ready(self, timeout: float = 90) -> None:
        import requests

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for name, proc in self.processes.items():
                if proc.poll() is not None:
                    raise RuntimeError(f"{name} exited: see the logs in {self.logs}")
            try:
                if requests.get(f"{self.base}/readyz", timeout=5).status_code == 200:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.5)
        raise RuntimeError(f"the stack did not become ready in {timeout:.0f} s")

    label = "production settings: gunicorn 4 workers × 4 threads, Celery 2 + 2 processes, beat"

    def stop(self) -> dict[str, int]:
        for proc in self.processes.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        codes = {}
        for name, proc in self.processes.items():
            try:
                codes[name] = proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                codes[name] = proc.wait()
        return codes


class MakeRunStack:
    """What `make run` starts: `python -m devserver.run` with DATABASE_URL and REDIS_URL given
    (so no embedded servers) and a free PORT; it migrates, collects static files, seeds the
    demo data and starts gunicorn, a worker and beat with its own settings and defaults.
    Stopped with SIGTERM to the runner, as Ctrl-C or a supervisor stops it."""

    # What the bench process itself sets (setup_django) or a shell may carry that would make
    # this something other than `make run` with its defaults.
    NOT_INHERITED = (
        "DJANGO_SETTINGS_MODULE",
        "LOG_LEVEL",
        "DJANGO_DEBUG",
        "DB_CONN_MAX_AGE",
        "WEB_SERVER",
        "WEB_CONCURRENCY",
        "WEB_THREADS",
        "WEB_KEEPALIVE",
        "CELERY_CONCURRENCY",
        "HOST",
    )
    label = "make run: python -m devserver.run (config.settings.local, gunicorn 4 × 4 threads)"

    def __init__(self, database_url: str, redis_url: str):
        self.port = _free_port()
        self.metrics_dir = tempfile.mkdtemp(prefix="load-metrics-")
        self.logs = Path(tempfile.mkdtemp(prefix="load-logs-"))
        env = {k: v for k, v in os.environ.items() if k not in self.NOT_INHERITED}
        env.update(
            {
                "DATABASE_URL": database_url,
                "REDIS_URL": redis_url,
                "PORT": str(self.port),
                "PROMETHEUS_MULTIPROC_DIR": self.metrics_dir,
                "METRICS_TOKEN": METRICS_TOKEN,
                # The checks below count every ticket in the database: no demo history.
                "DEMO_HISTORY_DAYS": "0",
            }
        )
        log = open(self.logs / "make-run.log", "wb")  # noqa: SIM115 (closed with the process)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "devserver.run"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.processes = {"make run": self.process}
        self.base = f"http://127.0.0.1:{self.port}"
        try:  # migrate, collectstatic and seed_demo come first
            Stack._wait_ready(self, timeout=300)
        except BaseException:
            self.stop()
            raise

    def stop(self) -> dict[str, int]:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout=90)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            code = self.process.wait()
        return {"make run": code}


class PgBouncerStack(Stack):
    """The production stack with DATABASE_URL through a PgBouncer (transaction pooling) in
    front of the load database's server, and DB_PREPARED_STATEMENTS=false."""

    label = "production settings through PgBouncer (transaction pooling), no prepared statements"

    def __init__(self, database_url: str, redis_url: str):
        from devserver.services import EmbeddedPgBouncer

        self.pgbouncer = EmbeddedPgBouncer(
            Path(tempfile.mkdtemp(prefix="load-pgbouncer-")) / "pgbouncer", database_url
        )
        self.pgbouncer.start()
        try:
            super().__init__(self.pgbouncer.url_for(database_url), redis_url)
        except BaseException:
            self.pgbouncer.stop()
            raise

    def _start(self, name, argv, env) -> None:
        super()._start(name, argv, {**env, "DB_PREPARED_STATEMENTS": "false"})

    def stop(self) -> dict[str, int]:
        try:
            return super().stop()
        finally:
            import psycopg

            try:
                stats = self.pgbouncer.show("STATS")
                pooled = sum(
                    int(str(r["total_xact_count"])) for r in stats if r["database"] == DATABASE
                )
                print(f"  PgBouncer pooled {pooled} transactions on {DATABASE}")
            except psycopg.Error as exc:
                print(f"  PgBouncer's figures could not be read: {exc}")
            self.pgbouncer.stop()


# Data --------------------------------------------------------------------------------------------


@dataclass
class World:
    agents: list[tuple[int, str]]  # (user id, token)
    applicants: list[str]
    approvers: list[str]
    groups: list[int]
    max_active: dict[int, int]  # group id -> max active per member


def build_world(redis_url: str, *, agents: int = AGENTS, groups: int = GROUPS) -> World:
    """Empty the load database and Redis, then make `agents` agents in `groups` groups (as
    described above), 4 approvers and 40 applicants, each with an API token."""
    return _build_world(redis_url, agents, groups)


def _build_world(redis_url: str, agent_count: int, group_count: int) -> World:
    import redis
    from django.contrib.auth.models import Permission, User
    from django.db import connection
    from knox.models import AuthToken

    from handler_groups.services import handler_group_save

    with connection.cursor() as cursor:
        cursor.execute(
            "TRUNCATE oa_ticket_bill, oa_ticket_record, oa_ticket_reply, oa_ticket_handler_group, "
            "oa_assignment_event, oa_notification, oa_notify_outbox, oa_agent_presence, "
            "oa_sla_clock_segment, oa_sla_outcome, oa_handler_load, knox_authtoken "
            "RESTART IDENTITY CASCADE"
        )
    redis.Redis.from_url(redis_url).flushdb()
    restore_default_ladders()

    def user(name: str) -> User:
        return User.objects.get_or_create(username=name)[0]

    agents = [user(f"load_agent{i:03d}") for i in range(agent_count)]
    per_group = agent_count // group_count
    groups, max_active = [], {}
    for g in range(group_count):
        strategy = STRATEGIES[g % len(STRATEGIES)]
        group = handler_group_save(
            name=f"load group {g}",
            member_ids=[a.pk for a in agents[g * per_group : (g + 1) * per_group]],
            assign_strategy=strategy,
            status=1,
            requires_presence=True,
            max_active=MAX_ACTIVE,
            offer_timeout_seconds=120 if strategy == 4 else None,
        )
        groups.append(group.pk)
        max_active[group.pk] = MAX_ACTIVE
    approve = Permission.objects.get(codename="approve_ticket")
    approvers = [user(f"load_approver{i}") for i in range(4)]
    for approver in approvers:
        approver.user_permissions.add(approve)
    applicants = [user(f"load_applicant{i:02d}") for i in range(40)]

    def token(u: User) -> str:
        return AuthToken.objects.create(user=u)[1]

    return World(
        agents=[(a.pk, token(a)) for a in agents],
        applicants=[token(u) for u in applicants],
        approvers=[token(u) for u in approvers],
        groups=groups,
        max_active=max_active,
    )


# The load ----------------------------------------------------------------------------------------


@dataclass
class Sample:
    endpoint: str
    started: float
    seconds: float
    status: int
    node: int = 1  # which stack answered (bench/load.py --nodes)


@dataclass
class Recorder:
    samples: list[Sample] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    behind: list[float] = field(default_factory=list)  # approvals: start - scheduled (s)

    def add(self, sample: Sample) -> None:
        with self.lock:
            self.samples.append(sample)


class Load:
    """An open-loop scheduler: jobs run at their time on a pool of threads, each with its own
    HTTP session (keep-alive), whatever the server's pace."""

    def __init__(
        self, bases: str | list[str], world: World, threads: int = 48, *, retry: bool = False
    ):
        # One base URL per node; each agent keeps to one node, tickets alternate between them.
        self.bases = [bases] if isinstance(bases, str) else list(bases)
        self.base = self.bases[0]
        self.retry = retry
        self.world = world
        self.recorder = Recorder()
        self.queue: list = []
        self.cv = threading.Condition()
        self.seq = itertools.count()
        self.stopping = False
        self.local = threading.local()
        self.rng = random.Random(7)
        self.approved = 0
        self.threads = [threading.Thread(target=self._run, daemon=True) for _ in range(threads)]
        for thread in self.threads:
            thread.start()

    # scheduling
    def at(self, when: float, job, *args) -> None:
        with self.cv:
            heapq.heappush(self.queue, (when, next(self.seq), job, args))
            self.cv.notify()

    def _run(self) -> None:
        import requests

        self.local.session = requests.Session()
        while True:
            with self.cv:
                while not self.stopping and (not self.queue or self.queue[0][0] > time.monotonic()):
                    timeout = self.queue[0][0] - time.monotonic() if self.queue else 0.5
                    self.cv.wait(max(min(timeout, 0.5), 0))
                if self.stopping:
                    return
                when, _n, job, args = heapq.heappop(self.queue)
            try:
                job(when, *args)
            except Exception as exc:  # a client-side failure (connection refused, timeout)
                self.recorder.add(Sample(f"client error ({job.__name__})", when, 0.0, 599))
                print(f"  client error in {job.__name__}: {type(exc).__name__}: {exc}")

    def stop(self) -> None:
        with self.cv:
            self.stopping = True
            self.cv.notify_all()
        for thread in self.threads:
            thread.join(timeout=30)

    def node_of(self, n: int) -> int:
        return 1 + n % len(self.bases)

    def call(
        self,
        endpoint: str,
        method: str,
        path: str,
        token: str,
        body=None,
        *,
        node: int = 1,
        headers: dict[str, str] | None = None,
    ):
        started = time.monotonic()
        try:
            response = self.local.session.request(
                method,
                self.bases[node - 1] + path,
                json=body,
                headers={"Authorization": f"Token {token}", **(headers or {})},
                timeout=30,
            )
        except Exception:
            if not self.retry:
                raise
            # A real client sees a refused or dropped connection; it counts as a failure.
            self.recorder.add(Sample(endpoint, started, time.monotonic() - started, 599, node))
            return None
        self.recorder.add(
            Sample(endpoint, started, time.monotonic() - started, response.status_code, node)
        )
        return response

    def call_retrying(self, endpoint: str, method: str, path: str, token: str, body=None, **kw):
        """As a real client: on a 5xx or a dropped connection try again, backing off from 0.5 s
        to 4 s, for up to RETRY_SECONDS; every attempt is a sample. Without `retry`, once."""
        response = self.call(endpoint, method, path, token, body, **kw)
        if not self.retry:
            return response
        deadline = time.monotonic() + RETRY_SECONDS
        pause = 0.5
        while (response is None or response.status_code >= 500) and time.monotonic() < deadline:
            time.sleep(pause)
            pause = min(pause * 2, 4)
            response = self.call(endpoint, method, path, token, body, **kw)
        return response

    # agents
    def start_agents(self, until: float) -> None:
        now = time.monotonic()
        self.agents_until = until
        for i, (_user_id, token) in enumerate(self.world.agents):
            offset = HEARTBEAT_SECONDS * i / len(self.world.agents)
            node = self.node_of(i)
            self.at(now + offset, self.heartbeat, token, node)
            self.at(now + 2 + offset * POLL_SECONDS / HEARTBEAT_SECONDS, self.poll, token, node)

    def heartbeat(self, when: float, token: str, node: int = 1) -> None:
        if when + HEARTBEAT_SECONDS < self.agents_until:  # the next one, whatever this one does
            self.at(when + HEARTBEAT_SECONDS, self.heartbeat, token, node)
        self.call(
            "POST /api/presence/heartbeat/", "POST", "/api/presence/heartbeat/", token, node=node
        )

    def poll(self, when: float, token: str, node: int = 1) -> None:
        if when + POLL_SECONDS < self.agents_until:
            self.at(when + POLL_SECONDS, self.poll, token, node)
        response = self.call(
            "GET /api/tickets/pool/?view=my_handling",
            "GET",
            "/api/tickets/pool/?view=my_handling",
            token,
            node=node,
        )
        if response is not None and response.status_code == 200:
            for ticket in response.json()["results"]:
                if ticket["ticket_status"] == 2:  # assigned, not yet accepted
                    self.at(time.monotonic(), self.accept, token, ticket["id"], node)

    def accept(self, _when: float, token: str, ticket_id: int, node: int = 1) -> None:
        path = f"/api/tickets/{ticket_id}/accept/"
        response = self.call("POST /api/tickets/{id}/accept/", "POST", path, token, node=node)
        if response is not None and response.status_code == 200:
            self.at(
                time.monotonic() + self.rng.uniform(*HANDLE_SECONDS),
                self.complete,
                token,
                ticket_id,
                node,
            )

    def complete(self, _when: float, token: str, ticket_id: int, node: int = 1) -> None:
        path = f"/api/tickets/{ticket_id}/complete/"
        self.call_retrying("POST /api/tickets/{id}/complete/", "POST", path, token, node=node)

    # tickets
    def schedule_tickets(
        self,
        rate: float,
        seconds: float,
        start: float,
        *,
        first: int = 0,
        prefix: str = "load",
        **ticket,
    ) -> int:
        """`rate` tickets a second for `seconds` from `start`, numbered from `first`, titled
        `<prefix> <n>` (one title per submission: the checks count tickets per title)."""
        count = int(rate * seconds)
        for n in range(first, first + count):
            self.at(start + (n - first) / rate, self.submit_and_approve, n, prefix, ticket)
        return count

    def submit_and_approve(
        self, when: float, n: int, prefix: str = "load", ticket: dict | None = None
    ) -> None:
        ticket = ticket or {}
        applicant = self.world.applicants[n % len(self.world.applicants)]
        approver = self.world.approvers[n % len(self.world.approvers)]
        group = ticket.get("handler_group_id") or self.world.groups[n % len(self.world.groups)]
        body = {
            "title": f"{prefix} {n}",
            "content": "load run",
            "priority": 1 + n % 4,
            "handler_group_id": group,
            **ticket,
        }
        # Retried submits carry one key, so a retry after a lost answer makes no second ticket.
        key = {"Idempotency-Key": str(uuid.uuid4())} if self.retry else {}
        response = self.call_retrying(
            "POST /api/tickets/", "POST", "/api/tickets/", applicant, body,
            node=self.node_of(n), headers=key,
        )  # fmt: skip
        if response is None or response.status_code != 201:
            return
        ticket_id = response.json()["id"]
        self.recorder.behind.append(time.monotonic() - when)
        approved = self.call_retrying(
            "POST /api/tickets/{id}/approve/",
            "POST",
            f"/api/tickets/{ticket_id}/approve/",
            approver,
            node=self.node_of(n + 1),  # on two nodes, approved on the other one
        )
        if approved is not None and approved.status_code == 200:
            with self.recorder.lock:
                self.approved += 1


# Reports and checks --------------------------------------------------------------------------


def per_endpoint(samples: list[Sample]) -> None:
    by_endpoint: dict[str, list[Sample]] = defaultdict(list)
    for sample in samples:
        by_endpoint[sample.endpoint].append(sample)
    print(f"  {'endpoint':42} {'requests':>8} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'5xx':>5}")
    for endpoint, rows in sorted(by_endpoint.items()):
        ms = [s.seconds * 1000 for s in rows]
        errors = sum(1 for s in rows if s.status >= 500)
        print(
            f"  {endpoint:42} {len(rows):>8} {percentile(ms, 50):>8.1f} "
            f"{percentile(ms, 95):>8.1f} {percentile(ms, 99):>8.1f} {errors:>5}"
        )
    statuses = Counter(s.status for s in samples)
    print(f"  statuses: {dict(sorted(statuses.items()))}")


def approval_p95(samples: list[Sample]) -> float:
    ms = [s.seconds * 1000 for s in samples if s.endpoint == "POST /api/tickets/{id}/approve/"]
    return percentile(ms, 95)


def consistency_checks(counts: dict[str, int] | None = None) -> dict[str, bool]:
    """The checks by name; `counts`, when given, receives how many rows broke each check."""
    from django.db import connection

    checks = {}
    counts = {} if counts is None else counts
    with connection.cursor() as cursor:
        # Approved tickets: assigned to someone (pending process, processing, completed,
        # closed) or waiting in their group's pool (pending assign, no handler).
        cursor.execute(
            """
            SELECT count(*) FILTER (WHERE ticket_status = 1 AND handler_id IS NULL),
                   count(*) FILTER (WHERE ticket_status IN (2, 3, 4, 5) AND handler_id IS NOT NULL),
                   count(*)
            FROM oa_ticket_bill WHERE process_status = 2
            """
        )
        waiting, assigned, approved = cursor.fetchone()
        cursor.execute(
            "SELECT count(*) FROM oa_ticket_bill WHERE process_status = 2 "
            "AND handler_group_id IS NULL"
        )
        (no_group,) = cursor.fetchone()
        print(
            f"  approved {approved}: assigned {assigned}, waiting in a pool {waiting}, "
            f"without a group {no_group}"
        )
        checks["every approved ticket assigned or waiting in exactly one pool"] = (
            waiting + assigned == approved and no_group == 0
        )
        counts["every approved ticket assigned or waiting in exactly one pool"] = (
            approved - waiting - assigned + no_group
        )

        # Every submission has its own title: two tickets with one title are a retried submit
        # that made a second ticket.
        cursor.execute(
            "SELECT count(*), coalesce(sum(n - 1), 0) FROM (SELECT count(*) AS n "
            "FROM oa_ticket_bill GROUP BY title HAVING count(*) > 1) doubled"
        )
        doubled_titles, extra_tickets = cursor.fetchone()
        if doubled_titles:
            print(f"  submissions that made more than one ticket: {doubled_titles}")
        checks["every submission made one ticket"] = doubled_titles == 0
        counts["every submission made one ticket"] = int(extra_tickets)

        cursor.execute(
            """
            WITH events AS (
                SELECT ticket_id, user_id, count(*) AS n FROM oa_assignment_event
                WHERE kind = 'assigned' GROUP BY ticket_id, user_id),
            notices AS (
                SELECT ticket_id, recipient_id AS user_id, count(*) AS n FROM oa_notification
                WHERE template_code IN ('ticket-assigned', 'ticket-offered')
                GROUP BY ticket_id, recipient_id)
            SELECT (SELECT coalesce(sum(n), 0) FROM events),
                   count(*) FILTER (WHERE e.n IS DISTINCT FROM s.n)
            FROM events e FULL JOIN notices s USING (ticket_id, user_id)
            """
        )
        assignments, mismatched = cursor.fetchone()
        cursor.execute("SELECT count(*) FROM oa_assignment_event WHERE NOT notified")
        (unnotified,) = cursor.fetchone()
        print(
            f"  assignments {assignments}: (ticket, agent) pairs whose notices differ "
            f"{mismatched}, notices still owed {unnotified}"
        )
        checks["every assignment notified exactly once"] = mismatched == 0 and unnotified == 0
        counts["every assignment notified exactly once"] = mismatched + unnotified

        cursor.execute(
            "SELECT count(*) FROM oa_notify_outbox WHERE status IN ('pending', 'sending')"
        )
        (backlog,) = cursor.fetchone()
        checks["outbox drained"] = backlog == 0
        counts["outbox drained"] = backlog
    return checks


ACTIVE_PEAK_SQL = """
SELECT max(n) FROM (SELECT count(*) AS n FROM oa_ticket_bill
                    WHERE ticket_status IN (2, 3) GROUP BY handler_id) per_agent
"""


def server_counted_requests(base: str) -> float:
    import requests
    from prometheus_client.parser import text_string_to_metric_families

    text = requests.get(
        f"{base}/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"}, timeout=30
    ).text
    return sum(
        sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == "http_requests_total" and not sample.labels["route"].startswith("metrics")
    )


class Sampler:
    """Sampled every 0.5 s while the load runs: PostgreSQL connections to the load database
    and the most active tickets (assigned or in progress) any one agent holds."""

    def __init__(self):
        from django.conf import settings

        # setup_django pointed DATABASE_URL at the load database (a TCP or socket address).
        self.dsn = os.environ["DATABASE_URL"].replace("postgres://", "postgresql://", 1)
        self.database = settings.DATABASES["default"]["NAME"]
        self.conn = None
        self.peak = 0
        self.most_active = 0
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()

    def _sample(self) -> None:
        import psycopg

        while not self.stopping.wait(0.5):
            try:  # bench/faults.py restarts PostgreSQL under it: connect again
                if self.conn is None or self.conn.closed:
                    self.conn = psycopg.connect(self.dsn, autocommit=True, connect_timeout=2)
                (n,) = self.conn.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = %s", [self.database]
                ).fetchone()
                self.peak = max(self.peak, n)
                (active,) = self.conn.execute(ACTIVE_PEAK_SQL).fetchone()
                self.most_active = max(self.most_active, active or 0)
            except psycopg.Error:
                if self.conn is not None:
                    self.conn.close()
                self.conn = None

    def stop(self) -> int:
        self.stopping.set()
        self.thread.join()
        if self.conn is not None:
            self.conn.close()
        return self.peak


def progress(label: str, load: Load, start: float, seconds: float, planned: int) -> None:
    """Counts and ETA every 5 s while a phase runs."""
    while (elapsed := time.monotonic() - start) < seconds:
        time.sleep(min(5, max(seconds - elapsed, 0.1)))
        elapsed = min(time.monotonic() - start, seconds)
        print(
            f"  {label}: {elapsed:4.0f}/{seconds:.0f} s, {load.approved}/{planned} approved, "
            f"{len(load.recorder.samples)} requests, ETA {max(seconds - elapsed, 0):.0f} s",
            flush=True,
        )


def settle(load: Load, timeout: float = 90, *, except_groups: tuple[int, ...] = ()) -> bool:
    """Wait until no ticket is assigned-but-unaccepted or in progress (agents finish their work),
    nothing waits in a pool (but those of `except_groups`, which nobody serves), and the
    outbox is empty; False if that did not happen within `timeout`."""
    from django.db import connection

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM oa_ticket_bill WHERE process_status = 2 "
                "AND ticket_status IN (1, 2, 3) AND coalesce(handler_group_id, 0) <> ALL(%s)",
                [list(except_groups)],
            )
            (open_tickets,) = cursor.fetchone()
            cursor.execute(
                "SELECT count(*) FROM oa_notify_outbox WHERE status IN ('pending', 'sending')"
            )
            (backlog,) = cursor.fetchone()
        if open_tickets == 0 and backlog == 0:
            return True
        print(f"  settling: {open_tickets} open tickets, outbox {backlog}", flush=True)
        time.sleep(5)
    return False


def _interrupt(signum, _frame):
    raise KeyboardInterrupt(signal.Signals(signum).name)


STACKS = {"production": Stack, "make-run": MakeRunStack, "pgbouncer": PgBouncerStack}


def run_stack(kind: str, args: argparse.Namespace, redis_url: str, database_url: str) -> dict:
    """One whole load run (world, stack, main run, checks, search) against one stack; returns
    the figures the side-by-side table compares."""
    world = build_world(redis_url, agents=args.agents, groups=args.groups)
    print(f"  {args.agents} agents in {args.groups} groups (strategies {STRATEGIES}), tokens ready")
    stacks = start_stacks(kind, args.nodes, database_url, redis_url)
    sampler = Sampler()
    search = [float(r) for r in args.search.split(",") if r.strip()]
    total = args.seconds + 15 + len(search) * (args.step_seconds + 10) + 120
    load = Load([stack.base for stack in stacks], world)
    checks: dict[str, bool] = {}
    figures: dict = {}
    try:
        warm = time.monotonic()
        load.start_agents(until=warm + total)
        print("  agents heartbeating; 15 s for everyone to be online", flush=True)
        time.sleep(HEARTBEAT_SECONDS)

        # Main run.
        start = time.monotonic()
        mark = len(load.recorder.samples)
        planned = load.schedule_tickets(args.rate, args.seconds, start)
        progress(f"main run at {args.rate:g}/s", load, start, args.seconds, planned)
        time.sleep(2)
        main_samples = load.recorder.samples[mark:]
        elapsed = time.monotonic() - start
        approved_main = load.approved
        print(f"\nMain run: {args.rate:g} approvals/s for {args.seconds:.0f} s")
        print(
            f"  {len(main_samples)} requests in {elapsed:.0f} s = "
            f"{len(main_samples) / elapsed:.1f} requests/s; {approved_main} approved"
        )
        per_endpoint(main_samples)
        behind = load.recorder.behind
        print(f"  submissions behind schedule: p95 {percentile(behind, 95) * 1000:.0f} ms")
        figures.update(main_figures(main_samples, approved_main, args.seconds, elapsed))
        if len(stacks) > 1:
            per_node(main_samples, stacks, figures, args.seconds, elapsed)
        settle(load)
        checks = consistency_checks()
        print(f"  most active tickets one agent held at any sample: {sampler.most_active}")
        checks[f"no agent above max_active ({MAX_ACTIVE}), sampled through the run"] = (
            sampler.most_active <= MAX_ACTIVE
        )
        client_requests = len(load.recorder.samples)
        counted_by_node = [server_counted_requests(stack.base) for stack in stacks]
        counted = sum(counted_by_node)
        # Heartbeats and polls keep going: the server may count a few requests in flight.
        checks["/metrics adds up every web worker (server count = client count)"] = (
            abs(counted - client_requests) <= 48
        )
        print(
            f"  requests made by the clients {client_requests}, counted by /metrics {counted:.0f}"
        )
        if len(stacks) > 1:
            samples = list(load.recorder.samples)
            for stack, node_counted in zip(stacks, counted_by_node, strict=True):
                made = sum(1 for s in samples if s.node == stack.node)
                print(
                    f"  node {stack.node}: requests made {made}, counted by its /metrics "
                    f"{node_counted:.0f}"
                )
                checks[f"node {stack.node}'s /metrics counts the requests made to it"] = (
                    abs(node_counted - made) <= 48
                )
        for name, ok in checks.items():
            print(f"  [{'ok' if ok else 'FAILED'}] {name}")

        # Search.
        best = None
        if search:
            print(
                f"\nSearch: approval p95 under {APPROVAL_P95_TARGET_MS} ms, steps of "
                f"{args.step_seconds:.0f} s"
            )
        for rate in search:
            start = time.monotonic()
            mark = len(load.recorder.samples)
            behind_mark = len(load.recorder.behind)
            planned = load.schedule_tickets(rate, args.step_seconds, start)
            progress(f"{rate:g}/s", load, start, args.step_seconds, load.approved + planned)
            time.sleep(2)
            step = load.recorder.samples[mark:]
            p95 = approval_p95(step)
            lag = percentile(load.recorder.behind[behind_mark:], 95) * 1000
            errors = sum(1 for s in step if s.status >= 500)
            print(
                f"  {rate:>5g}/s: approval p95 {p95:6.1f} ms, all requests "
                f"{len(step) / (time.monotonic() - start):.1f}/s, behind schedule p95 "
                f"{lag:.0f} ms, 5xx {errors}",
                flush=True,
            )
            if p95 >= APPROVAL_P95_TARGET_MS or errors:
                break
            best = rate
            time.sleep(8)
        if search:
            print(
                f"  highest steady approval rate with p95 < {APPROVAL_P95_TARGET_MS} ms: "
                f"{best if best is not None else f'below {search[0]:g}'}/s"
            )
            figures["best"] = best
    finally:
        load.stop()
        peak = sampler.stop()
        codes = stop_stacks(stacks)
    server_errors = sum(1 for s in load.recorder.samples if s.status >= 500)
    print(f"\nSummary ({kind})")
    print(f"  5xx over the whole run: {server_errors}")
    print(f"  PostgreSQL connections at peak: {peak} (max_connections 100)")
    print(f"  exit codes after SIGTERM: {codes}")
    figures.update(
        errors=server_errors,
        peak=peak,
        ok=bool(checks) and all(checks.values()) and not server_errors,
        clean_stop=all(code == 0 for code in codes.values()),
    )
    return figures


def start_stacks(kind: str, nodes: int, database_url: str, redis_url: str) -> list:
    """`nodes` whole stacks of `kind` on one PostgreSQL and Redis (more than one: production
    only), each with its own port and metrics directory."""
    if nodes > 1 and kind != "production":
        raise SystemExit("--nodes > 1 runs the production stack only")
    stacks: list = []
    try:
        for node in range(1, nodes + 1):
            if kind == "production":
                stack = Stack(database_url, redis_url, node=node)
            else:
                stack = STACKS[kind](database_url, redis_url)
            stacks.append(stack)
            where = f"node {node} " if nodes > 1 else ""
            print(f"  {where}stack up ({stack.label}) on {stack.base}; logs {stack.logs}")
    except BaseException:
        stop_stacks(stacks)
        raise
    return stacks


def stop_stacks(stacks: list) -> dict[str, int]:
    codes: dict[str, int] = {}
    for stack in stacks:
        prefix = f"node {stack.node} " if len(stacks) > 1 else ""
        codes.update({prefix + name: code for name, code in stack.stop().items()})
    return codes


def per_node(
    samples: list[Sample], stacks: list, figures: dict, seconds: float, elapsed: float
) -> None:
    """The main run's table for each node, then its figures per node beside the total."""
    columns = {}
    for stack in stacks:
        mine = [s for s in samples if s.node == stack.node]
        print(f"\n  node {stack.node} ({stack.base})")
        per_endpoint(mine)
        approved = sum(
            1 for s in mine if s.endpoint == "POST /api/tickets/{id}/approve/" and s.status == 200
        )
        columns[f"node {stack.node}"] = main_figures(mine, approved, seconds, elapsed)
        columns[f"node {stack.node}"]["5xx"] = sum(1 for s in mine if s.status >= 500)
    columns["total"] = {**figures, "5xx": sum(1 for s in samples if s.status >= 500)}
    figures["per node"] = columns
    print(f"\n  {'main run, per node':24}" + "".join(f"{name:>12}" for name in columns))
    for name in (*COMPARED, "5xx"):
        print(f"  {name:24}" + "".join(f"{col[name]:>12.1f}" for col in columns.values()))


def main_figures(samples: list[Sample], approved: int, seconds: float, elapsed: float) -> dict:
    """The main run's figures that the side-by-side table compares."""

    def ms(endpoint: str) -> list[float]:
        return [s.seconds * 1000 for s in samples if s.endpoint == endpoint]

    approvals = ms("POST /api/tickets/{id}/approve/")
    heartbeats = ms("POST /api/presence/heartbeat/")
    polls = ms("GET /api/tickets/pool/?view=my_handling")
    every = [s.seconds * 1000 for s in samples]
    return {
        "approvals/s": approved / seconds,
        "requests/s": len(samples) / elapsed,
        "approval p50 ms": percentile(approvals, 50),
        "approval p95 ms": percentile(approvals, 95),
        "approval p99 ms": percentile(approvals, 99),
        "heartbeat p95 ms": percentile(heartbeats, 95),
        "pool poll p95 ms": percentile(polls, 95),
        "all requests p95 ms": percentile(every, 95),
    }


COMPARED = (
    "approvals/s",
    "requests/s",
    "approval p50 ms",
    "approval p95 ms",
    "approval p99 ms",
    "heartbeat p95 ms",
    "pool poll p95 ms",
    "all requests p95 ms",
)


def side_by_side(results: dict[str, list[dict]], args: argparse.Namespace) -> bool:
    """The production stack's figures beside `make run`'s (medians over the rounds), with the
    ratio; True when `make run` is within 20 % (approvals/s and requests/s at least 0.8 times
    production's, approval p95 at most 1.2 times) and meets the issue's bar: at least 10
    approvals/s held with approval p95 under 100 ms."""
    prod = {name: median([r[name] for r in results["production"]]) for name in COMPARED}
    run = {name: median([r[name] for r in results["make-run"]]) for name in COMPARED}
    rounds = len(results["production"])
    print(
        f"\nSide by side: {args.rate:g} approvals/s for {args.seconds:.0f} s on each stack, "
        f"{rounds} round(s) in this session (order {' '.join(args.order)}); medians"
    )
    print(f"  {'main run':24} {'production':>12} {'make run':>12} {'make run / prod':>16}")
    for name in COMPARED:
        ratio = run[name] / prod[name] if prod[name] else float("nan")
        print(f"  {name:24} {prod[name]:>12.1f} {run[name]:>12.1f} {ratio:>16.2f}")
    if rounds > 1:
        for name in ("approvals/s", "approval p95 ms"):
            for kind in ("production", "make-run"):
                each = ", ".join(f"{r[name]:.1f}" for r in results[kind])
                print(f"  {name} per round, {kind}: {each}")
    for name, label in (
        ("best", f"search: best rate p95<{APPROVAL_P95_TARGET_MS}"),
        ("errors", "5xx (whole run)"),
        ("peak", "PostgreSQL conns, peak"),
    ):
        shown = ["/".join(str(r.get(name, "-")) for r in results[k]) for k in results]
        print(f"  {label:24} {shown[0]:>12} {shown[1]:>12}")
    within = (
        run["approvals/s"] >= 0.8 * prod["approvals/s"]
        and run["requests/s"] >= 0.8 * prod["requests/s"]
        and run["approval p95 ms"] <= 1.2 * prod["approval p95 ms"]
    )
    bar = run["approvals/s"] >= 10 * 0.98 and run["approval p95 ms"] < APPROVAL_P95_TARGET_MS
    print(f"  [{'ok' if within else 'FAILED'}] make run within 20 % of production")
    measured = args.rate >= 10
    print(
        f"  [{('ok' if bar else 'FAILED') if measured else 'not measured'}] make run holds >= 10 "
        f"approvals/s with approval p95 < {APPROVAL_P95_TARGET_MS} ms"
        + ("" if measured else f" (--rate {args.rate:g} is below 10)")
    )
    return within and (bar or not measured)


def pgbouncer_side_by_side(results: dict[str, list[dict]], args: argparse.Namespace) -> None:
    """The production stack's figures on the database directly beside those through PgBouncer,
    with the ratio."""
    direct, pooled = results["production"][0], results["pgbouncer"][0]
    print(
        f"\nSide by side: {args.rate:g} approvals/s for {args.seconds:.0f} s, production stack "
        "on the database directly (prepared statements on), then through PgBouncer "
        "(transaction pooling, DB_PREPARED_STATEMENTS=false), in this session"
    )
    print(f"  {'main run':24} {'direct':>12} {'PgBouncer':>12} {'PgBouncer / direct':>19}")
    for name in COMPARED:
        ratio = pooled[name] / direct[name] if direct[name] else float("nan")
        print(f"  {name:24} {direct[name]:>12.1f} {pooled[name]:>12.1f} {ratio:>19.2f}")
    for name, label in (
        ("best", f"search: best rate p95<{APPROVAL_P95_TARGET_MS}"),
        ("errors", "5xx (whole run)"),
        ("peak", "PostgreSQL conns, peak"),
        ("ok", "checks held"),
    ):
        print(f"  {label:24} {direct.get(name, '-')!s:>12} {pooled.get(name, '-')!s:>12}")


def main() -> None:
    signal.signal(signal.SIGTERM, _interrupt)  # stop the stack on SIGTERM too (finally below)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=float, default=4, help="approvals/s of the main run")
    parser.add_argument("--seconds", type=float, default=60, help="length of the main run")
    parser.add_argument(
        "--search",
        default="4,8,12,16,20,24,32",
        help="approval rates to step through (each held --step-seconds); empty: no search",
    )
    parser.add_argument("--step-seconds", type=float, default=30)
    parser.add_argument(
        "--stack",
        choices=["production", "make-run", "both"],
        default="production",
        help="what to load: the production command lines with production settings (default), "
        "what `make run` starts, or both in turn with the figures side by side",
    )
    parser.add_argument(
        "--make-run",
        dest="stack",
        action="store_const",
        const="make-run",
        help="the same as --stack make-run",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="with --stack both: rounds of the two, in alternating order (production first, "
        "then make run first, ...); the table gives medians",
    )
    parser.add_argument(
        "--pgbouncer",
        action="store_true",
        help="the production stack on the database directly, then through PgBouncer in "
        "transaction pooling mode (DB_PREPARED_STATEMENTS=false), figures side by side",
    )
    parser.add_argument("--agents", type=int, default=AGENTS)
    parser.add_argument("--groups", type=int, default=GROUPS)
    parser.add_argument(
        "--nodes",
        type=int,
        default=1,
        help="whole production stacks (gunicorn, worker and beat each, own metrics directory) "
        "on the one PostgreSQL and Redis; the traffic is split between them and the figures "
        "are given per node and in total",
    )
    args = parser.parse_args()
    if args.nodes < 1:
        parser.error("--nodes: at least 1")
    if args.nodes > 1 and args.stack != "production":
        parser.error("--nodes > 1 runs the production stack only")

    redis_url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/7")
    setup_django(DATABASE)
    from django.conf import settings

    database_url = os.environ["DATABASE_URL"]
    database = os.environ.get("BENCH_DATABASE") or DATABASE  # as setup_django chose
    print(f"Load run on {os.cpu_count()} cores; database {database}, Redis {redis_url}")
    assert settings.DATABASES["default"]["NAME"] == database
    if args.pgbouncer:
        args.order = ["production", "pgbouncer"]
    elif args.stack == "both":
        pair = ["production", "make-run"]
        args.order = [k for n in range(args.rounds) for k in (pair if n % 2 == 0 else pair[::-1])]
    else:
        args.order = [args.stack]
    results: dict[str, list[dict]] = defaultdict(list)
    for n, kind in enumerate(args.order, 1):
        print(f"\n=== {kind} ({n}/{len(args.order)}) ===", flush=True)
        results[kind].append(run_stack(kind, args, redis_url, database_url))
    ok = all(r["ok"] for runs in results.values() for r in runs)
    if args.pgbouncer:
        pgbouncer_side_by_side(results, args)
    elif args.stack == "both":
        ok = side_by_side(results, args) and ok
    if not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
