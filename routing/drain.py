"""Draining a group's pool: when someone becomes free (heartbeat, end of busy or wrap-up,
completion, answered offer), the group's waiting tickets go to eligible members, most urgent
SLA deadline first, in the request that freed them; a worker and the periodic sweep back it up.

Lock order everywhere: the group row, then ticket rows (SKIP LOCKED where many are taken)."""

import logging
from datetime import datetime

from celery import current_app
from django.db import transaction
from django.db.models import CharField, F, Value
from django.db.models.functions import Least
from django.utils import timezone
from prometheus_client import Counter

from handler_groups.models import GroupStatus, HandlerGroup
from ticketing import lifecycle
from ticketing.models import ProcessStatus, Ticket, TicketRecord, TicketStatus

from .models import AssignmentEvent, RoutingDecision
from .route import route
from .strategies.eligibility import DECLINED, MISSED
from .strategies.registry import get_strategy

logger = logging.getLogger(__name__)

DRAINS = Counter("routing_drains_total", "Group pool drains run")
DRAINED = Counter("routing_drained_tickets_total", "Waiting tickets assigned by drains")

# Enqueued by name (routing/tasks.py defines it).
DRAIN_GROUPS_TASK = "ticketing.drain_groups"


def drain_now(group_ids: list[int], *, now: datetime | None = None) -> None:
    """Drain these groups here and now (each in its own savepoint); a group that fails is
    handed to a worker instead, and the periodic routing sweep backs both up."""
    for group_id in sorted(set(group_ids)):
        try:
            drain_group(group_id=group_id, now=now)
        except Exception:
            logger.exception("drain failed; queued for a worker", extra={"group_id": group_id})
            request_drain([group_id])


def request_drain(group_ids: list[int]) -> None:
    """Ask a worker to drain these groups; the periodic routing sweep is the backstop when
    the broker is unreachable."""
    if not group_ids:
        return
    try:
        current_app.send_task(DRAIN_GROUPS_TASK, args=(sorted(set(group_ids)),))
    except Exception:
        logger.exception("could not enqueue a drain", extra={"group_ids": group_ids})


def waiting_tickets(group_id: int):
    """The group's pool: approved tickets waiting in it, most urgent SLA deadline
    first, then priority, then submission time."""
    return (
        Ticket.objects.filter(
            handler_group_id=group_id,
            process_status=ProcessStatus.APPROVED,
            ticket_status=TicketStatus.PENDING_ASSIGN,
        )
        .annotate(urgency=Least("response_deadline", "resolve_deadline"))
        .order_by(F("urgency").asc(nulls_last=True), "-priority", "submitted_time", "id")
    )


def _turned_down(**tickets):
    """(ticket_id, user_id, why) of everyone who missed a ticket (an offer reclaimed from
    them: a MISSED event; why = eligibility.MISSED) or declined it (its "decline" audit
    record, actor = the agent; why = eligibility.DECLINED), one UNION."""
    missed = (
        AssignmentEvent.objects.filter(
            kind=AssignmentEvent.Kind.MISSED, user__isnull=False, **tickets
        )
        .annotate(why=Value(MISSED, output_field=CharField()))
        .values_list("ticket_id", "user_id", "why")
    )
    declined = (
        TicketRecord.objects.filter(action=lifecycle.DECLINE.name, actor__isnull=False, **tickets)
        .annotate(why=Value(DECLINED, output_field=CharField()))
        .values_list("ticket_id", "actor_id", "why")
    )
    return missed.union(declined)


def _excluded(rows) -> dict[int, dict[int, str]]:
    """ticket id → {user id → why}; a decline outweighs a miss of the same ticket."""
    turned: dict[int, dict[int, str]] = {}
    for ticket_id, user_id, why in rows:
        users = turned.setdefault(ticket_id, {})
        if users.get(user_id) != DECLINED:
            users[user_id] = why
    return turned


def missed_by(ticket_id: int) -> dict[int, str]:
    """Who is never routed this ticket again: everyone who missed or declined it (user id →
    eligibility.MISSED or DECLINED; routing's `exclude`)."""
    return _excluded(_turned_down(ticket_id=ticket_id)).get(ticket_id, {})


def missed_by_many(ticket_ids: list[int]) -> dict[int, dict[int, str]]:
    """`missed_by` for many tickets in one query."""
    return _excluded(_turned_down(ticket_id__in=ticket_ids))


def drain_group(*, group_id: int, now: datetime | None = None, limit: int = 200) -> int:
    """Hand waiting tickets to eligible members, most urgent first, up to their capacity.
    Returns how many were assigned."""
    now = now or timezone.now()
    assigned = 0
    with transaction.atomic():
        group = HandlerGroup.objects.select_for_update().filter(pk=group_id).first()
        if group is None or group.status != GroupStatus.ENABLED:
            return 0
        if not get_strategy(group.assign_strategy).auto_assigns:
            return 0
        waiting = list(
            waiting_tickets(group_id).select_for_update(skip_locked=True, of=("self",))[:limit]
        )
        missed = missed_by_many([t.pk for t in waiting])
        for ticket in waiting:
            exclude = missed.get(ticket.pk, {})
            routed = route(
                ticket=ticket,
                group=group,
                actor_id=None,
                now=now,
                exclude=exclude,
                trigger=RoutingDecision.Trigger.DRAIN,
            )
            if routed.ticket_status == TicketStatus.PENDING_PROCESS:
                assigned += 1
            elif not exclude:
                # Eligibility depends on the ticket only through its exclusions: nobody took
                # an unexcluded ticket, so nobody is free for the rest of the pool either.
                break
    DRAINS.inc()
    if assigned:
        DRAINED.inc(assigned)
        logger.info("drained", extra={"group_id": group_id, "assigned": assigned})
    return assigned
