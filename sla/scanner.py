"""The escalation scanner: warns before deadlines and marks timeouts, exactly once.

Each event is claimed with one set-based compare-and-set UPDATE (… WHERE flag = false …
RETURNING), and its record and notifications are written in the same transaction. Two scans
at the same moment cannot both claim a ticket (the second one's UPDATE re-checks the flag
after the first commits); a scan that dies before commit claimed nothing."""

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone
from prometheus_client import Counter

from handler_groups.models import HandlerGroup
from notifications.sending import Message, send_batch
from ticketing.models import TicketRecord

logger = logging.getLogger(__name__)

EVENTS = Counter("sla_events_total", "SLA warnings and timeouts claimed", ["clock", "event"])
SILENT = Counter(
    "sla_events_unaddressed_total", "SLA events with no handler, leader or approver to tell"
)

# (clock, event) → the claim's SET and WHERE. {warn} is the ticket rule's warn_before_minutes.
_OPEN = "t.process_status = 2 AND t.ticket_status IN (1, 2, 3)"
_WARN = (
    "make_interval(mins => COALESCE((SELECT r.warn_before_minutes FROM oa_sla_rule r "
    "WHERE r.id = t.sla_rule_id), 30))"
)
CLAIMS = {
    ("response", "timeout"): (
        "response_timeout = true",
        f"""{_OPEN} AND t.responded_time IS NULL AND t.response_timeout = false
            AND t.response_deadline <= %(now)s""",
        "response_deadline",
    ),
    ("response", "warn"): (
        "response_warned = true",
        f"""{_OPEN} AND t.responded_time IS NULL AND t.response_timeout = false
            AND t.response_warned = false
            AND t.response_deadline > %(now)s AND t.response_deadline <= %(horizon)s
            AND t.response_deadline - {_WARN} <= %(now)s""",
        "response_deadline",
    ),
    ("resolve", "timeout"): (
        "resolve_timeout = true",
        f"""{_OPEN} AND t.resolve_timeout = false AND t.sla_paused = false
            AND t.resolve_deadline <= %(now)s""",
        "resolve_deadline",
    ),
    ("resolve", "warn"): (
        "resolve_warned = true",
        f"""{_OPEN} AND t.resolve_timeout = false AND t.sla_paused = false
            AND t.resolve_warned = false
            AND t.resolve_deadline > %(now)s AND t.resolve_deadline <= %(horizon)s
            AND t.resolve_deadline - {_WARN} <= %(now)s""",
        "resolve_deadline",
    ),
}
TEMPLATES = {"warn": "ticket-sla-warn", "timeout": "ticket-sla-timeout"}


@dataclass
class ScanResult:
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def sla_scan(*, now: datetime | None = None) -> ScanResult:
    """One pass over every clock and event. Safe to run concurrently and repeatedly."""
    now = now or timezone.now()
    result = ScanResult()
    for (clock, event), claim in CLAIMS.items():
        with transaction.atomic():
            claimed = _claim(claim, now)
            if claimed:
                _write_events(clock, event, claimed, now)
        result.counts[f"{clock}_{event}"] = len(claimed)
        EVENTS.labels(clock, event).inc(len(claimed))
    if result.total:
        logger.info("sla scan", extra={"now": now.isoformat(), **result.counts})
    return result


def _claim(claim, now: datetime) -> list[dict]:
    set_sql, where_sql, deadline_field = claim
    with connection.cursor() as cursor:
        cursor.execute("SELECT COALESCE(MAX(warn_before_minutes), 30) FROM oa_sla_rule")
        (max_warn,) = cursor.fetchone()
        cursor.execute(
            f"""
            UPDATE oa_ticket_bill t SET {set_sql}
            WHERE {where_sql}
            RETURNING t.id, t.bill_code, t.title, t.handler_id, t.handler_group_id,
                      t.{deadline_field}
            """,
            {"now": now, "horizon": now + timedelta(minutes=max_warn)},
        )
        columns = ["id", "bill_code", "title", "handler_id", "handler_group_id", "deadline"]
        return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]


def _write_events(clock: str, event: str, tickets: list[dict], now: datetime) -> None:
    leaders = dict(
        HandlerGroup.objects.filter(pk__in={t["handler_group_id"] for t in tickets}).values_list(
            "pk", "leader_id"
        )
    )
    approvers: list[int] | None = None
    messages = []
    records = []
    for ticket in tickets:
        recipients = [
            r for r in (ticket["handler_id"], leaders.get(ticket["handler_group_id"])) if r
        ]
        if not recipients:
            if approvers is None:
                approvers = _approver_ids()
                if not approvers:
                    SILENT.inc()
                    logger.error("SLA event with nobody to tell", extra={"ticket_id": ticket["id"]})
            recipients = approvers
        messages.append(
            Message(
                recipients=recipients,
                params={
                    "billCode": ticket["bill_code"],
                    "title": ticket["title"],
                    "type": clock,
                    "deadline": ticket["deadline"].strftime("%Y-%m-%d %H:%M UTC"),
                    "ticketId": ticket["id"],
                },
                dedupe_key=f"sla:{clock}:{event}:{ticket['id']}",
                ticket_id=ticket["id"],
            )
        )
        records.append(
            TicketRecord(
                ticket_id=ticket["id"],
                action=f"sla_{clock}_{event}",
                created=now,
                detail={"deadline": ticket["deadline"].isoformat(), "recipients": recipients},
            )
        )
    TicketRecord.objects.bulk_create(records)
    send_batch(template_code=TEMPLATES[event], messages=messages, now=now)


def _approver_ids() -> list[int]:
    """Nobody handles or leads the ticket: the approvers' inbox, so a breach is never silent."""
    users = get_user_model().objects.filter(is_active=True)
    return list(
        users.filter(
            Q(user_permissions__codename="approve_ticket")
            | Q(groups__permissions__codename="approve_ticket")
            | Q(is_superuser=True)
            | Q(is_staff=True)  # staff approve too (ticketing.access.is_approver)
        )
        .distinct()
        .values_list("pk", flat=True)
    )
