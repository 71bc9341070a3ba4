"""Draining a group's queue: when someone becomes free (heartbeat, end of busy or wrap-up,
completion, answered offer), the group's waiting tickets go to eligible members, most urgent
SLA deadline first, in the request that freed them; a worker and the periodic sweep back it up.

Lock order everywhere: the group row, then ticket rows (SKIP LOCKED where many are taken)."""

import logging
from datetime import datetime

from celery import current_app
from django.db import transaction
from django.db.models import F
from django.db.models.functions import Least
from django.utils import timezone
from prometheus_client import Counter

from handler_groups.models import GroupStatus, HandlerGroup
from ticketing import lifecycle
from ticketing.models import ProcessStatus, Ticket, TicketRecord, TicketStatus

from .models import AssignmentEvent
from .route import route
from .strategies.registry import get_strategy

logger = logging.getLogger(__name__)

DRAINS = Counter("routing_drains_total", "Group queue drains run")
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
    """The group's queue: approved tickets waiting in its pool, most urgent SLA deadline
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
    """(ticket_id, user_id) of everyone who missed a ticket (an offer reclaimed from them: a
    MISSED event) or declined it (its "decline" audit record, actor = the agent), one UNION."""
    missed = AssignmentEvent.objects.filter(
        kind=AssignmentEvent.Kind.MISSED, user__isnull=False, **tickets
    ).values_list("ticket_id", "user_id")
    declined = TicketRecord.objects.filter(
        action=lifecycle.DECLINE.name, actor__isnull=False, **tickets
    ).values_list("ticket_id", "actor_id")
    return missed.union(declined)


def missed_by(ticket_id: int) -> frozenset[int]:
    """Who is never routed this ticket again: everyone who missed or declined it."""
    return frozenset(user_id for _, user_id in _turned_down(ticket_id=ticket_id))


def missed_by_many(ticket_ids: list[int]) -> dict[int, frozenset[int]]:
    """`missed_by` for many tickets in one query."""
    missed: dict[int, set[int]] = {}
    for ticket_id, user_id in _turned_down(ticket_id__in=ticket_ids):
        missed.setdefault(ticket_id, set()).add(user_id)
    return {ticket_id: frozenset(users) for ticket_id, users in missed.items()}


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
        queue = list(
            waiting_tickets(group_id).select_for_update(skip_locked=True, of=("self",))[:limit]
        )
        missed = missed_by_many([t.pk for t in queue])
        for ticket in queue:
            exclude = missed.get(ticket.pk, frozenset())
            routed = route(ticket=ticket, group=group, actor_id=None, now=now, exclude=exclude)
            if routed.ticket_status == TicketStatus.PENDING_PROCESS:
                assigned += 1
            elif not exclude:
                # Eligibility depends on the ticket only through its exclusions: nobody took
                # an unexcluded ticket, so nobody is free for the rest of the queue either.
                break
    DRAINS.inc()
    if assigned:
        DRAINED.inc(assigned)
        logger.info("drained", extra={"group_id": group_id, "assigned": assigned})
    return assigned
