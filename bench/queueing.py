"""Benchmark of the queue ranking endpoint (issues 6 and "2-3x faster over HTTP"). Prints figures;
asserts nothing about time.

For 1,000 and 10,000 persons (random, seeded: waits, RR levels 1-9, a few SSVIPs, stored jump
lists) it prints side by side
- source-style: the source's implementation (one GET per person, one GET and one SET per swap,
  the full double loops), in this process, Redis included: median of its runs;
- server: POST /api/queueing/rank/ to a real server this bench starts on a free loopback port
  (`manage.py runserver --noreload`, token auth, keep-alive, persistent database connections
  as in production: DB_CONN_MAX_AGE=60), its own request time from the response's
  Server-Timing header (or, for a server without it, from its request log): p50, p95;
- round trip: the same requests as timed by this client (send to last byte read): p50, p95;
- server CPU: the server process's CPU time per request, which a busy machine stretches less;
- fixed: the server time of an empty queue (authentication, permission, throttle, middleware:
  what every request pays whatever its size), p50;
and the ratios source-style / server p50 and source-style / round trip p50. With --baseline DIR
a second server runs from DIR (another checkout of the project, e.g. `git worktree add
/tmp/before <commit>`), its requests interleaved with this tree's, and the summary shows both
and their ratio. Every request starts from the same Redis state, so each does the same work;
the first response and the jump lists it leaves must agree with the source-style ranking
(order, be_jump, rr, user_group, rough score, stored jump lists).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \\
    REDIS_URL=redis://127.0.0.1:6379/3 .venv/bin/python bench/queueing.py

Options: --sizes 1000,10000; --requests 200,40 (per size); --baseline DIR; --profile N
(instead: cProfile of N in-process requests per size, the top functions); --stages N (instead:
the endpoint's steps one by one in this process, N times per size: wall and CPU time of each).
It uses its own database, ticketdesk_bench, on the server of DATABASE_URL (created if missing,
migrated; a user and a token for the bench are added). Redis keys live under a prefix of this
run's own and are deleted at the end.
"""

import argparse
import cProfile
import http.client
import io
import json
import os
import pstats
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Run as a script, sys.path[0] is bench/, where this file would shadow the queueing app.
sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]

PREFIX = f"bench_{uuid.uuid4().hex[:8]}_lechat_"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
os.environ["DJANGO_DEBUG"] = "false"
os.environ["QUEUEING_KEY_PREFIX"] = PREFIX
os.environ.setdefault("LOG_LEVEL", "WARNING")  # this process; the server logs at INFO

SEED = 20240611
SERVER_START_TIMEOUT_SECONDS = 60
URL = "/api/queueing/rank/"


# Data ------------------------------------------------------------------------------------------


def make_queue(size: int, seed: int) -> tuple[list[dict], dict[str, str], dict[str, str]]:
    """Persons, their `<prefix><uid>` RR values and some jump lists already stored."""
    rnd = random.Random(seed)
    persons, rr_values, jump_lists = [], {}, {}
    uids = [f"c{seed % 1000}-{k}" for k in range(size)]
    for uid in uids:
        persons.append(
            {
                "uid": uid,
                "already_wait_time": rnd.randint(0, 2 * 3600),
                "is_online": int(rnd.random() < 0.7),
                "is_complaint": int(rnd.random() < 0.05),
                "confirm_num": rnd.choice([0, 0, 0, 1, 1, 2, 3]),
                "not_confirm_num": 4 + rnd.randint(0, 2)
                if rnd.random() < 0.06
                else rnd.randint(0, 3),
                "is_ssvip": int(rnd.random() < 0.05),
                "be_jump": 0 if rnd.random() < 0.7 else rnd.randint(1, 16),
                "channel": rnd.choice(["chat", "call", "app"]),
            }
        )
        draw = rnd.random()
        if draw < 0.1:
            continue  # no RR level cached: rr = 9
        level = rnd.randint(1, 5) if draw < 0.5 else rnd.randint(6, 9)
        rr_values[uid] = json.dumps({"rr_1p5": f"R{level}"})
        if level >= 6 and rnd.random() < 0.3:
            jump_lists[uid] = json.dumps(rnd.sample(uids, min(size, rnd.randint(1, 5))))
    return persons, rr_values, jump_lists


