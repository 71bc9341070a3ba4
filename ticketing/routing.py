"""Routing after approval: draining waiting tickets to agents who became free, reclaiming
offers nobody accepted, and overflowing tickets nobody could take.

Lock order everywhere: the group row, then ticket rows (SKIP LOCKED where many are taken)."""

import logging
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import F, Q
from django.db.models.functions import Least
from django.utils import timezone

from handler_groups import idle_pool
from handler_groups.assignment.registry import get_strategy
from handler_groups.models import AssignmentEvent, GroupStatus, HandlerGroup

from . import lifecycle
from .lifecycle import IllegalTransition
from .models import ProcessStatus, Ticket, TicketStatus

logger = logging.getLogger(__name__)


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
    from .tasks import drain_groups

    if not group_ids:
        return
    try:
        drain_groups.delay(sorted(set(group_ids)))
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


def _missed_by(ticket_id: int) -> frozenset[int]:
    return frozenset(
        AssignmentEvent.objects.filter(
            ticket_id=ticket_id, kind=AssignmentEvent.Kind.MISSED
        ).values_list("user_id", flat=True)
    )


def _missed_by_many(ticket_ids: list[int]) -> dict[int, frozenset[int]]:
    missed: dict[int, set[int]] = {}
    for ticket_id, user_id in AssignmentEvent.objects.filter(
        ticket_id__in=ticket_ids, kind=AssignmentEvent.Kind.MISSED
    ).values_list("ticket_id", "user_id"):
        missed.setdefault(ticket_id, set()).add(user_id)
    return {ticket_id: frozenset(users) for ticket_id, users in missed.items()}


def drain_group(*, group_id: int, now: datetime | None = None, limit: int = 200) -> int:
    """Hand waiting tickets to eligible members, most urgent first, up to their capacity.
    Returns how many were assigned."""
    from .services import route

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
        missed = _missed_by_many([t.pk for t in queue])
        for ticket in queue:
            exclude = missed.get(ticket.pk, frozenset())
            routed = route(ticket=ticket, group=group, actor_id=None, now=now, exclude=exclude)
            if routed.ticket_status == TicketStatus.PENDING_PROCESS:
                assigned += 1
            elif not exclude:
                # Eligibility depends on the ticket only through its exclusions: nobody took
                # an unexcluded ticket, so nobody is free for the rest of the queue either.
                break
    if assigned:
        logger.info("drained", extra={"group_id": group_id, "assigned": assigned})
    return assigned


def offer_answered(*, group_id: int, user_id: int, now: datetime) -> None:
    """The agent accepted: no open offer any more; back in the idle pool (after commit)."""
    group = HandlerGroup.objects.filter(pk=group_id).only("offer_timeout_seconds").first()
    if group is None or not group.offer_timeout_seconds:
        return
    transaction.on_commit(
        lambda: (
            idle_pool.clear_offer(group_id, user_id, back_to_pool_at=now.timestamp()),
            drain_now([group_id]),
        )
    )


def reclaim_offer(
    *,
    ticket_id: int,
    handler_id: int,
    assigned_time: datetime,
    now: datetime | None = None,
    reason: str = "timeout",
) -> bool:
    """Take back an auto-assigned ticket its handler did not accept: only if it is still the
    same offer (same handler, same assignment, not accepted). Counts a miss, writes a record,
    tells the agent, and routes the ticket again excluding everyone who missed it."""
    from . import notify
    from .services import apply_transition, route

    now = now or timezone.now()
    with transaction.atomic():
        group_id = Ticket.objects.filter(pk=ticket_id).values_list("handler_group_id", flat=True)
        group = HandlerGroup.objects.select_for_update().filter(pk=group_id.first()).first()
        try:
            ticket = apply_transition(
                ticket_id=ticket_id,
                transition=lifecycle.RECLAIM,
                actor_id=None,
                now=now,
                values={"handler_id": None, "assigned_time": None, "queued_time": now},
                condition=Q(
                    handler_id=handler_id, assigned_time=assigned_time, accepted_time__isnull=True
                ),
                detail={"handler_id": handler_id, "reason": reason},
            )
        except IllegalTransition:
            return False  # accepted, transferred or reclaimed already: nothing to do
        if group is not None:
            AssignmentEvent.objects.create(
                group=group,
                ticket_id=ticket_id,
                user_id=handler_id,
                kind=AssignmentEvent.Kind.MISSED,
                strategy=group.assign_strategy,
                reclaimed=True,
                created=now,
            )
        notify.reclaimed(ticket, handler_id, assigned_time)
        if group is not None:
            transaction.on_commit(
                lambda: idle_pool.clear_offer(group.pk, handler_id, back_to_pool_at=now.timestamp())
            )
            route(ticket=ticket, group=group, actor_id=None, now=now, exclude=_missed_by(ticket_id))
    return True


