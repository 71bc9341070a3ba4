"""Escalation events: one row per ticket × clock × level of its rule's ladder (SlaEvent), kept
in step with the ticket's clocks, and fired on the second.

Keeping in step (`sync_events`): at approval every level gets its instant; a pause clears the
instants of the resolve clock (nothing of a paused clock is due); resume and recompute re-time
every pending level from the moved deadline. At resume, a level whose instant passed during
the pause is skipped if it lies after the deadline it refers to (the deadline had been
reached before the pause, so the level's moment came and went while the clock stood still);
a level at or before its deadline fires on resume or later.

Firing (`fire_due`, run every second by beat and every minute as the backstop): due pending
events are claimed with one compare-and-set UPDATE (pending → fired, or → void when the clock
stopped first: responded, completed, closed, cancelled — or when it is a warning whose
deadline has passed meanwhile), SKIP LOCKED, so concurrent ticks
share the work and each event fires once; the claim, its audit records, its notifications
and its actions (raise priority, move to another group) commit together or not at all.

May import: ticketing models and transitions, handler_groups, notifications (lower layers).
The move to another group is routing's work, a layer above: it is registered here at start-up
(`set_reassigner`) by the workflow app, and absent a registration the level records that it
could not move the ticket."""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone
from django.utils.translation import pgettext_lazy
from prometheus_client import Counter, Histogram

from handler_groups.models import HandlerGroup
from notifications.rendering import TemplateError
from notifications.sending import Message, send_batch
from ticketing.models import Priority, Ticket, TicketRecord

from . import ladder
from .calendars import business_calendar
from .deadlines import hours_to_timedelta
from .models import EscalationLevel, EventState, SlaEvent, SlaRule

logger = logging.getLogger(__name__)

# The clock as the notice names it, in each recipient's language.
CLOCK_WORDS = {
    "response": pgettext_lazy("SLA clock", "response"),
    "resolve": pgettext_lazy("SLA clock", "resolve"),
}

FIRED = Counter("sla_levels_fired_total", "Escalation levels fired", ["clock"])
LAG = Histogram(
    "sla_level_lag_seconds",
    "Seconds from a level's due instant to its firing",
    buckets=(0.25, 0.5, 1, 2, 3, 5, 10, 30, 60, 300),
)
UNADDRESSED = Counter(
    "sla_events_unaddressed_total", "SLA events with no handler, leader or approver to tell"
)
BATCH = 500

Reassigner = Callable[..., object]
_reassigner: Reassigner | None = None


def set_reassigner(reassign: Reassigner) -> None:
    """`reassign(ticket_id=, group_id=, level=, now=)`: move the ticket to that group and
    route it by the group's strategy (registered by the workflow app)."""
    global _reassigner
    _reassigner = reassign


# Keeping events in step with the clocks ---------------------------------------------------------


def rule_ladder(rule: SlaRule) -> list[ladder.Level]:
    return [
        ladder.Level(
            position=level.position,
            clock=level.clock,
            trigger=level.trigger,
            value=level.value,
            notify=tuple(level.notify),
            template_code=level.template_code,
            reassign_group_id=level.reassign_group_id,
            raise_priority=level.raise_priority,
            id=level.pk,
        )
        for level in rule.levels.all()
    ]


def planned_events(
    ticket: Ticket,
    rule: SlaRule | None,
    *,
    response_deadline: datetime | None,
    resolve_deadline: datetime | None,
    pauses: list,
) -> dict[tuple[str, int], tuple[datetime | None, int | None]]:
    """(clock, level) -> (due instant, level id) for every level of the rule whose clock runs
    on this ticket."""
    if rule is None:
        return {}
    calendar = business_calendar(rule.calendar)
    budgets = {
        "response": hours_to_timedelta(rule.response_hours),
        "resolve": hours_to_timedelta(rule.resolve_hours),
    }
    deadlines = {"response": response_deadline, "resolve": resolve_deadline}
    planned = {}
    for level in rule_ladder(rule):
        budget = budgets[level.clock]
        if budget is None:
            continue
        due = ladder.due_at(
            level,
            start=ticket.submitted_time,
            budget=budget,
            deadline=deadlines[level.clock],
            pauses=pauses if level.clock == "resolve" else [],
            calendar=calendar,
        )
        planned[(level.clock, level.position)] = (due, level.id)
    return planned


