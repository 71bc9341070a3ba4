"""Benchmark of the queue ranking service (issue 6). Prints figures; asserts nothing about time.

For 100, 1,000 and 10,000 persons (random, seeded, a realistic mix of RR levels) it times the
whole service call, Redis included, for
- naive: the source's style: one GET per person, one GET and one SET per swap, full double loops;
- service: queueing.services.queue_rank (3 round trips, swaps-proportional passes);
in the same run, from the same Redis state, checks that both give the same order, be_jump values
and jump lists, and prints both times and the ratio. Then it starts the endpoint on a free
loopback port (`manage.py runserver --noreload`) and prints p50/p95 of POST /api/queueing/rank/
with 1,000 persons.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \\
    REDIS_URL=redis://127.0.0.1:6379/7 .venv/bin/python bench/queueing.py

It uses its own database, ticketdesk_bench, on the server of DATABASE_URL (created if missing,
migrated; a user and a token for the bench are added).
Redis keys live under a prefix of this run's own and are deleted at the end.
"""

import argparse
import http.client
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Run as a script, sys.path[0] is bench/, where this file would shadow the queueing app.
sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]

PREFIX = f"bench_{uuid.uuid4().hex[:8]}_lechat_"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
os.environ["DJANGO_DEBUG"] = "false"
os.environ["QUEUEING_KEY_PREFIX"] = PREFIX
os.environ.setdefault("LOG_LEVEL", "WARNING")  # the in-process timings, not the log lines

SEED = 20240611
SERVER_START_TIMEOUT_SECONDS = 60


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
                "is_ssvip": int(rnd.random() < 0.03),
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


def naive_rank(persons: list[dict], client, prefix: str, ttl: int) -> tuple[list[dict], int]:
    """The ranked queue and how many Redis round trips it took."""
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
    return q, trips


# Helpers ---------------------------------------------------------------------------------------


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


def median_time(runs: int, prepare, call) -> tuple[float, object]:
    times, result = [], None
    for _ in range(runs):
        prepare()
        started = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def count_round_trips(call) -> int:
    """How many times `call` sends to Redis (a pipeline counts once)."""
    from redis.connection import AbstractConnection

    original = AbstractConnection.send_packed_command
    sent = []

    def send_packed_command(self, command, check_health=True):
        sent.append(1)
        return original(self, command, check_health)

    AbstractConnection.send_packed_command = send_packed_command
    try:
        call()
    finally:
        AbstractConnection.send_packed_command = original
    return len(sent)


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


# Parts -----------------------------------------------------------------------------------------


def bench_service(client, sizes: list[int]) -> None:
    from django.conf import settings

    from queueing import services
    from queueing.serializers import parse_queue

    ttl = settings.QUEUEING_JUMP_TTL_SECONDS
    print(f"Service call, Redis included (median of runs; Redis at {settings.QUEUEING_REDIS_URL})")
    print("trips: Redis round trips of one call; jumps: uids appended to jump lists;")
    print("agree: same order, be_jump values and stored jump lists")
    print(
        f"{'persons':>8} {'naive s':>10} {'runs':>4} {'trips':>7} {'service s':>10} {'runs':>4} "
        f"{'trips':>5} {'ratio':>8} {'jumps':>7}  agree"
    )
    for size in sizes:
        persons, rr_values, jump_lists = make_queue(size, SEED + size)
        customers = parse_queue(persons)
        naive_runs = 5 if size <= 100 else 3 if size <= 1000 else 1
        service_runs = 21 if size <= 1000 else 7

        def prepare(rr_values=rr_values, jump_lists=jump_lists):
            reset_redis(client, rr_values, jump_lists)

        naive_s, (naive_queue, naive_trips) = median_time(
            naive_runs, prepare, lambda p=persons: naive_rank(p, client, PREFIX, ttl)
        )
        naive_lists = stored_jump_lists(client)
        service_s, outcome = median_time(
            service_runs,
            prepare,
            lambda c=customers: services.queue_rank(customers=c, trace_id="bench"),
        )
        service_lists = stored_jump_lists(client)
        prepare()
        service_trips = count_round_trips(
            lambda c=customers: services.queue_rank(customers=c, trace_id="bench")
        )
        agree = (
            [p["uid"] for p in naive_queue] == [e.uid for e in outcome.queue]
            and [p["be_jump"] for p in naive_queue] == [e.be_jump for e in outcome.queue]
            and naive_lists == service_lists
            and not outcome.degraded
        )
        print(
            f"{size:>8} {naive_s:>10.4f} {naive_runs:>4} {naive_trips:>7} {service_s:>10.4f} "
            f"{service_runs:>4} {service_trips:>5} {naive_s / service_s:>7.0f}x "
            f"{outcome.jumps_appended:>7}"
            f"  {'yes' if agree else 'NO'}"
        )


def bench_http(client, size: int, requests: int, warmup: int) -> None:
    from django.conf import settings

    token = bench_token()
    persons, rr_values, jump_lists = make_queue(size, SEED + 7)
    body = json.dumps({"queue": persons}).encode()
    port = free_port()
    env = dict(os.environ, LOG_LEVEL="INFO")
    env["QUEUEING_REDIS_URL"] = settings.QUEUEING_REDIS_URL
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT_SECONDS
        while True:
            if server.poll() is not None:
                raise RuntimeError(f"the server exited with {server.returncode}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("the server did not start in time") from None
                time.sleep(0.2)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        headers = {"Content-Type": "application/json", "Authorization": f"Token {token}"}
        latencies, degraded = [], 0
        for k in range(warmup + requests):
            reset_redis(client, rr_values, jump_lists)  # every request does the same work
            started = time.perf_counter()
            conn.request("POST", "/api/queueing/rank/", body=body, headers=headers)
            response = conn.getresponse()
            payload = response.read()
            elapsed = time.perf_counter() - started
            if response.status != 200:
                raise RuntimeError(f"HTTP {response.status}: {payload[:300]!r}")
            degraded += json.loads(payload)["degraded"]
            if k >= warmup:
                latencies.append(elapsed)
        conn.close()
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)
    latencies.sort()
    p50 = statistics.median(latencies)
    p95 = latencies[min(len(latencies) - 1, int(round(0.95 * len(latencies))) - 1)]
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"(load average {load}) "
        f"HTTP POST /api/queueing/rank/, {size} persons, {requests} requests after {warmup} "
        f"warm-up (runserver --noreload, token auth, keep-alive): "
        f"p50 {p50 * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms, max {latencies[-1] * 1000:.1f} ms"
        + (f", {degraded} degraded" if degraded else "")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000,10000")
    parser.add_argument("--http-persons", type=int, default=1000)
    parser.add_argument("--http-requests", type=int, default=200)
    parser.add_argument("--http-warmup", type=int, default=20)
    parser.add_argument("--skip-http", action="store_true")
    args = parser.parse_args()

    from bench.common import setup_django

    setup_django()  # its own database, ticketdesk_bench, on the server of DATABASE_URL
    import redis
    from django.conf import settings

    client = redis.Redis.from_url(settings.QUEUEING_REDIS_URL, decode_responses=True)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load}, seed {SEED}"
    )
    try:
        bench_service(client, [int(s) for s in args.sizes.split(",")])
        if not args.skip_http:
            bench_http(client, args.http_persons, args.http_requests, args.http_warmup)
    finally:
        keys = list(client.scan_iter(match=f"{PREFIX}*", count=5000))
        for start in range(0, len(keys), 5000):
            client.delete(*keys[start : start + 5000])


if __name__ == "__main__":
    main()
