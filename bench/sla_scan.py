"""SLA tick benchmark (issue 12): what the per-second tick costs when nothing is due, with
1,000,000 active tickets and their escalation levels (4 per ticket, the default ladder), and
how late 10,000 levels due within the same minute fire when ticks run every second in real
time (the worker's work, in this process), plus the claim queries' plans.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres .venv/bin/python bench/sla_scan.py \\
        [--active 1000000] [--due 10000] [--idle-ticks 50]
"""

import argparse
import sys
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (  # noqa: E402
    Timer,
    median,
    percentile,
    restore_default_ladders,
    setup_django,
)

CHUNK = 100_000


def fill(active: int) -> None:
    """`active` open tickets (accepted: the resolve clock runs) due in days, with the default
    ladder's four events each (response ones void: answered; resolve ones pending)."""
    from django.contrib.auth.models import User
    from django.db import connection
    from django.utils import timezone

    from handler_groups.models import HandlerGroup
    from sla.models import SlaRule

    with connection.cursor() as cursor:
        cursor.execute(
            "TRUNCATE oa_ticket_bill, oa_ticket_record, oa_notification, oa_notify_outbox, "
            "oa_ticket_handler_group, oa_sla_clock_segment, oa_sla_outcome, oa_sla_event "
            "RESTART IDENTITY CASCADE"
        )
    restore_default_ladders()
    handlers = [User.objects.get_or_create(username=f"bench_h{i}")[0] for i in range(50)]
    leader, _ = User.objects.get_or_create(username="bench_leader")
    creator, _ = User.objects.get_or_create(username="bench_applicant")
    groups = []
    for i in range(10):
        group = HandlerGroup(name=f"bench g{i}", leader=leader)
        group.member_ids = [h.pk for h in handlers[i * 5 : i * 5 + 5]]
        group.save()
        groups.append(group.pk)
    rule = SlaRule.objects.get(sort=999)
    levels = dict(rule.levels.values_list("position", "pk"))
    now = timezone.now()
    started = time.monotonic()
    with connection.cursor() as cursor:
        for first in range(1, active + 1, CHUNK):
            last = min(first + CHUNK - 1, active)
            cursor.execute(
                """
                INSERT INTO oa_ticket_bill (bill_code, title, content, priority, category,
                    creator_id, handler_group_id, handler_id, process_status, ticket_status,
                    submitted_time, approved_time, assigned_time, accepted_time, responded_time,
                    response_deadline, resolve_deadline, response_timeout, resolve_timeout,
                    reply_count, public_reply_count, sla_rule_id, response_warned,
                    resolve_warned, sla_paused)
                SELECT 'S' || i, 'title ' || i, 'c', 2, '', %(creator)s,
                       (%(groups)s::bigint[])[1 + i %% 10], (%(handlers)s::bigint[])[1 + i %% 50],
                       2, 3, %(now)s - interval '1 hour', %(now)s, %(now)s, %(now)s, %(now)s,
                       %(now)s + interval '1 day',
                       %(now)s + interval '3 days' + (i || ' seconds')::interval,
                       false, false, 0, 0, %(rule)s, false, false, false
                FROM generate_series(%(first)s, %(last)s) AS i
                """,
                {
                    "creator": creator.pk,
                    "groups": groups,
                    "handlers": [h.pk for h in handlers],
                    "now": now,
                    "rule": rule.pk,
                    "first": first,
                    "last": last,
                },
            )
            _progress("tickets", last, active, started)
        started = time.monotonic()
        for first in range(1, active + 1, CHUNK):
            last = min(first + CHUNK - 1, active)
            cursor.execute(
                """
                INSERT INTO oa_sla_event (ticket_id, clock, level, escalation_level_id, due_at,
                                          state)
                SELECT t.id, l.clock, l.position, l.id,
                       CASE l.trigger WHEN 'minutes_before'
                            THEN d.deadline - interval '30 minutes' ELSE d.deadline END,
                       CASE l.clock WHEN 'response' THEN 'void' ELSE 'pending' END
                FROM oa_ticket_bill t
                CROSS JOIN oa_sla_level l
                CROSS JOIN LATERAL (SELECT CASE l.clock WHEN 'response'
                    THEN t.response_deadline ELSE t.resolve_deadline END AS deadline) d
                WHERE l.rule_id = %(rule)s AND t.id BETWEEN %(first)s AND %(last)s
                """,
                {"rule": rule.pk, "first": first, "last": last},
            )
            _progress("events", last, active, started)
        print("  VACUUM ANALYZE ...", flush=True)
        cursor.execute("VACUUM ANALYZE oa_ticket_bill")
        cursor.execute("VACUUM ANALYZE oa_sla_event")
    assert len(levels) == 4


