"""Foundation benchmark.

1. Approvals per second with 8 concurrent workers into a 20-member round-robin group, the
   spread of the members' shares (max - min; 0 or 1 means perfectly even) and the agents'
   notices (one per ticket: exactly once), beside the ceiling
   PostgreSQL sets for the bare pattern a group-serialised approval needs (SELECT … FOR UPDATE
   on the group row + UPDATE + INSERT per transaction, 8 processes, raw psycopg) in the same
   run, and the ratio of the two: --rounds (3) of the two one after the other, and the median
   of the rounds' ratios (a shared machine's speed drifts within minutes). With PostgreSQL
   on this host, also the CPU one approval costs (the workers' own and their backends'),
   and the most approvals/s the machine's cores allow at that cost, whatever the locks: the
   ratio can come no nearer the ceiling than that.
2. What one approval costs: statements in all and while the group lock is held, and the time
   the lock is held (median over sequential approvals, no contention).
3. The pending-pool query's p50/p95 on 1,000,000 tickets with and without the pool index, as
   a ratio (the index is dropped inside a transaction that is rolled back).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres .venv/bin/python bench/approvals.py
"""

import argparse
import os
import random
import statistics
import sys
import threading
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import Timer, percentile, restore_default_ladders, setup_django  # noqa: E402


def reset():
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "TRUNCATE oa_ticket_bill, oa_ticket_record, oa_ticket_reply, oa_ticket_handler_group, "
            "oa_assignment_event, oa_notification, oa_notify_outbox, oa_agent_presence, "
            "oa_sla_clock_segment, oa_sla_outcome, oa_handler_load RESTART IDENTITY CASCADE"
        )
    restore_default_ladders()


def _prepare(tickets: int, members: int, strategy: int = 1):
    """A group of `members` with `strategy` and `tickets` submitted tickets for it."""
    from django.contrib.auth.models import Permission, User
    from django.db import connection

    from handler_groups.services import handler_group_save
    from workflow import services

    reset()
    users = [User.objects.get_or_create(username=f"bench_m{i}")[0] for i in range(members)]
    approver, _ = User.objects.get_or_create(username="bench_approver")
    approver.user_permissions.add(Permission.objects.get(codename="approve_ticket"))
    applicant, _ = User.objects.get_or_create(username="bench_applicant")
    group = handler_group_save(
        name=f"bench {strategy}",
        member_ids=[u.pk for u in users],
        assign_strategy=strategy,
        status=1,
    )
    ids = [
        services.ticket_submit(
            creator=applicant, title=f"t{i}", content="c", priority=2, handler_group_id=group.pk
        ).pk
        for i in range(tickets)
    ]
    # Statistics as a live database has them (autovacuum would gather them within a minute):
    # right after the TRUNCATE the planner knows nothing of the tables and its plans for the
    # routing queries are the bench's own artefact.
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return approver, ids


def _approve_chunk(approver_id: int, chunk: list[int], barrier, cpu=None) -> int:
    """Approve `chunk` once `barrier` lets every worker go; the errors. With `cpu` (a list),
    append the CPU seconds this worker spent on them: its own, and its PostgreSQL backend's
    (None where the server's processes cannot be read: not on this host)."""
    from django.contrib.auth.models import User
    from django.db import connection, connections

    from workflow import services

    approver = User.objects.get(pk=approver_id)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (backend,) = cursor.fetchone()
    errors = 0
    barrier.wait()
    own, server = time.process_time(), _process_cpu(backend)
    try:
        for ticket_id in chunk:
            try:
                services.ticket_approve(ticket_id=ticket_id, approver=approver)
            except Exception:  # noqa: BLE001 - counted and reported
                errors += 1
        if cpu is not None:
            spent = _process_cpu(backend)
            cpu.append(
                (
                    time.process_time() - own,
                    None if spent is None or server is None else spent - server,
                )
            )
    finally:
        connections.close_all()
    return errors