def sync_events(
    ticket: Ticket,
    rule: SlaRule | None,
    *,
    response_deadline: datetime | None,
    resolve_deadline: datetime | None,
    pauses: list,
    now: datetime,
    resumed: bool = False,
) -> None:
    """Create the ticket's events, or re-time the pending ones (fired ones are history).
    Pending events of levels the rule no longer has are removed. (At approval the ticket
    has none yet: `start_events` writes them with the approval.)"""
    planned = planned_events(
        ticket,
        rule,
        response_deadline=response_deadline,
        resolve_deadline=resolve_deadline,
        pauses=pauses,
    )
    existing = {(e.clock, e.level): e for e in SlaEvent.objects.filter(ticket_id=ticket.pk)}
    creates, updates = [], []
    for key, (due, level_id) in planned.items():
        event = existing.get(key)
        if event is None:
            creates.append(
                SlaEvent(
                    ticket_id=ticket.pk,
                    clock=key[0],
                    level=key[1],
                    escalation_level_id=level_id,
                    due_at=due,
                )
            )
        elif event.state == EventState.PENDING and (event.due_at, event.escalation_level_id) != (
            due,
            level_id,
        ):
            event.due_at, event.escalation_level_id = due, level_id
            updates.append(event)
    stale = [
        e.pk for key, e in existing.items() if key not in planned and e.state == EventState.PENDING
    ]
    if stale:
        SlaEvent.objects.filter(pk__in=stale).delete()
    if creates:
        SlaEvent.objects.bulk_create(creates, ignore_conflicts=True)
    if updates:
        SlaEvent.objects.bulk_update(updates, ["due_at", "escalation_level_id"])
    if resumed and resolve_deadline is not None:
        # Passed while paused and after the deadline it refers to: skipped, not fired late.
        SlaEvent.objects.filter(
            ticket_id=ticket.pk,
            clock="resolve",
            state=EventState.PENDING,
            due_at__lt=now,
            due_at__gt=resolve_deadline,
        ).update(state=EventState.SKIPPED)


START_EVENTS_SQL = """
    INSERT INTO oa_sla_event (ticket_id, clock, level, escalation_level_id, due_at, state,
                              fired_at)
    SELECT upd.id, e.clock, e.level, e.level_id, e.due_at, %s, NULL
      FROM upd,
           unnest(%s::varchar[], %s::smallint[], %s::bigint[], %s::timestamptz[])
             AS e(clock, level, level_id, due_at)
    ON CONFLICT DO NOTHING
"""
"""A fresh ticket's escalation events, one per level (parameters: the pending state, then the
clocks, levels, level ids and instants as parallel arrays), run in the approval's statement as
an Along reading the approved ticket `upd`. It writes new rows only; a replay meets the
(ticket, clock, level) key and writes nothing."""


def start_events(
    planned: dict[tuple[str, int], tuple[datetime | None, int | None]],
) -> tuple[str, list]:
    """The approval's escalation events (`planned_events` of the fresh ticket, which has none
    yet), as one INSERT to run in the approval's own statement (`upd`: the approved ticket;
    ticketing.transitions.Along)."""
    keys = list(planned)
    return START_EVENTS_SQL, [
        EventState.PENDING.value,
        [clock for clock, _ in keys],
        [level for _, level in keys],
        [planned[key][1] for key in keys],
        [planned[key][0] for key in keys],
    ]


def pause_events(ticket_id: int) -> None:
    """The resolve clock stopped: none of its pending levels has an instant until resume."""
    SlaEvent.objects.filter(ticket_id=ticket_id, clock="resolve", state=EventState.PENDING).update(
        due_at=None
    )


# Firing --------------------------------------------------------------------------------------