def _progress(what: str, done: int, total: int, started: float) -> None:
    elapsed = time.monotonic() - started
    eta = elapsed / done * (total - done) if done else 0
    print(f"  {what}: {done:,}/{total:,}, {elapsed:.0f} s, ETA {eta:.0f} s", flush=True)


def idle_ticks(ticks: int) -> list[float]:
    from sla.scanner import sla_scan

    timings = []
    for _ in range(ticks):
        with Timer() as t:
            result = sla_scan()
        assert result.total == 0, result.counts
        timings.append(t.seconds * 1000)
    return timings


def due_in_one_minute(due: int, ticks_for: float) -> list[float]:
    """Make `due` pending levels fall due across the next 60 s; tick every second in real
    time; the lag of each level is fired_at - due_at."""
    from django.db import connection
    from django.utils import timezone

    from sla.escalation import fire_due
    from sla.models import SlaEvent

    start = timezone.now() + timedelta(seconds=2)
    with connection.cursor() as cursor:
        cursor.execute(
            """
            UPDATE oa_sla_event e SET due_at = %(start)s + (s.n * %(step)s) * interval '1 ms'
            FROM (SELECT id, row_number() OVER (ORDER BY id) - 1 AS n FROM oa_sla_event
                  WHERE state = 'pending' AND clock = 'resolve' AND level = 3
                  ORDER BY id LIMIT %(due)s) s
            WHERE e.id = s.id
            RETURNING e.id
            """,
            {"start": start, "step": 60_000 / due, "due": due},
        )
        ids = [row[0] for row in cursor.fetchall()]
    print(f"  {len(ids):,} levels due between +2 s and +62 s; ticking every second", flush=True)
    began = time.monotonic()
    tick = 0
    while time.monotonic() - began < ticks_for:
        tick += 1
        with Timer() as t:
            fired = sum(fire_due().values())
        if fired or tick % 10 == 0:
            left = ticks_for - (time.monotonic() - began)
            took = t.seconds * 1000
            print(f"  tick {tick:3d}: fired {fired:5d} in {took:6.0f} ms, ETA {left:.0f} s")
        time.sleep(max(0.0, tick - (time.monotonic() - began)))
    rows = SlaEvent.objects.filter(pk__in=ids).values_list("state", "due_at", "fired_at")
    lags = [(fired - due_at).total_seconds() for state, due_at, fired in rows if fired]
    unfired = sum(1 for state, _d, _f in rows if state != "fired")
    print(f"  fired {len(lags):,} of {len(ids):,} ({unfired} not fired)")
    return lags


def explain(now) -> None:
    from django.db import connection

    from sla.escalation import CLAIM_SQL
    from sla.scanner import CLAIMS

    print("plans (EXPLAIN ANALYZE, rolled back):")
    with connection.cursor() as cursor:
        cursor.execute("BEGIN")
        try:
            for name, (set_sql, where_sql, _) in CLAIMS.items():
                cursor.execute(
                    f"EXPLAIN ANALYZE UPDATE oa_ticket_bill t SET {set_sql} WHERE {where_sql}",
                    {"now": now},
                )
                _print_plan(f"{name} deadline", cursor.fetchall())
            cursor.execute("EXPLAIN ANALYZE " + CLAIM_SQL, {"now": now, "limit": 500})
            _print_plan("levels due", cursor.fetchall())
        finally:
            cursor.execute("ROLLBACK")


def _print_plan(name: str, rows) -> None:
    lines = [row[0].strip() for row in rows]
    scans = [line.split("  (")[0] for line in lines if "Scan" in line]
    execution = next((line for line in lines if line.startswith("Execution Time")), "?")
    print(f"  {name:<18}: {'; '.join(scans)}; {execution}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--active", type=int, default=1_000_000)
    parser.add_argument("--due", type=int, default=10_000)
    parser.add_argument("--idle-ticks", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=70, help="how long to tick")
    args = parser.parse_args()
    setup_django()
    from unittest import mock

    from django.utils import timezone

    from notifications import sending

    with Timer() as t:
        fill(args.active)
    print(
        f"{args.active:,} active tickets, {4 * args.active:,} levels (filled in {t.seconds:.0f} s)"
    )
    idle = idle_ticks(args.idle_ticks)
    print(
        f"idle tick (2 deadline claims + the level claim, nothing due), {args.idle_ticks} ticks: "
        f"median {median(idle):.2f} ms, p95 {percentile(idle, 95):.2f} ms"
    )
    explain(timezone.now())
    # Deliveries are enqueued after commit; keep the broker out of the measurement.
    with mock.patch.object(sending, "enqueue_deliveries", return_value=None):
        lags = due_in_one_minute(args.due, args.seconds)
    print(
        f"{args.due:,} levels due within one minute, ticks every second: lag p50 "
        f"{percentile(lags, 50):.2f} s, p95 {percentile(lags, 95):.2f} s, "
        f"max {max(lags):.2f} s"
    )


if __name__ == "__main__":
    main()