def _process_cpu(pid: int) -> float | None:
    """CPU seconds (user + system) process `pid` of this host has used, or None."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_in_threads(approver_id: int, ids: list[int], workers: int) -> tuple[float, int]:
    """Approve `ids` with `workers` threads started together; (seconds, errors)."""
    chunks = [ids[i::workers] for i in range(workers)]
    barrier = threading.Barrier(workers + 1)
    results: list[int] = []
    threads = [
        threading.Thread(target=lambda c=c: results.append(_approve_chunk(approver_id, c, barrier)))
        for c in chunks
    ]
    for thread in threads:
        thread.start()
    barrier.wait()
    started = time.perf_counter()
    for thread in threads:
        thread.join()
    return time.perf_counter() - started, sum(results)


def _report(label: str, tickets: int, seconds: float, errors: int) -> None:
    from notifications.models import Notification
    from ticketing.models import Ticket

    shares = Counter(Ticket.objects.values_list("handler_id", flat=True))
    told = Counter(
        Notification.objects.filter(template_code="ticket-assigned").values_list(
            "ticket_id", flat=True
        )
    )
    print(
        f"  {label:<28} {tickets / seconds:6.0f} approvals/s ({seconds:6.2f} s), errors {errors}, "
        f"shares min {min(shares.values())} max {max(shares.values())} "
        f"(spread {max(shares.values()) - min(shares.values())}); notices {sum(told.values())} "
        f"for {len(told)} tickets"
    )


def _bare_worker(dsn: str, transactions: int, barrier, out) -> None:
    import psycopg

    with psycopg.connect(dsn) as conn:
        barrier.wait()
        for _ in range(transactions):
            with conn.transaction():
                conn.execute("SELECT pos FROM bench_bare_group WHERE id = 1 FOR UPDATE")
                conn.execute("UPDATE bench_bare_group SET pos = pos + 1 WHERE id = 1")
                conn.execute("INSERT INTO bench_bare_event (group_id, at) VALUES (1, now())")
    out.put(transactions)


def _timed_processes(context, barrier, target, argument_lists) -> float:
    """Start one process per argument list, release them together through `barrier` (each
    waits on it once ready), and time them until the last one ends."""
    processes = [context.Process(target=target, args=args) for args in argument_lists]
    for process in processes:
        process.start()
    barrier.wait()
    started = time.perf_counter()
    for process in processes:
        process.join()
    return time.perf_counter() - started


def bench_bare_ceiling(workers: int, transactions: int) -> float:
    """Transactions/s of the bare group-serialised pattern with `workers` processes."""
    import multiprocessing

    import psycopg
    from django.db import connection

    settings = connection.settings_dict
    dsn = psycopg.conninfo.make_conninfo(
        dbname=settings["NAME"],
        user=settings["USER"] or None,
        password=settings["PASSWORD"] or None,
        host=settings["HOST"] or None,
        port=settings["PORT"] or None,
    )
    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE IF EXISTS bench_bare_group, bench_bare_event")
        cursor.execute("CREATE TABLE bench_bare_group (id int PRIMARY KEY, pos int NOT NULL)")
        cursor.execute(
            "CREATE TABLE bench_bare_event (id bigserial PRIMARY KEY, group_id int, at timestamptz)"
        )
        cursor.execute("INSERT INTO bench_bare_group VALUES (1, 0)")
    connection.close()
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(workers + 1)
    out = context.Queue()
    per_worker = transactions // workers
    seconds = _timed_processes(
        context, barrier, _bare_worker, [(dsn, per_worker, barrier, out)] * workers
    )
    done = sum(out.get() for _ in range(workers))
    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE bench_bare_group, bench_bare_event")
    return done / seconds


def bench_one_approval(members: int, samples: int) -> None:
    """Statements per approval, those under the group lock, and the time the lock is held."""
    from django.contrib.auth.models import User
    from django.db import connection

    from workflow import services

    approver, ids = _prepare(samples, members)
    approver = User.objects.get(pk=approver.pk)
    totals, under_lock, held_ms = [], [], []
    plain_commit = connection.commit
    for ticket_id in ids:
        statements: list[tuple[float, str]] = []  # (when it returned, SQL)
        commits: list[tuple[float, int]] = []

        def record(execute, sql, params, many, context, statements=statements):
            try:
                return execute(sql, params, many, context)
            finally:
                statements.append((time.perf_counter(), sql))

        def commit(commits=commits, statements=statements):
            plain_commit()
            commits.append((time.perf_counter(), len(statements)))

        connection.commit = commit
        try:
            with connection.execute_wrapper(record):
                services.ticket_approve(ticket_id=ticket_id, approver=approver)
        finally:
            connection.commit = plain_commit
        locks = [
            i
            for i, (_, sql) in enumerate(statements)
            if "UPDATE" in sql and "FROM oa_ticket_handler_group" in sql
        ]
        totals.append(len(statements))
        if locks:
            # Held from the return of the statement that takes it (it waits for it, if need
            # be, and returns at once) to the end of the first commit after it; the locking
            # statement counts as one under the lock.
            released, statements_then = next((t, n) for t, n in commits if n > locks[0])
            under_lock.append(statements_then - locks[0])
            held_ms.append((released - statements[locks[0]][0]) * 1000)
    print(
        f"one approval (sequential, {samples} samples): {statistics.median(totals):.0f} "
        f"statements, {statistics.median(under_lock):.0f} while the group lock is held; lock "
        f"held p50 {statistics.median(held_ms):.2f} ms, p95 {percentile(held_ms, 95):.2f} ms"
    )


def bench_threads(tickets: int, workers: int, members: int) -> None:
    """The workers as threads of one process (one Python interpreter: the GIL serialises
    the Python part)."""
    approver, ids = _prepare(tickets, members)
    seconds, errors = run_in_threads(approver.pk, ids, workers)
    _report("threads in one process:", tickets, seconds, errors)


def bench_approvals(tickets: int, workers: int, members: int) -> tuple[float, float | None]:
    """The workers as separate processes (how web workers really run); approvals/s and the
    most the machine's cores allow at the CPU they cost (`_report_cpu`)."""
    import multiprocessing

    from django.db import connections

    approver, ids = _prepare(tickets, members)
    chunks = [ids[i::workers] for i in range(workers)]
    connections.close_all()  # no connection may cross a fork
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(workers + 1)
    errors = context.Value("i", 0)
    spent = context.Queue()

    def run(chunk):
        cpu: list = []
        failed = _approve_chunk(approver.pk, chunk, barrier, cpu)
        with errors.get_lock():
            errors.value += failed
        spent.put(cpu[0] if cpu else (None, None))

    seconds = _timed_processes(context, barrier, run, [(c,) for c in chunks])
    _report(f"{workers} processes:", tickets, seconds, errors.value)
    bound = _report_cpu(tickets, [spent.get() for _ in chunks])
    return tickets / seconds, bound


