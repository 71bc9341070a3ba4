"""Routing a ticket at the moment it needs a handler (approval, transfer to a group, drain,
reclaim, overflow): the group's strategy picks, and the ticket is assigned or waits in its
group's queue. The caller holds the group row lock, taken before ticket rows (an approval
takes the ticket's first, by approving it, and then the group's: `lock_group`).

May import: routing's strategies and models, ticketing's core (models, lifecycle, transitions,
notify), handler_groups, config."""

import logging
from collections.abc import Collection, Mapping
from datetime import datetime
from functools import cache

import orjson
from celery import current_app
from django.db import connection, transaction
from django.utils import timezone
from psycopg import sql
from psycopg.pq import TransactionStatus

from config.db import instances, prepared_cursor
from handler_groups.models import HandlerGroup
from ticketing import lifecycle, notify
from ticketing.models import Ticket, TicketStatus
from ticketing.transitions import Along, apply_transition_along

from . import loads
from .models import AssignmentEvent, RoutingDecision
from .strategies.service import last_turn, pick_handler

logger = logging.getLogger(__name__)

# The delayed offer check, enqueued by name (routing/tasks.py defines it): services and tasks
# do not import each other both ways.
RECLAIM_OFFER_TASK = "ticketing.reclaim_offer"


DECISION_INSERT_SQL = """
INSERT INTO oa_routing_decision
    (ticket_id, group_id, trigger, strategy, outcome, chosen_id, members, created)
VALUES (%s, %s, %s, %s, %s, %s, %s::jsonb, %s)
"""
"""One routing decision of a ticket that is not moving (record_decision). Takes no lock
beyond the row it inserts; the caller holds the group's."""

# The writes that go with a routing transition: ticketing.transitions.Along, in the
# transition's own statement, reading the routed ticket as `upd` (no row in `upd`: the
# transition did not apply, and none of them writes). One statement under the group lock
# for the ticket, its audit record, the cursor, the decision and the event.
DECISION_ALONG_SQL = """
INSERT INTO oa_routing_decision
    (ticket_id, group_id, trigger, strategy, outcome, chosen_id, members, created)
SELECT upd.id, %s, %s, %s, %s, %s, %s::jsonb, %s FROM upd
"""
"""The decision of the routing that moved the ticket."""

EVENT_ALONG_SQL = """
INSERT INTO oa_assignment_event
    (group_id, ticket_id, user_id, kind, strategy, pick_ms, overflowed, reclaimed, created,
     notified)
SELECT %s, upd.id, upd.handler_id, %s, %s, %s, %s, %s, upd.assigned_time, true FROM upd
"""
"""The assignment's event: its agent and instant are the assignment's own (`upd`). Notified:
the agent's notice is written in the same transaction (route: `notify.told_of_assignment`),
so the notice sweep never has it to tell."""

CURSOR_ALONG_SQL = """
UPDATE oa_ticket_handler_group SET last_assign_index = %s, updated = %s
WHERE id = %s AND EXISTS (SELECT 1 FROM upd)
"""
"""The group's round-robin cursor, moved to the member chosen. The group row is already
locked by the caller (lock_group): this UPDATE waits for nobody."""

LOCK_GROUP_SQL = """
SELECT {columns} FROM oa_ticket_handler_group WHERE id = %s FOR NO KEY UPDATE
"""
"""The group row as it is once locked, whatever the statement's snapshot (lock_group). FOR NO
KEY UPDATE serialises routing as FOR UPDATE does (the two conflict, and each with itself),
but not the foreign-key checks of rows that reference the group (FOR KEY SHARE): a ticket
submitted into the group never waits for an approval's routing. {columns}: the model's."""


def lock_group(group_id: int | None) -> HandlerGroup | None:
    """Lock a group (its routing state: the round-robin cursor, loads) and read it; None
    for no group. An approval calls it holding the ticket it has just approved: ticket
    before group is safe there, as nobody who holds a group lock ever waits for a ticket
    that is only now leaving approval."""
    if group_id is None:
        return None
    with prepared_cursor() as cursor:
        cursor.execute(_lock_group_sql(), [group_id])
        found = instances(HandlerGroup, cursor.fetchall())
    return found[0] if found else None


