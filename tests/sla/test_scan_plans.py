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