def _report_cpu(tickets: int, spent: list[tuple]) -> float | None:
    """What one approval costs in CPU, in the workers and in their PostgreSQL backends, and
    the most approvals/s this machine's cores could give at that cost whatever the locks
    (None when the server's processes are not on this host)."""
    own = sum(client for client, _ in spent if client is not None)
    if any(server is None for _, server in spent):
        python_ms = own / tickets * 1000
        print(f"    CPU per approval: Python {python_ms:.2f} ms (the server is not on this host)")
        return None
    server = sum(server for _, server in spent)
    per_approval = (own + server) / tickets
    cores = os.cpu_count() or 1
    print(
        f"    CPU per approval: {per_approval * 1000:.2f} ms (Python {own / tickets * 1000:.2f} "
        f"ms, PostgreSQL {server / tickets * 1000:.2f} ms): {cores} cores allow at most "
        f"{cores / per_approval:.0f} approvals/s"
    )
    return cores / per_approval


def fill(n: int) -> tuple[list[int], list[int]]:
    """n tickets over 200 groups; like a helpdesk after years: ~1% pending in the pool."""
    from django.contrib.auth.models import User
    from django.db import connection

    from handler_groups.models import HandlerGroup

    reset()
    creator, _ = User.objects.get_or_create(username="bench_applicant")
    users = [User.objects.get_or_create(username=f"bench_m{i}")[0] for i in range(200)]
    groups = []
    for i in range(200):
        group = HandlerGroup(name=f"bench g{i}", assign_strategy=0)
        group.member_ids = [users[i].pk, users[(i + 1) % 200].pk]
        group.save()
        groups.append(group.pk)
    array = "ARRAY[" + ",".join(map(str, groups)) + "]::bigint[]"
    with connection.cursor() as cursor:
        cursor.execute("SELECT setseed(0.42)")
        cursor.execute(
            f"""
            INSERT INTO oa_ticket_bill (bill_code, title, content, priority, category,
                creator_id, handler_group_id, process_status, ticket_status, submitted_time,
                response_timeout, resolve_timeout, reply_count)
            SELECT 'B' || i, 'title ' || i, 'content', 1 + i %% 4, '', %s,
                   CASE WHEN random() < 0.02 THEN NULL
                        ELSE ({array})[1 + floor(random() * 200)::int] END,
                   CASE WHEN i %% 100 = 1 THEN 1 ELSE 2 END,
                   CASE WHEN i %% 100 = 0 THEN 1 WHEN i %% 100 = 1 THEN 0
                        WHEN i %% 100 < 5 THEN 3 ELSE 5 END,
                   now() - (i || ' seconds')::interval, false, false, 0
            FROM generate_series(1, %s) AS i
            """,
            [creator.pk, n],
        )
        cursor.execute("VACUUM ANALYZE oa_ticket_bill")
    return [u.pk for u in users], groups