_RUNNING = """t.process_status = 2 AND t.ticket_status IN (1, 2, 3)
    AND CASE e.clock WHEN 'response' THEN t.responded_time IS NULL ELSE NOT t.sla_paused END"""
# A warning (a level before its deadline) claimed only once the deadline has passed — the
# ticks were down across its moment — is void: the deadline's own levels say more.
_STALE = """e.due_at < (CASE e.clock WHEN 'response' THEN t.response_deadline
                                   ELSE t.resolve_deadline END)
    AND (CASE e.clock WHEN 'response' THEN t.response_deadline
                     ELSE t.resolve_deadline END) <= %(now)s"""
_FIRES = f"({_RUNNING}) AND NOT ({_STALE})"
CLAIM_SQL = f"""
WITH due AS (
    SELECT id FROM oa_sla_event
    WHERE state = 'pending' AND due_at IS NOT NULL AND due_at <= %(now)s
    ORDER BY due_at
    LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED
)
UPDATE oa_sla_event e
SET state = CASE WHEN {_FIRES} THEN 'fired' ELSE 'void' END,
    fired_at = CASE WHEN {_FIRES} THEN %(now)s::timestamptz END
FROM due, oa_ticket_bill t
WHERE e.id = due.id AND t.id = e.ticket_id
RETURNING e.id, e.ticket_id, e.clock, e.level, e.escalation_level_id, e.due_at, e.state
"""


def fire_due(*, now: datetime | None = None, max_batches: int = 100) -> dict[str, int]:
    """Fire every level due at `now`, in batches of BATCH (each its own transaction).
    Returns how many fired per clock: `<clock>_warn` (levels before the clock's deadline)
    and `<clock>_escalation` (at or after it)."""
    fired: dict[str, int] = {
        f"{clock}_{kind}": 0 for clock in ("response", "resolve") for kind in ("warn", "escalation")
    }
    for _ in range(max_batches):
        with transaction.atomic():
            at = now or timezone.now()
            with connection.cursor() as cursor:
                cursor.execute(CLAIM_SQL, {"now": at, "limit": BATCH})
                claimed = cursor.fetchall()
            events = [row for row in claimed if row[6] == EventState.FIRED]
            if events:
                for kind, n in _act(events, at).items():
                    fired[kind] += n
        if len(claimed) < BATCH:
            break
    return fired


