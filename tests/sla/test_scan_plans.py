"""Each claim UPDATE of the scanner uses an SLA index on a large table (EXPLAIN, not time)."""

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection

from sla.scanner import CLAIMS
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_scanner_claims_use_the_sla_indexes():
    """60,000 tickets due minute by minute from six hours ago: a few hundred cross a
    threshold now, as in a live helpdesk; each claim must find them through an index."""
    creator = UserFactory()
    now = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO oa_ticket_bill (bill_code, title, content, priority, category,
                creator_id, process_status, ticket_status, submitted_time, accepted_time,
                response_deadline, resolve_deadline, response_timeout, resolve_timeout,
                reply_count, response_warned, resolve_warned, sla_paused)
            SELECT 'P' || i, 't', 'c', 2, '', %(creator)s, 2,
                   CASE WHEN i %% 3 = 0 THEN 5 ELSE 3 END,
                   %(now)s, CASE WHEN i %% 100 = 0 THEN NULL ELSE %(now)s END,
                   %(now)s + (i || ' minutes')::interval, %(now)s + (i || ' minutes')::interval,
                   i %% 7 = 0, i %% 5 = 0, 0, false, false, false
            FROM generate_series(1, 60000) AS i
            """,
            {"creator": creator.pk, "now": now - timedelta(hours=6)},
        )
        cursor.execute("ANALYZE oa_ticket_bill")
        for name, (set_sql, where_sql, _) in CLAIMS.items():
            cursor.execute(
                f"EXPLAIN UPDATE oa_ticket_bill t SET {set_sql} WHERE {where_sql}",
                {"now": now, "horizon": now + timedelta(minutes=30)},
            )
            plan = "\n".join(row[0] for row in cursor.fetchall())
            assert "ticket_sla_" in plan and "Seq Scan" not in plan, (name, plan)


def test_an_idle_tick_reads_only_the_due_end_of_an_index():
    """400,000 pending levels on 100,000 open tickets, none due: the tick's three claims are
    index probes that find nothing, far under 5 ms each (EXPLAIN ANALYZE, rolled back).
    bench/sla_scan.py measures the same on 1,000,000 tickets."""
    from django.db import transaction

    from sla.escalation import CLAIM_SQL

    creator = UserFactory()
    now = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO oa_ticket_bill (bill_code, title, content, priority, category,
                creator_id, process_status, ticket_status, submitted_time, accepted_time,
                responded_time, response_deadline, resolve_deadline, response_timeout,
                resolve_timeout, reply_count, response_warned, resolve_warned, sla_paused)
            SELECT 'I' || i, 't', 'c', 2, '', %(creator)s, 2, 3, %(now)s, %(now)s, %(now)s,
                   %(now)s + interval '1 day', %(now)s + interval '3 days' + i * interval '1 s',
                   false, false, 0, false, false, false
            FROM generate_series(1, 100000) AS i
            """,
            {"creator": creator.pk, "now": now},
        )
        cursor.execute(
            """
            INSERT INTO oa_sla_event (ticket_id, clock, level, due_at, state)
            SELECT t.id, c.clock, c.level, t.resolve_deadline - c.level * interval '10 minutes',
                   CASE c.clock WHEN 'response' THEN 'void' ELSE 'pending' END
            FROM oa_ticket_bill t
            CROSS JOIN (VALUES ('response', 1), ('response', 2), ('resolve', 3),
                               ('resolve', 4), ('resolve', 5), ('resolve', 6)) AS c(clock, level)
            """
        )
        cursor.execute("ANALYZE oa_ticket_bill")
        cursor.execute("ANALYZE oa_sla_event")
        plans = {}
        with transaction.atomic():
            for name, (set_sql, where_sql, _) in CLAIMS.items():
                cursor.execute(
                    f"EXPLAIN ANALYZE UPDATE oa_ticket_bill t SET {set_sql} WHERE {where_sql}",
                    {"now": now},
                )
                plans[name] = [row[0] for row in cursor.fetchall()]
            cursor.execute("EXPLAIN ANALYZE " + CLAIM_SQL, {"now": now, "limit": 500})
            plans["levels"] = [row[0] for row in cursor.fetchall()]
            transaction.set_rollback(True)
    for name, lines in plans.items():
        plan = "\n".join(lines)
        assert "Seq Scan" not in plan, (name, plan)
        (execution,) = [line for line in lines if line.startswith("Execution Time")]
        assert float(execution.split(":")[1].split()[0]) < 5, (name, plan)
    assert "sla_event_due_idx" in "\n".join(plans["levels"])
