"""SLA scanner benchmark: one scan over 100,000 active tickets of which 1,000 cross a
threshold, set-based (sla.scanner) versus a straightforward per-ticket loop, in the same run,
plus the claim queries' plans.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres .venv/bin/python bench/sla_scan.py
"""

import argparse
import sys
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import Timer, median, setup_django  # noqa: E402


def fill(active: int, crossing: int):
    from django.contrib.auth.models import User
    from django.db import connection
    from django.utils import timezone

    from handler_groups.models import HandlerGroup
    from sla.models import SlaRule

    with connection.cursor() as cursor:
        cursor.execute(
            "TRUNCATE oa_ticket_bill, oa_ticket_record, oa_notification, oa_notify_outbox, "
            "oa_ticket_handler_group, oa_sla_clock_segment, oa_sla_outcome RESTART IDENTITY CASCADE"
        )
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
    now = timezone.now()
    with connection.cursor() as cursor:
        # Half of the crossing tickets have passed their resolve deadline, half are inside the
        # warning window; everything else is due in days.
        cursor.execute(
            """
            INSERT INTO oa_ticket_bill (bill_code, title, content, priority, category, creator_id,
                handler_group_id, handler_id, process_status, ticket_status, submitted_time,
                approved_time, assigned_time, accepted_time, response_deadline, resolve_deadline,
                response_timeout, resolve_timeout, reply_count, sla_rule_id, response_warned,
                resolve_warned, sla_paused)
            SELECT 'S' || i, 'title ' || i, 'c', 2, '', %(creator)s,
                   (%(groups)s::bigint[])[1 + i %% 10], (%(handlers)s::bigint[])[1 + i %% 50],
                   2, 3, %(now)s - interval '1 hour', %(now)s, %(now)s, %(now)s,
                   %(now)s + interval '1 day',
                   CASE WHEN i <= %(half)s THEN %(now)s - interval '1 minute'
                        WHEN i <= %(crossing)s THEN %(now)s + interval '10 minutes'
                        ELSE %(now)s + interval '3 days' + (i || ' seconds')::interval END,
                   false, false, 0, %(rule)s, false, false, false
            FROM generate_series(1, %(active)s) AS i
            """,
            {
                "creator": creator.pk,
                "groups": groups,
                "handlers": [h.pk for h in handlers],
                "now": now,
                "half": crossing // 2,
                "crossing": crossing,
                "active": active,
                "rule": rule.pk,
            },
        )
        cursor.execute("VACUUM ANALYZE oa_ticket_bill")
    return now


def reset_events():
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE oa_ticket_bill SET resolve_timeout = false, resolve_warned = false, "
            "response_timeout = false, response_warned = false "
            "WHERE resolve_timeout OR resolve_warned OR response_timeout OR response_warned"
        )
        cursor.execute("DELETE FROM oa_ticket_record WHERE action LIKE 'sla_%%'")
        cursor.execute("TRUNCATE oa_notification, oa_notify_outbox CASCADE")
        cursor.execute("VACUUM ANALYZE oa_ticket_bill")


def naive_scan(now):
    """What one would write first: load every open ticket, decide in Python, save and send
    one by one."""
    from django.db import transaction

    from notifications.sending import send
    from ticketing.models import Ticket, TicketRecord

    events = 0
    tickets = Ticket.objects.filter(process_status=2, ticket_status__in=[1, 2, 3]).select_related(
        "sla_rule", "handler_group"
    )
    for ticket in tickets.iterator(chunk_size=2000):
        warn = timedelta(minutes=ticket.sla_rule.warn_before_minutes if ticket.sla_rule else 30)
        for clock in ("response", "resolve"):
            deadline = getattr(ticket, f"{clock}_deadline")
            if deadline is None or getattr(ticket, f"{clock}_timeout"):
                continue
            if clock == "response" and ticket.accepted_time is not None:
                continue
            if clock == "resolve" and ticket.sla_paused:
                continue
            if now >= deadline:
                event, field = "timeout", f"{clock}_timeout"
            elif now >= deadline - warn and not getattr(ticket, f"{clock}_warned"):
                event, field = "warn", f"{clock}_warned"
            else:
                continue
            with transaction.atomic():
                setattr(ticket, field, True)
                ticket.save(update_fields=[field])
                TicketRecord.objects.create(
                    ticket=ticket, action=f"sla_{clock}_{event}", created=now
                )
                leader = ticket.handler_group.leader_id if ticket.handler_group else None
                send(
                    recipients=[r for r in (ticket.handler_id, leader) if r],
                    template_code=f"ticket-sla-{event}",
                    params={
                        "billCode": ticket.bill_code,
                        "title": ticket.title,
                        "type": clock,
                        "deadline": deadline.isoformat(),
                    },
                    dedupe_key=f"sla:{clock}:{event}:{ticket.pk}",
                    ticket_id=ticket.pk,
                    now=now,
                )
            events += 1
    return events


def explain_claims(now):
    from django.db import connection

    from sla.scanner import CLAIMS

    print("plans of the claim UPDATEs (EXPLAIN):")
    with connection.cursor() as cursor:
        for (clock, event), (set_sql, where_sql, _) in CLAIMS.items():
            cursor.execute(
                f"EXPLAIN UPDATE oa_ticket_bill t SET {set_sql} WHERE {where_sql}",
                {"now": now, "horizon": now + timedelta(minutes=30)},
            )
            scan = next((row[0].strip() for row in cursor.fetchall() if "Scan" in row[0]), "?")
            print(f"  {clock:<8} {event:<7}: {scan}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--active", type=int, default=100_000)
    parser.add_argument("--crossing", type=int, default=1_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    setup_django()
    from unittest import mock

    from notifications import sending
    from sla.scanner import sla_scan

    with Timer() as t:
        now = fill(args.active, args.crossing)
    print(
        f"{args.active:,} active tickets, {args.crossing:,} crossing a threshold "
        f"(filled in {t.seconds:.1f} s); {args.runs} runs each, medians"
    )
    set_based, naive = [], []
    # Deliveries are enqueued after commit; keep the broker out of the measurement.
    with mock.patch.object(sending, "enqueue_deliveries", return_value=None):
        for _ in range(args.runs):
            reset_events()
            with Timer() as t:
                result = sla_scan(now=now)
            set_based.append(t.seconds)
            events = result.total
            reset_events()
            with Timer() as t:
                naive_events = naive_scan(now)
            naive.append(t.seconds)
    print(f"  set-based scan (sla.scanner):  {median(set_based):7.3f} s  ({events} events)")
    print(f"  per-ticket loop:               {median(naive):7.3f} s  ({naive_events} events)")
    print(f"  ratio (loop / set-based):      {median(naive) / median(set_based):7.1f}x")
    explain_claims(now)


if __name__ == "__main__":
    main()