# The source's style ----------------------------------------------------------------------------


# For progress reports, a Redis round trip of the source-style ranking weighs as much as this
# many of its comparisons (some 100 µs against some 0.07 µs).
ROUND_TRIP_WEIGHT = 1500


def naive_rank(
    persons: list[dict], client, prefix: str, ttl: int, progress=None
) -> tuple[list[dict], int]:
    """The ranked queue and how many Redis round trips it took. `progress(work)` is called now
    and then with the work done so far: comparisons plus ROUND_TRIP_WEIGHT per round trip."""
    trips = 0
    q = [dict(p, be_jump=p.get("be_jump", 0), is_ssvip=p.get("is_ssvip", 0)) for p in persons]
    for p in q:
        if p["not_confirm_num"] >= 4:
            p["rough_sort_score"] = 0
        else:
            score = p["already_wait_time"] / 3600
            if p["is_online"] == 1:
                score += 0.3
            if p["is_complaint"] == 1:
                score += 0.3
            p["rough_sort_score"] = score + p["confirm_num"] * 0.1
    q.sort(key=lambda p: p["rough_sort_score"], reverse=True)
    for p in q:
        p["rr"] = 9
        raw = client.get(f"{prefix}{p['uid']}")  # one GET per person
        trips += 1
        if raw is not None:
            try:
                level = json.loads(raw).get("rr_1p5")
            except (ValueError, AttributeError):
                level = None
            if level in [f"R{k}" for k in range(1, 10)]:
                p["rr"] = int(level[1:])
        p["user_group"] = 2 if p["rr"] <= 5 else 1
    n = len(q)
    done = 0  # comparisons
    for i in range(n):
        for j in range(n - 1 - i):
            a, b = q[j], q[j + 1]
            if (
                6 <= a["rr"] <= 9
                and 1 <= b["rr"] <= 5
                and a["rr"] > b["rr"]
                and a["be_jump"] < 15
                and b["not_confirm_num"] < 4
            ):
                q[j], q[j + 1] = b, a
                key = f"{prefix}jump_uids_{a['uid']}"
                raw = client.get(key)  # one GET and one SET per swap
                jumped = json.loads(raw) if raw else []
                if str(b["uid"]) not in jumped:
                    a["be_jump"] += 1
                    jumped.append(str(b["uid"]))
                client.set(key, json.dumps(jumped), ex=ttl)
                trips += 2
        done += n - 1 - i
        if progress is not None and i % 64 == 0:
            progress(done + ROUND_TRIP_WEIGHT * trips)
    for i in range(n):
        for j in range(n - 1 - i):
            a, b = q[j], q[j + 1]
            if (
                a["not_confirm_num"] < 4
                and not a["is_ssvip"]
                and b["is_ssvip"]
                and b["user_group"] >= a["user_group"]
            ):
                q[j], q[j + 1] = b, a
        done += n - 1 - i
        if progress is not None and i % 64 == 0:
            progress(done + ROUND_TRIP_WEIGHT * trips)
    return q, trips


def naive_work(persons: list[dict], rr_values: dict[str, str], jump_lists: dict[str, str]) -> int:
    """The work `naive_rank` will report in all: its comparisons, and its round trips (one per
    person, two per swap of step 4), with the swaps counted by the service's ranking."""
    from queueing import ranking
    from queueing.serializers import parse_queue

    swaps: list[ranking.Swap] = []
    ranking.rank(
        parse_queue(persons),
        rr_levels={uid: ranking.rr_level(value) for uid, value in rr_values.items()},
        read_jump_lists=lambda uids: {u: ranking.jump_list(jump_lists.get(u)) for u in uids},
        swaps=swaps,
    )
    trips = len(persons) + 2 * sum(1 for swap in swaps if swap.step == "rr")
    return len(persons) * (len(persons) - 1) + ROUND_TRIP_WEIGHT * trips