def offer_sweep(*, now: datetime | None = None) -> int:
    """Backstop for lost offer-timeout tasks: reclaim every offer past its group's timeout."""
    now = now or timezone.now()
    reclaimed = 0
    groups = HandlerGroup.objects.filter(offer_timeout_seconds__isnull=False).values_list(
        "pk", "offer_timeout_seconds"
    )
    for group_id, timeout in groups:
        overdue = Ticket.objects.filter(
            handler_group_id=group_id,
            process_status=ProcessStatus.APPROVED,
            ticket_status=TicketStatus.PENDING_PROCESS,
            accepted_time__isnull=True,
            handler__isnull=False,
            assigned_time__lte=now - timedelta(seconds=timeout),
        ).values_list("pk", "handler_id", "assigned_time")
        for ticket_id, handler_id, assigned_time in overdue[:1000]:
            reclaimed += reclaim_offer(
                ticket_id=ticket_id, handler_id=handler_id, assigned_time=assigned_time, now=now
            )
    return reclaimed


def overflow_sweep(*, now: datetime | None = None) -> int:
    """Tickets that found nobody eligible for their group's overflow_after_seconds go to the
    overflow group (once); without one, or when it cannot take them either, the group
    leader is told (once per ticket and group)."""
    from . import notify
    from .services import apply_transition, route

    now = now or timezone.now()
    moved = 0
    groups = HandlerGroup.objects.filter(
        status=GroupStatus.ENABLED, overflow_after_seconds__isnull=False
    )
    for group in groups:
        if not get_strategy(group.assign_strategy).auto_assigns:
            continue
        cutoff = now - timedelta(seconds=group.overflow_after_seconds)
        stuck = list(
            waiting_tickets(group.pk)
            .filter(queued_time__lte=cutoff)
            .values_list("pk", flat=True)[:200]
        )
        for ticket_id in stuck:
            with transaction.atomic():
                ids = sorted(g for g in (group.pk, group.overflow_group_id) if g)
                locked = {
                    g.pk: g for g in HandlerGroup.objects.select_for_update().filter(pk__in=ids)
                }
                ticket = (
                    Ticket.objects.select_for_update(skip_locked=True)
                    .filter(
                        pk=ticket_id,
                        handler_group_id=group.pk,
                        ticket_status=TicketStatus.PENDING_ASSIGN,
                        queued_time__lte=cutoff,
                    )
                    .first()
                )
                if ticket is None:
                    continue
                target = locked.get(group.overflow_group_id)
                already = ticket.records.filter(action="overflow").exists()
                if target is None or already or target.status != GroupStatus.ENABLED:
                    notify.overflow_to_leader(ticket, group, now)
                    continue
                ticket = apply_transition(
                    ticket_id=ticket.pk,
                    transition=lifecycle.OVERFLOW,
                    actor_id=None,
                    now=now,
                    values={"handler_group_id": target.pk, "queued_time": now},
                    detail={"from_group_id": group.pk, "to_group_id": target.pk},
                )
                AssignmentEvent.objects.create(
                    group=group,
                    ticket_id=ticket.pk,
                    kind=AssignmentEvent.Kind.OVERFLOWED,
                    strategy=group.assign_strategy,
                    overflowed=True,
                    created=now,
                )
                route(ticket=ticket, group=target, actor_id=None, now=now, overflowed=True)
                moved += 1
    return moved


def routing_sweep(*, now: datetime | None = None) -> dict[str, int]:
    """Periodic backstop: lost offer timeouts, overflow, and draining every group that has
    waiting tickets (in case a drain request was lost)."""
    now = now or timezone.now()
    result = {"reclaimed": offer_sweep(now=now), "overflowed": overflow_sweep(now=now)}
    waiting = (
        Ticket.objects.filter(
            process_status=ProcessStatus.APPROVED,
            ticket_status=TicketStatus.PENDING_ASSIGN,
            handler_group__isnull=False,
            handler_group__status=GroupStatus.ENABLED,
        )
        .values_list("handler_group_id", flat=True)
        .distinct()
    )
    result["drained"] = sum(drain_group(group_id=g, now=now) for g in list(waiting))
    return result


def offer_push_failed(notification) -> None:
    """The offer could not be pushed to the agent: reclaim at once rather than wait."""
    ticket = (
        Ticket.objects.filter(
            pk=notification.ticket_id,
            handler_id=notification.recipient_id,
            ticket_status=TicketStatus.PENDING_PROCESS,
            accepted_time__isnull=True,
        )
        .values("handler_id", "assigned_time")
        .first()
    )
    if ticket and ticket["assigned_time"]:
        reclaim_offer(
            ticket_id=notification.ticket_id,
            handler_id=ticket["handler_id"],
            assigned_time=ticket["assigned_time"],
            reason="offer push failed",
        )
