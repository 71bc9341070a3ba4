"""The SLA scan: marks deadlines reached (the design's mirror flags) and fires the escalation
levels due (sla/escalation.py), exactly once.

Each deadline is claimed with one set-based compare-and-set UPDATE (… WHERE flag = false …
RETURNING) and its audit record written in the same transaction; the notices are the
ladder's (a default ladder times out at each deadline). Two scans at the same moment cannot
both claim a ticket; a scan that dies before commit claimed nothing. Beat runs it every
second (`sla.tick`) and every minute (`sla.scan`, the backstop)."""

import logging
from dataclasses import dataclass, field
from datetime import datetime

from django.db import connection, transaction
from django.utils import timezone
from prometheus_client import Counter

from ticketing.models import TicketRecord

from .escalation import fire_due

logger = logging.getLogger(__name__)

EVENTS = Counter("sla_events_total", "SLA deadlines reached and levels fired", ["clock", "event"])

_OPEN = "t.process_status = 2 AND t.ticket_status IN (1, 2, 3)"
# clock → the deadline claim's SET and WHERE.
CLAIMS = {
    "response": (
        "response_timeout = true",
        f"""{_OPEN} AND t.responded_time IS NULL AND t.response_timeout = false
            AND t.response_deadline <= %(now)s""",
        "response_deadline",
    ),
    "resolve": (
        "resolve_timeout = true",
        f"""{_OPEN} AND t.resolve_timeout = false AND t.sla_paused = false
            AND t.resolve_deadline <= %(now)s""",
        "resolve_deadline",
    ),
}


@dataclass
class ScanResult:
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def sla_scan(*, now: datetime | None = None) -> ScanResult:
    """One pass: every deadline reached, then every level due. Safe to run concurrently and
    repeatedly."""
    given, now = now, now or timezone.now()
    result = ScanResult()
    for clock, claim in CLAIMS.items():
        with transaction.atomic():
            claimed = _claim(claim, now)
            if claimed:
                TicketRecord.objects.bulk_create(
                    TicketRecord(
                        ticket_id=ticket["id"],
                        action=f"sla_{clock}_timeout",
                        created=now,
                        detail={"deadline": ticket["deadline"].isoformat()},
                    )
                    for ticket in claimed
                )
        result.counts[f"{clock}_timeout"] = len(claimed)
        EVENTS.labels(clock, "timeout").inc(len(claimed))
    # A given `now` replays a moment; otherwise each batch claims at its own instant, so a
    # level's fired_at is when it really fired.
    result.counts.update(fire_due(now=given))
    if result.total:
        logger.info("sla scan", extra={"now": now.isoformat(), **result.counts})
    return result


def _claim(claim, now: datetime) -> list[dict]:
    set_sql, where_sql, deadline_field = claim
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            UPDATE oa_ticket_bill t SET {set_sql}
            WHERE {where_sql}
            RETURNING t.id, t.{deadline_field}
            """,
            {"now": now},
        )
        return [{"id": row[0], "deadline": row[1]} for row in cursor.fetchall()]