def time_pool(user_ids: list[int], runs: int) -> list[float]:
    from django.contrib.auth.models import User

    from workflow.selectors import pool_for

    rng = random.Random(7)
    users = list(User.objects.filter(pk__in=user_ids))
    samples = []
    for _ in range(runs):
        user = rng.choice(users)
        with Timer() as t:
            list(pool_for(user, view="pending")[:20])
        samples.append(t.seconds * 1000)
    return samples


def bench_pool(n: int, runs: int) -> None:
    from django.db import connection, transaction

    with Timer() as t:
        user_ids, _ = fill(n)
    print(f"pool query: {n:,} tickets (filled in {t.seconds:.1f} s), {runs} pending-pool queries")
    connection.ensure_connection()
    with_index = time_pool(user_ids, runs)
    variants = {
        "without the pool index": ["ticket_pool_idx"],
        # The SLA scan index also starts with ticket_status; without both, a sequential scan.
        "without any status index": ["ticket_pool_idx", "ticket_sla_scan_idx"],
    }
    p95_with = percentile(with_index, 95)
    p50_with = percentile(with_index, 50)
    print(f"  with the pool index:      p50 {p50_with:8.2f} ms   p95 {p95_with:8.2f} ms")
    for label, indexes in variants.items():
        with transaction.atomic():
            with connection.cursor() as cursor:
                for index in indexes:
                    cursor.execute(f"DROP INDEX {index}")
            samples = time_pool(user_ids, runs)
            transaction.set_rollback(True)
        p95 = percentile(samples, 95)
        print(
            f"  {label + ':':<25} p50 {percentile(samples, 50):8.2f} ms   p95 {p95:8.2f} ms"
            f"   p95 ratio {p95 / p95_with:.1f}x"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tickets", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--members", type=int, default=20)
    parser.add_argument("--pool-size", type=int, default=1_000_000)
    parser.add_argument("--pool-runs", type=int, default=100)
    parser.add_argument("--bare-transactions", type=int, default=8000)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    setup_django()
    print(
        f"approvals: {args.tickets} tickets, {args.workers} concurrent workers, "
        f"{args.members}-member RR group; {args.rounds} rounds of approvals and the bare "
        "pattern one after the other (a shared machine's speed drifts: each round's ratio is "
        "measured within minutes)"
    )
    bench_threads(args.tickets, args.workers, args.members)
    ratios, rates, ceilings, bounds = [], [], [], []
    for round_number in range(1, args.rounds + 1):
        approvals_per_second, bound = bench_approvals(args.tickets, args.workers, args.members)
        ceiling = bench_bare_ceiling(args.workers, args.bare_transactions)
        rates.append(approvals_per_second)
        ceilings.append(ceiling)
        ratios.append(approvals_per_second / ceiling)
        if bound is not None:
            bounds.append(bound / ceiling)
        print(
            f"  round {round_number}/{args.rounds}: bare pattern ceiling ({args.workers} "
            f"processes, raw psycopg) {ceiling:6.0f} tx/s; approvals reach {ratios[-1]:.0%} of it"
            + (f" (the CPU they cost allows {bounds[-1]:.0%})" if bound is not None else ""),
            flush=True,
        )
    print(
        f"  median of {args.rounds} rounds: {statistics.median(rates):.0f} approvals/s, ceiling "
        f"{statistics.median(ceilings):.0f} tx/s; ratio median {statistics.median(ratios):.0%} "
        f"(rounds {min(ratios):.0%}–{max(ratios):.0%})"
        + (
            f"; the CPU of an approval caps it at {statistics.median(bounds):.0%} of the ceiling "
            "on this machine"
            if bounds
            else ""
        )
    )
    bench_one_approval(args.members, args.samples)
    if args.pool_size:
        bench_pool(args.pool_size, args.pool_runs)
    reset()


if __name__ == "__main__":
    main()