@cache
def _lock_group_sql() -> str:
    columns = [sql.Identifier(f.column) for f in HandlerGroup._meta.concrete_fields]
    return sql.SQL(LOCK_GROUP_SQL.strip()).format(columns=sql.SQL(", ").join(columns)).as_string()


def route(
    *,
    ticket: Ticket,
    group: HandlerGroup | None,
    actor_id: int | None,
    now: datetime,
    exclude: Mapping[int, str] | Collection[int] = frozenset(),
    overflowed: bool = False,
    trigger: str = RoutingDecision.Trigger.APPROVAL,
) -> Ticket:
    """Put an approved ticket that is waiting for a handler (submitted or pending assign) in
    front of the group's strategy: picked → pending process (offered to the handler when the
    group makes offers), otherwise it waits in the pool (pending assign), queued
    for its group. The caller holds the group lock. A failing strategy never fails the
    caller: the ticket then simply waits in the pool.

    Every decision a group's strategy makes is recorded (RoutingDecision): what it saw,
    `trigger` (why routing ran: approval, transfer, drain, reclaim, decline, overflow,
    escalation) and the outcome. An assignment is one statement — the ticket's transition
    with its audit record, the round-robin cursor, the decision, the assignment event and the
    fold of the member's load rows (docs/adr/0001-one-statement-assignment.md) — followed in
    the same transaction by the agent's notice (notifications.send: inbox message and outbox
    deliveries), so the agent is told exactly when, and only if, the assignment commits."""
    handler_id, pick_ms, members, readers = None, None, None, None
    cursor = group.last_assign_index if group is not None else None
    if group is not None:
        # No savepoint (two more statements under the lock): a strategy's own failure (Redis
        # down, a bug in Python) leaves the transaction usable and the ticket waits in the
        # pool; a failed SQL statement has aborted the transaction, so that one propagates
        # and the whole approval rolls back.
        try:
            pick = pick_handler(group=group, ticket_id=ticket.pk, now=now, exclude=exclude)
            handler_id, pick_ms, members = pick.chosen, pick.pick_ms, pick.members
            readers = pick.readers
        except Exception:
            if _transaction_failed():
                raise
            logger.exception("assignment failed", extra={"ticket_id": ticket.pk})
            # Nobody was chosen: the cursor stays (an int: read from this group).
            group.last_assign_index = cursor  # type: ignore[assignment]
            handler_id, members = None, []  # recorded as queued, with nothing seen
    # The strategy moved the round-robin cursor in memory (to the member chosen): it is
    # written with the decision.
    moved = group is not None and group.last_assign_index != cursor
    if handler_id is None:
        return _queue(
            ticket,
            group,
            members,
            moved,
            actor_id=actor_id,
            now=now,
            trigger=trigger,
        )
    assert group is not None  # a handler was picked: by the group's strategy
    outcome = (
        RoutingDecision.Outcome.OFFERED
        if group.offer_timeout_seconds
        else RoutingDecision.Outcome.ASSIGNED
    )
    # The event's agent and instant are the assignment's own (`upd`: handler_id, assigned_time).
    event = [
        group.pk,
        AssignmentEvent.Kind.ASSIGNED.value,
        group.assign_strategy,
        pick_ms,
        overflowed,
        bool(exclude),
    ]
    ticket, _ = apply_transition_along(
        ticket_id=ticket.pk,
        transition=lifecycle.ASSIGN,
        actor_id=actor_id,
        now=now,
        values={
            "handler_id": handler_id,
            "assigned_time": now,
            "accepted_time": None,
            "queued_time": None,
        },
        detail={"handler_id": handler_id, "strategy": group.assign_strategy, **last_turn(members)},
        along=[
            *_cursor_along(group, moved),
            Along(
                "decision",
                DECISION_ALONG_SQL,
                _decision_values(group, trigger, outcome, handler_id, members, now),
            ),
            Along("event", EVENT_ALONG_SQL, event),
            *_fold_along(handler_id, group, now),
        ],
    )
    ticket.handler_group = group
    # The agent's notice, in the same transaction: it commits with the assignment or not at
    # all. A template that cannot render is logged and the assignment goes on; a failed
    # write (SQL) aborts the transaction and takes the whole approval with it.
    notify.told_of_assignment(ticket, group, readers=readers)
    if group.offer_timeout_seconds:
        schedule_offer_timeout(ticket=ticket, seconds=group.offer_timeout_seconds)
    return ticket