# Helpers ---------------------------------------------------------------------------------------


class Progress:
    """One line on stderr, rewritten at most every half second: counts, elapsed time, ETA."""

    def __init__(self, label: str, total: float, unit: str = ""):
        self.label, self.total, self.unit = label, total, unit
        self.started = time.monotonic()
        self.shown = 0.0
        self.tty = sys.stderr.isatty()

    def __call__(self, done: float, final: bool = False) -> None:
        now = time.monotonic()
        if not final and (done >= self.total or now - self.shown < (0.5 if self.tty else 5.0)):
            return  # the final line is done()'s
        self.shown = now
        elapsed = now - self.started
        eta = elapsed * (self.total - done) / done if done else float("nan")
        count = f"{done:,.0f}/{self.total:,.0f}{self.unit}"
        line = f"  {self.label}: {count} ({100 * done / (self.total or 1):.0f}%), {elapsed:.1f} s"
        line += " " * 12 if final else f", ETA {eta:.0f} s" + " " * 6
        sys.stderr.write(("\r" if self.tty else "") + line + ("" if self.tty else "\n"))
        if final and self.tty:
            sys.stderr.write("\n")
        sys.stderr.flush()

    def done(self) -> None:
        self(self.total, final=True)


def reset_redis(client, rr_values: dict[str, str], jump_lists: dict[str, str]) -> None:
    """This run's keys back to the generated state: RR levels and the stored jump lists only."""
    keys = list(client.scan_iter(match=f"{PREFIX}jump_uids_*", count=5000))
    for start in range(0, len(keys), 5000):
        client.delete(*keys[start : start + 5000])
    pipe = client.pipeline(transaction=False)
    if rr_values:
        pipe.mset({f"{PREFIX}{uid}": value for uid, value in rr_values.items()})
    if jump_lists:
        pipe.mset({f"{PREFIX}jump_uids_{uid}": value for uid, value in jump_lists.items()})
    pipe.execute()


def stored_jump_lists(client) -> dict[str, list]:
    keys = sorted(client.scan_iter(match=f"{PREFIX}jump_uids_*", count=5000))
    return {key: json.loads(value) for key, value in zip(keys, client.mget(keys), strict=True)}