def _act(events: list[tuple], now: datetime) -> dict[str, int]:
    ticket_ids = {row[1] for row in events}
    tickets = {
        t.pk: t
        for t in Ticket.objects.filter(pk__in=ticket_ids).only(
            "pk",
            "bill_code",
            "title",
            "priority",
            "handler_id",
            "handler_group_id",
            "response_deadline",
            "resolve_deadline",
        )
    }
    levels = {
        level.pk: level
        for level in EscalationLevel.objects.filter(pk__in={row[4] for row in events if row[4]})
    }
    groups = {
        g["pk"]: g
        for g in HandlerGroup.objects.filter(
            pk__in={t.handler_group_id for t in tickets.values() if t.handler_group_id}
        ).values("pk", "leader_id", "escalation_contact_id")
    }
    read: dict[str, list[int]] = {}

    def approver_ids() -> list[int]:
        """Read at most once per batch, and only when a level needs them."""
        if "approvers" not in read:
            read["approvers"] = _approver_ids()
        return read["approvers"]

    messages: dict[str, list[Message]] = defaultdict(list)
    records: list[TicketRecord] = []
    warned: dict[str, list[int]] = defaultdict(list)
    moves: list[tuple[TicketRecord, int, int, int]] = []
    kinds: dict[str, int] = defaultdict(int)
    for _id, ticket_id, clock, position, level_id, due, _state in events:
        ticket = tickets[ticket_id]
        level = levels.get(level_id)
        deadline = ticket.response_deadline if clock == "response" else ticket.resolve_deadline
        notify = list(level.notify) if level is not None else ["handler", "leader"]
        group = groups.get(ticket.handler_group_id) if ticket.handler_group_id else None
        recipients = _recipients(notify, ticket, group, approver_ids)
        if not recipients and "approvers" not in notify:
            # Nobody handles or leads the ticket: the approvers, so no breach is silent.
            recipients = approver_ids()
        if not recipients:
            UNADDRESSED.inc()
            logger.error("SLA level with nobody to tell", extra={"ticket_id": ticket_id})
        template = (level.template_code if level else "") or ladder.default_template(due, deadline)
        detail = {
            "level": position,
            "due_at": due.isoformat(),
            "deadline": deadline.isoformat() if deadline else None,
            "template": template,
            "recipients": recipients,
        }
        if level is not None:
            detail.update(trigger=level.trigger, value=str(level.value))
        if level is not None and level.raise_priority:
            raised = min(ticket.priority + 1, Priority.URGENT)
            if raised != ticket.priority:
                Ticket.objects.filter(pk=ticket_id).update(priority=F("priority") + 1)
                detail["priority"] = {"from": ticket.priority, "to": raised}
                ticket.priority = raised
        messages[template].append(
            Message(
                recipients=recipients,
                params={
                    "billCode": ticket.bill_code,
                    "title": ticket.title,
                    "type": CLOCK_WORDS.get(clock, clock),
                    "level": position,
                    # Written in each recipient's zone and language (notifications.sending).
                    "deadline": deadline or "",
                    "ticketId": ticket_id,
                },
                dedupe_key=f"sla:{clock}:level{position}:{ticket_id}",
                ticket_id=ticket_id,
            )
        )
        if deadline is not None and due < deadline:
            warned[clock].append(ticket_id)
            kinds[f"{clock}_warn"] += 1
        else:
            kinds[f"{clock}_escalation"] += 1
        record = TicketRecord(
            ticket_id=ticket_id, action=f"sla_{clock}_level", created=now, detail=detail
        )
        records.append(record)
        if level is not None and level.reassign_group_id:
            moves.append((record, ticket_id, level.reassign_group_id, position))
        FIRED.labels(clock).inc()
        LAG.observe(max((now - due).total_seconds(), 0))
    for clock, ids in warned.items():
        Ticket.objects.filter(pk__in=ids).update(**{f"{clock}_warned": True})
    TicketRecord.objects.bulk_create(records)
    for record, ticket_id, group_id, position in moves:  # after the level's own record
        record.detail["reassign"] = _reassign(ticket_id, group_id, position, now)
        record.save(update_fields=["detail"])
    for template, batch in messages.items():
        try:
            with transaction.atomic():
                send_batch(template_code=template, messages=batch, now=now)
        except TemplateError:
            # The levels fired (their records say so); a broken template must not hold back
            # every other ticket's escalation. Logged and counted by send_batch.
            logger.error("SLA level notices not sent", extra={"template": template})
    return kinds


def _recipients(
    notify: list[str], ticket: Ticket, group: Mapping[str, Any] | None, approver_ids
) -> list[int]:
    """The people `notify` names for the ticket; `group` is its group's leader_id and
    escalation_contact_id (None: no group)."""
    people: list[int | None] = []
    for target in notify:
        if target == "handler":
            people.append(ticket.handler_id)
        elif target == "leader":
            people.append(group.get("leader_id") if group else None)
        elif target == "escalation_contact":
            people.append(group.get("escalation_contact_id") if group else None)
        elif target == "approvers":
            people.extend(approver_ids())
    return list(dict.fromkeys(p for p in people if p))


def _reassign(ticket_id: int, group_id: int, position: int, now: datetime) -> dict:
    if _reassigner is None:
        return {"group_id": group_id, "moved": False, "reason": "no reassigner registered"}
    try:
        with transaction.atomic():
            _reassigner(ticket_id=ticket_id, group_id=group_id, level=position, now=now)
    except Exception as exc:  # a disabled group, an illegal state: recorded, not fatal
        logger.warning(
            "escalation could not move the ticket",
            extra={"ticket_id": ticket_id, "group_id": group_id, "error": str(exc)},
        )
        return {"group_id": group_id, "moved": False, "reason": str(exc)[:300]}
    return {"group_id": group_id, "moved": True}


def _approver_ids() -> list[int]:
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