def _queue(
    ticket: Ticket,
    group: HandlerGroup | None,
    members: list[dict] | None,
    moved: bool,
    *,
    actor_id: int | None,
    now: datetime,
    trigger: str,
) -> Ticket:
    """Nobody picked: the ticket waits in the pool (a submitted ticket enters it), with the
    decision recorded when the group's strategy made one (`members` not None)."""
    along = []
    if members is not None:
        along += [
            *_cursor_along(group, moved),  # type: ignore[arg-type]  # members: a group's
            Along(
                "decision",
                DECISION_ALONG_SQL,
                _decision_values(
                    group, trigger, RoutingDecision.Outcome.QUEUED, None, members, now
                ),
            ),
        ]
    if ticket.ticket_status == TicketStatus.SUBMITTED:
        ticket, _ = apply_transition_along(
            ticket_id=ticket.pk,
            transition=lifecycle.ENTER_POOL,
            actor_id=actor_id,
            now=now,
            values={"queued_time": now},
            along=along,
        )
    elif members is not None:
        if moved:
            # (members: the group's strategy ran, so there is a group)
            group.save(update_fields=["last_assign_index", "updated"])  # type: ignore[union-attr]
        record_decision(
            ticket_id=ticket.pk,
            group=group,  # type: ignore[arg-type]  # members: the group's strategy ran
            trigger=trigger,
            outcome=RoutingDecision.Outcome.QUEUED,
            chosen_id=None,
            members=members,
            now=now,
        )
    return ticket


def _fold_along(handler_id: int, group: HandlerGroup, now: datetime) -> list[Along]:
    """The member's load rows of the group folded into one as they are assigned (the
    assignment's own difference is written after the statement, by the ticket's trigger), so
    the figures the next routing reads stay a few rows per member."""
    gone, kept = loads.fold_params(handler_id, group.pk, now)
    return [
        Along("fold_gone", loads.FOLD_GONE_SQL, gone),
        Along("fold_kept", loads.FOLD_KEPT_SQL, kept),
    ]


def _cursor_along(group: HandlerGroup, moved: bool) -> list[Along]:
    if not moved:
        return []
    return [Along("cursor", CURSOR_ALONG_SQL, [group.last_assign_index, timezone.now(), group.pk])]


def record_decision(
    *,
    ticket_id: int,
    group: HandlerGroup,
    trigger: str,
    outcome: str,
    chosen_id: int | None,
    members: list[dict],
    now: datetime,
) -> None:
    """Store one RoutingDecision: a single INSERT, raw (under the group lock the ORM's
    create costs more than PostgreSQL's insert; the bench measures approvals with it)."""
    with connection.cursor() as cursor:
        cursor.execute(
            DECISION_INSERT_SQL,
            [ticket_id, *_decision_values(group, trigger, outcome, chosen_id, members, now)],
        )


def _decision_values(group, trigger, outcome, chosen_id, members, now) -> list:
    """A RoutingDecision's columns after its ticket."""
    return [
        group.pk,
        trigger,
        group.assign_strategy,
        str(outcome),
        chosen_id,
        orjson.dumps(members or []).decode(),
        now,
    ]


def _transaction_failed() -> bool:
    raw = connection.connection
    return raw is not None and raw.info.transaction_status == TransactionStatus.INERROR


def schedule_offer_timeout(*, ticket: Ticket, seconds: int) -> None:
    """After commit, a delayed task re-checks the offer when it runs out; the offer sweep is
    the backstop for a lost task."""
    # An offered ticket has its assigned_time.
    args = (ticket.pk, ticket.handler_id, ticket.assigned_time.isoformat())  # type: ignore[union-attr]

    def enqueue():
        try:
            current_app.send_task(RECLAIM_OFFER_TASK, args=args, countdown=seconds)
        except Exception:
            logger.exception("could not schedule the offer timeout", extra={"ticket_id": args[0]})

    transaction.on_commit(enqueue)
