"""Routing a ticket at the moment it needs a handler (approval, transfer to a group, drain,
reclaim, overflow): the group's strategy picks, and the ticket is assigned or waits in its
group's queue. The caller holds the group row lock (`lock_group`), taken before ticket rows.

May import: routing's strategies and models, ticketing's core (models, lifecycle, transitions,
notify), handler_groups, config."""

import json
import logging
from collections.abc import Collection, Mapping
from datetime import datetime

from celery import current_app
from django.db import connection, transaction
from psycopg.pq import TransactionStatus

from handler_groups.models import HandlerGroup
from ticketing import lifecycle, notify
from ticketing.models import Ticket, TicketStatus
from ticketing.transitions import apply_transition

from .models import AssignmentEvent, RoutingDecision
from .strategies.service import pick_handler

logger = logging.getLogger(__name__)

# The delayed offer check, enqueued by name (routing/tasks.py defines it): services and tasks
# do not import each other both ways.
RECLAIM_OFFER_TASK = "ticketing.reclaim_offer"


DECISION_INSERT_SQL = (
    f"INSERT INTO {RoutingDecision._meta.db_table} "
    "(ticket_id, group_id, trigger, strategy, outcome, chosen_id, members, created) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s::jsonb, %s)"
)
# An assignment writes its event and its decision in one statement (a data-modifying CTE):
# the decision record adds no round trip under the group lock.
ASSIGNED_INSERT_SQL = (
    f"WITH decision AS ({DECISION_INSERT_SQL}) "
    f"INSERT INTO {AssignmentEvent._meta.db_table} "
    "(group_id, ticket_id, user_id, kind, strategy, pick_ms, overflowed, reclaimed, created, "
    "notified) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id"
)


def lock_group(group_id: int | None) -> HandlerGroup | None:
    """Lock the group row (routing state: the round-robin cursor, loads). Always locked before
    ticket rows."""
    if group_id is None:
        return None
    return HandlerGroup.objects.select_for_update().get(pk=group_id)


def route(
    *,
    ticket: Ticket,
    group: HandlerGroup | None,
    actor_id: int | None,
    now: datetime,
    exclude: Mapping[int, str] | Collection[int] = frozenset(),
    overflowed: bool = False,
    defer_notice: bool = False,
    trigger: str = RoutingDecision.Trigger.APPROVAL,
) -> Ticket:
    """Put an approved ticket that is waiting for a handler (submitted or pending assign) in
    front of the group's strategy: picked → pending process (offered to the handler when the
    group makes offers), otherwise it waits in the pool (pending assign), queued
    for its group. The caller holds the group lock. A failing strategy never fails the
    caller: the ticket then simply waits in the pool.

    With `defer_notice`, the agent is not told inside this transaction: the returned ticket
    carries `assignment_event_id`, and the caller calls `notices.send_assignment_notice` after
    commit (the routing sweep backs it up), so rendering and writing the notice happen outside
    the group lock.

    Every decision a group's strategy makes is recorded (one INSERT, RoutingDecision): what
    it saw, `trigger` (why routing ran: approval, transfer, drain, reclaim, decline,
    overflow, escalation) and the outcome."""
    handler_id, pick_ms, members = None, None, None
    if group is not None:
        # No savepoint (two more statements under the lock): a strategy's own failure (Redis
        # down, a bug in Python) leaves the transaction usable and the ticket waits in the
        # pool; a failed SQL statement has aborted the transaction, so that one propagates
        # and the whole approval rolls back.
        try:
            pick = pick_handler(group=group, ticket_id=ticket.pk, now=now, exclude=exclude)
            handler_id, pick_ms, members = pick.chosen, pick.pick_ms, pick.members
        except Exception:
            if _transaction_failed():
                raise
            logger.exception("assignment failed", extra={"ticket_id": ticket.pk})
            handler_id, members = None, []  # recorded as queued, with nothing seen
    if members is not None and handler_id is None:
        record_decision(
            ticket_id=ticket.pk,
            group=group,
            trigger=trigger,
            outcome=RoutingDecision.Outcome.QUEUED,
            chosen_id=None,
            members=members,
            now=now,
        )
    if handler_id is not None:
        ticket = apply_transition(
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
            detail={"handler_id": handler_id, "strategy": group.assign_strategy},
        )
        ticket.handler_group = group
        outcome = (
            RoutingDecision.Outcome.OFFERED
            if group.offer_timeout_seconds
            else RoutingDecision.Outcome.ASSIGNED
        )
        with connection.cursor() as cursor:
            cursor.execute(
                ASSIGNED_INSERT_SQL,
                [
                    *_decision_values(ticket.pk, group, trigger, outcome, handler_id, members, now),
                    group.pk,
                    ticket.pk,
                    handler_id,
                    AssignmentEvent.Kind.ASSIGNED.value,
                    group.assign_strategy,
                    pick_ms,
                    overflowed,
                    bool(exclude),
                    now,
                    not defer_notice,
                ],
            )
            (event_id,) = cursor.fetchone()
        if group.offer_timeout_seconds:
            schedule_offer_timeout(ticket=ticket, seconds=group.offer_timeout_seconds)
        if defer_notice:
            ticket.assignment_event_id = event_id
        else:
            tell_agent(ticket, group)
        return ticket
    if ticket.ticket_status == TicketStatus.SUBMITTED:
        return apply_transition(
            ticket_id=ticket.pk,
            transition=lifecycle.ENTER_POOL,
            actor_id=actor_id,
            now=now,
            values={"queued_time": now},
        )
    return ticket


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
            _decision_values(ticket_id, group, trigger, outcome, chosen_id, members, now),
        )


def _decision_values(ticket_id, group, trigger, outcome, chosen_id, members, now) -> list:
    return [
        ticket_id,
        group.pk,
        trigger,
        group.assign_strategy,
        str(outcome),
        chosen_id,
        json.dumps(members or []),
        now,
    ]


def _transaction_failed() -> bool:
    raw = connection.connection
    return raw is not None and raw.info.transaction_status == TransactionStatus.INERROR


def tell_agent(ticket: Ticket, group: HandlerGroup) -> None:
    """The assignment notice: an offer (with its deadline) in groups that make offers."""
    if group.offer_timeout_seconds:
        notify.offered(ticket, group.offer_timeout_seconds)
    else:
        notify.assigned(ticket)


def schedule_offer_timeout(*, ticket: Ticket, seconds: int) -> None:
    """After commit, a delayed task re-checks the offer when it runs out; the offer sweep is
    the backstop for a lost task."""
    args = (ticket.pk, ticket.handler_id, ticket.assigned_time.isoformat())

    def enqueue():
        try:
            current_app.send_task(RECLAIM_OFFER_TASK, args=args, countdown=seconds)
        except Exception:
            logger.exception("could not schedule the offer timeout", extra={"ticket_id": args[0]})

    transaction.on_commit(enqueue)