def percentile(values: list[float], p: float) -> float:
    """The nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(p / 100 * len(ordered)) - 1))]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def bench_token() -> str:
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Permission
    from django.core.management import call_command
    from knox.models import AuthToken

    call_command("migrate", verbosity=0)
    user, _ = get_user_model().objects.get_or_create(username="bench-ranking-service")
    user.user_permissions.add(
        Permission.objects.get(content_type__app_label="queueing", codename="rank_queue")
    )
    return AuthToken.objects.create(user=user)[1]


def load_average() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


# Parts -----------------------------------------------------------------------------------------


@dataclass
class Figures:
    persons: int
    server: str = "this tree"
    naive_seconds: float = float("nan")
    naive_runs: int = 0
    server_ms: list[float] | None = None
    round_trip_ms: list[float] | None = None
    server_timing_from: str = ""
    server_cpu_ms: float = float("nan")  # the server process's CPU time per timed request
    fixed_ms: float = float("nan")  # server time of an empty queue, p50
    agree: bool | None = None


def source_style(client, size: int, runs: int, figures: Figures) -> list[dict]:
    from django.conf import settings

    persons, rr_values, jump_lists = make_queue(size, SEED + size)
    work = naive_work(persons, rr_values, jump_lists)
    times, ranked = [], []
    for run in range(runs):
        reset_redis(client, rr_values, jump_lists)
        progress = Progress(f"source-style, {size:,} persons, run {run + 1}/{runs}", work, " units")
        started = time.perf_counter()
        ranked, _ = naive_rank(
            persons, client, PREFIX, settings.QUEUEING_JUMP_TTL_SECONDS, progress=progress
        )
        times.append(time.perf_counter() - started)
        progress.done()
    figures.naive_seconds = statistics.median(times)
    figures.naive_runs = runs
    return ranked


def agrees(naive: list[dict], naive_lists: dict, body: dict, lists: dict) -> bool:
    fields = ("uid", "be_jump", "rr", "user_group", "rough_sort_score")
    return (
        not body["degraded"]
        and [[p[f] for f in fields] for p in naive]
        == [[p[f] for f in fields] for p in body["queue"]]
        and [p["rank"] for p in body["queue"]] == list(range(1, len(naive) + 1))
        and naive_lists == lists
    )


class Server:
    """`manage.py runserver --noreload` of the project in `root` on a free loopback port, logging
    requests to a file. Its database connections persist (DB_CONN_MAX_AGE=60, production's
    default; runserver's own default, 0, would connect to PostgreSQL again in every request)."""

    def __init__(self, root: Path = ROOT, label: str = "this tree"):
        from django.conf import settings

        self.label = label
        self.port = free_port()
        self.log = tempfile.NamedTemporaryFile(prefix="bench-queueing-", suffix=".log")
        env = dict(os.environ, LOG_LEVEL="INFO", THROTTLE_USER="1000000/min", DB_CONN_MAX_AGE="60")
        env["QUEUEING_REDIS_URL"] = settings.QUEUEING_REDIS_URL
        self.process = subprocess.Popen(
            [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{self.port}"],
            cwd=root,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=self.log,
        )
        deadline = time.monotonic() + SERVER_START_TIMEOUT_SECONDS
        while True:
            if self.process.poll() is not None:
                with open(self.log.name, encoding="utf-8", errors="replace") as f:
                    tail = f.read()[-2000:]
                raise RuntimeError(f"the server exited with {self.process.returncode}:\n{tail}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError("the server did not start in time") from None
                time.sleep(0.2)

    def cpu_seconds(self) -> float:
        """User and system CPU time of the server process so far (Linux), NaN elsewhere."""
        try:
            with open(f"/proc/{self.process.pid}/stat", encoding="ascii") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            return float("nan")
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def logged_durations(self) -> dict[str, float]:
        """request id -> duration_ms, from the server's request log lines."""
        durations = {}
        with open(self.log.name, encoding="utf-8", errors="replace") as f:
            for line in f:
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if record.get("msg") == "request" and "duration_ms" in record:
                    durations[record.get("request_id")] = record["duration_ms"]
        return durations

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
        self.log.close()


def over_http(
    servers: list[Server],
    client,
    token: str,
    size: int,
    requests: int,
    warmup: int,
    all_figures: list[Figures],
    naive: list[dict],
    naive_lists: dict,
) -> None:
    """`requests` timed requests to each server, interleaved (each round in turn starting with
    the other server), so a busy machine weighs on each alike."""
    persons, rr_values, jump_lists = make_queue(size, SEED + size)
    body = json.dumps({"queue": persons}).encode()
    headers = {"Content-Type": "application/json", "Authorization": f"Token {token}"}
    run_id = uuid.uuid4().hex[:8]
    figures = {s.label: f for s, f in zip(servers, all_figures, strict=True)}
    conns = {s.label: http.client.HTTPConnection("127.0.0.1", s.port, timeout=120) for s in servers}
    round_trips = {s.label: [] for s in servers}
    from_header = {s.label: [] for s in servers}
    request_ids = {s.label: [] for s in servers}
    cpu = {s.label: 0.0 for s in servers}
    progress = Progress(f"HTTP, {size:,} persons", (warmup + requests) * len(servers), " requests")
    done = 0
    try:
        for k in range(warmup + requests):
            for server in servers if k % 2 == 0 else servers[::-1]:
                label, conn = server.label, conns[server.label]
                reset_redis(client, rr_values, jump_lists)  # every request does the same work
                request_id = f"bench-{run_id}-{len(servers) * k + servers.index(server)}"
                cpu_started = server.cpu_seconds()
                started = time.perf_counter()
                conn.request(
                    "POST", URL, body=body, headers={**headers, "X-Request-ID": request_id}
                )
                response = conn.getresponse()
                payload = response.read()
                elapsed = time.perf_counter() - started
                cpu_used = server.cpu_seconds() - cpu_started
                if response.status != 200:
                    raise RuntimeError(f"{label}: HTTP {response.status}: {payload[:300]!r}")
                if k == 0:
                    figures[label].agree = agrees(
                        naive, naive_lists, json.loads(payload), stored_jump_lists(client)
                    )
                if k >= warmup:
                    round_trips[label].append(elapsed * 1000)
                    request_ids[label].append(request_id)
                    cpu[label] += cpu_used
                    timing = response.getheader("Server-Timing") or ""
                    if timing.startswith("app;dur="):
                        from_header[label].append(float(timing.split("=", 1)[1]))
                done += 1
                progress(done)
        progress.done()
        for server in servers:
            figures[server.label].fixed_ms = fixed_cost(conns[server.label], headers)
    finally:
        for conn in conns.values():
            conn.close()
    for server in servers:
        f, label = figures[server.label], server.label
        f.server_cpu_ms = cpu[label] * 1000 / requests
        f.round_trip_ms = round_trips[label]
        if len(from_header[label]) == requests:
            f.server_ms, f.server_timing_from = from_header[label], "Server-Timing header"
        else:
            time.sleep(0.5)  # the log line of the last request
            logged = server.logged_durations()
            f.server_ms = [logged[r] for r in request_ids[label] if r in logged]
            f.server_timing_from = "request log"


def fixed_cost(conn: http.client.HTTPConnection, headers: dict, requests: int = 30) -> float:
    """The server time of an empty queue, p50: what every request pays."""
    timings = []
    for _ in range(requests):
        conn.request("POST", URL, body=b'{"queue": []}', headers=headers)
        response = conn.getresponse()
        response.read()
        timing = response.getheader("Server-Timing") or ""
        if timing.startswith("app;dur="):
            timings.append(float(timing.split("=", 1)[1]))
    return statistics.median(timings) if timings else float("nan")


def profile(size: int, requests: int, top: int) -> None:
    """cProfile of `requests` in-process requests through Django's test client."""
    from django.conf import settings
    from django.test import Client

    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "user": "1000000/min"}
    import redis

    client = redis.Redis.from_url(settings.QUEUEING_REDIS_URL, decode_responses=True)
    persons, rr_values, jump_lists = make_queue(size, SEED + size)
    body = json.dumps({"queue": persons})
    api = Client(HTTP_AUTHORIZATION=f"Token {bench_token()}")

    def post():
        response = api.post(URL, data=body, content_type="application/json")
        assert response.status_code == 200, response.content[:300]

    reset_redis(client, rr_values, jump_lists)
    post()  # warm-up: connections, the script, caches
    profiler = cProfile.Profile()
    for _ in range(requests):
        reset_redis(client, rr_values, jump_lists)
        profiler.enable()
        post()
        profiler.disable()
    for order in ("tottime", "cumulative"):
        out = io.StringIO()
        stats = pstats.Stats(profiler, stream=out)
        stats.sort_stats(order).print_stats(top)
        print(f"\n{size:,} persons, {requests} requests in process, by {order}:")
        lines = out.getvalue().splitlines()
        start = next(k for k, line in enumerate(lines) if line.lstrip().startswith("ncalls"))
        print("\n".join(line.replace(str(ROOT) + "/", "") for line in lines[start:] if line))


def stages(size: int, runs: int) -> None:
    """The endpoint's steps one by one in this process (as RankQueueApi runs them, but the
    append read before rendering), `runs` times: wall and CPU time of each, medians."""
    import functools
    import gc

    import orjson
    import redis
    from django.conf import settings

    from queueing import ranking, store
    from queueing.serializers import ranked_persons, usual_persons

    client = redis.Redis.from_url(settings.QUEUEING_REDIS_URL, decode_responses=True)
    persons, rr_values, jump_lists = make_queue(size, SEED + size)
    body = orjson.dumps({"queue": persons})
    names = [
        "parse (orjson)",
        "validate (msgspec, columns)",
        "read (MGET: RR levels, jump lists)",
        "rank",
        "append (EVALSHA)",
        "render (results, orjson)",
        "free",
    ]
    wall: dict[str, list[float]] = {name: [] for name in [*names, "total"]}
    cpu: dict[str, list[float]] = {name: [] for name in [*names, "total"]}
    for _ in range(runs):
        reset_redis(client, rr_values, jump_lists)
        marks: list[tuple[float, float]] = []
        mark = functools.partial(_mark, marks)
        gc.disable()  # as the endpoint does (RankQueueApi: _collection_paused)
        mark()
        data = orjson.loads(body)
        mark()
        columns, payloads = usual_persons(data)
        mark()
        levels, texts = store.read_queue(columns.uid)
        mark()
        order = ranking.rank_persons(columns, levels, functools.partial(store.jump_lists, texts))
        mark()
        store.append_jumps(order.appended_jumps, texts=texts, ranked=True)
        mark()
        rendered = orjson.dumps({"queue": ranked_persons(payloads, order)})
        mark()
        del data, columns, payloads, levels, texts, order, rendered
        mark()
        gc.enable()
        for k, name in enumerate(names):
            wall[name].append((marks[k + 1][0] - marks[k][0]) * 1000)
            cpu[name].append((marks[k + 1][1] - marks[k][1]) * 1000)
        wall["total"].append((marks[-1][0] - marks[0][0]) * 1000)
        cpu["total"].append((marks[-1][1] - marks[0][1]) * 1000)
    print(f"\n{size:,} persons, the endpoint's steps in this process, {runs} runs (ms, medians):")
    print(f"  {'step':<34} {'wall':>8} {'CPU':>8}")
    for name in wall:
        median_wall, median_cpu = statistics.median(wall[name]), statistics.median(cpu[name])
        print(f"  {name:<34} {median_wall:>8.2f} {median_cpu:>8.2f}")
    print(
        "  wall beyond CPU is waiting: on Redis (its own process) and for the CPU on a busy "
        f"machine (load average now {load_average()})"
    )


def _mark(marks: list[tuple[float, float]]) -> None:
    marks.append((time.perf_counter(), time.thread_time()))


def summary(all_figures: list[Figures]) -> None:
    print()
    print("Summary (ms; source-style in seconds; ratios = source-style / p50)")
    header = (
        f"{'persons':>8} {'server':<10} {'source-style s':>15} {'server p50':>11} {'p95':>8} "
        f"{'round trip p50':>15} {'p95':>8} {'src/server':>11} {'src/round trip':>15} "
        f"{'server CPU':>11} {'fixed':>7}  agree"
    )
    print(header)
    for f in all_figures:
        server50, server95 = statistics.median(f.server_ms), percentile(f.server_ms, 95)
        trip50, trip95 = statistics.median(f.round_trip_ms), percentile(f.round_trip_ms, 95)
        naive_ms = f.naive_seconds * 1000
        print(
            f"{f.persons:>8,} {f.server:<10} {f.naive_seconds:>13.2f}/{f.naive_runs} "
            f"{server50:>11.1f} {server95:>8.1f} {trip50:>15.1f} {trip95:>8.1f} "
            f"{naive_ms / server50:>10.0f}x {naive_ms / trip50:>14.0f}x {f.server_cpu_ms:>11.1f} "
            f"{f.fixed_ms:>7.1f}  {'yes' if f.agree else 'NO'}"
        )
    by_size: dict[int, list[Figures]] = {}
    for f in all_figures:
        by_size.setdefault(f.persons, []).append(f)
    for size, (this, *others) in by_size.items():
        for other in others:
            p50 = statistics.median(other.server_ms) / statistics.median(this.server_ms)
            p95 = percentile(other.server_ms, 95) / percentile(this.server_ms, 95)
            trip = statistics.median(other.round_trip_ms) / statistics.median(this.round_trip_ms)
            print(
                f"{size:,} persons, {other.server} / {this.server}: server p50 {p50:.2f}x, "
                f"p95 {p95:.2f}x, round trip p50 {trip:.2f}x, server CPU "
                f"{other.server_cpu_ms / this.server_cpu_ms:.2f}x"
            )
    sources = {f.server_timing_from for f in all_figures}
    counts = ", ".join(f"{len(f.round_trip_ms)}" for f in all_figures)
    print(
        f"server: the server's own time per request ({' / '.join(sorted(sources))}); "
        f"round trip: this client's; server CPU: the server process's CPU time per request "
        f"(what the machine's load does not stretch); fixed: server time of an empty queue; "
        f"requests per size and server after warm-up: {counts}; source-style: median of runs / "
        f"runs; load average now {load_average()}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--requests", default="200,40", help="timed requests per size")
    parser.add_argument("--warmup", default="20,5", help="untimed requests per size")
    parser.add_argument("--naive-runs", default="3,1", help="source-style runs per size")
    parser.add_argument(
        "--baseline",
        type=Path,
        metavar="DIR",
        help="also run a server from DIR (another checkout), requests interleaved",
    )
    parser.add_argument("--profile", type=int, metavar="N", help="profile N requests instead")
    parser.add_argument("--top", type=int, default=25, help="functions shown by --profile")
    parser.add_argument(
        "--stages", type=int, metavar="N", help="time the endpoint's steps N times instead"
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]

    def per_size(option: str) -> list[int]:
        values = [int(v) for v in option.split(",")]
        return (values + values[-1:] * len(sizes))[: len(sizes)]

    from bench.common import setup_django

    setup_django()  # its own database, ticketdesk_bench, on the server of DATABASE_URL
    import redis
    from django.conf import settings

    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load_average()}, "
        f"seed {SEED}, Redis at {settings.QUEUEING_REDIS_URL}"
    )
    client = redis.Redis.from_url(settings.QUEUEING_REDIS_URL, decode_responses=True)
    try:
        if args.profile:
            for size in sizes:
                profile(size, args.profile, args.top)
            return
        if args.stages:
            for size in sizes:
                stages(size, args.stages)
            return
        token = bench_token()
        all_figures = []
        servers = [Server()]
        try:
            if args.baseline:
                servers.append(Server(args.baseline.resolve(), label="baseline"))
            for size, requests, warmup, runs in zip(
                sizes,
                per_size(args.requests),
                per_size(args.warmup),
                per_size(args.naive_runs),
                strict=True,
            ):
                figures = [Figures(persons=size, server=server.label) for server in servers]
                naive = source_style(client, size, runs, figures[0])
                for f in figures[1:]:
                    f.naive_seconds, f.naive_runs = figures[0].naive_seconds, runs
                naive_lists = stored_jump_lists(client)
                over_http(
                    servers, client, token, size, requests, warmup, figures, naive, naive_lists
                )
                for f in figures:
                    print(
                        f"{size:,} persons, {f.server}: source-style {f.naive_seconds:.2f} s; "
                        f"server p50 {statistics.median(f.server_ms):.1f} ms, p95 "
                        f"{percentile(f.server_ms, 95):.1f} ms, round trip p50 "
                        f"{statistics.median(f.round_trip_ms):.1f} ms; agree: "
                        f"{'yes' if f.agree else 'NO'} (load average {load_average()})",
                        flush=True,
                    )
                all_figures += figures
        finally:
            for server in servers:
                server.stop()
        summary(all_figures)
    finally:
        keys = list(client.scan_iter(match=f"{PREFIX}*", count=5000))
        for start in range(0, len(keys), 5000):
            client.delete(*keys[start : start + 5000])


if __name__ == "__main__":
    main()
