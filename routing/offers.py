"""Offers: an auto-assigned ticket its handler has not accepted yet. Answered → the agent is
routable again and the group drains; not answered in the group's offer_timeout_seconds (a
delayed task re-validates, the sweep backs it up) or not deliverable → reclaimed, counted as
a miss, and routed again excluding whoever missed it; declined by the agent → counted as a
decline (not a miss) and routed again excluding whoever missed or declined it."""

from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from prometheus_client import Counter

from handler_groups.models import HandlerGroup
from ticketing import lifecycle, notify
from ticketing.lifecycle import IllegalTransition
from ticketing.models import ProcessStatus, Ticket, TicketStatus
from ticketing.transitions import apply_transition

from . import idle_pool
from .drain import drain_now, missed_by
from .models import AssignmentEvent, RoutingDecision
from .route import route

# reason: timeout (not accepted in time) or undeliverable (the offer could not be pushed).
RECLAIMS = Counter("routing_reclaims_total", "Offers taken back from their agent", ["reason"])


def offer_answered(*, group_id: int, user_id: int, now: datetime) -> None:
    """The agent accepted: no open offer any more; back in the idle pool (after commit)."""
    group = HandlerGroup.objects.filter(pk=group_id).only("offer_timeout_seconds").first()
    if group is None or not group.offer_timeout_seconds:
        return

    def back_to_pool() -> None:
        idle_pool.clear_offer(group_id, user_id, back_to_pool_at=now.timestamp())
        drain_now([group_id])

    transaction.on_commit(back_to_pool)


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
    now = now or timezone.now()
    with transaction.atomic():
        group_id = Ticket.objects.filter(pk=ticket_id).values_list("handler_group_id", flat=True)
        # No ticket or no group (None): pk=None finds no group, and the transition then fails.
        group = HandlerGroup.objects.select_for_update().filter(pk=group_id.first()).first()  # type: ignore[misc]
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
        transaction.on_commit(lambda: RECLAIMS.labels(reason).inc())
        if group is not None:
            transaction.on_commit(
                lambda: idle_pool.clear_offer(group.pk, handler_id, back_to_pool_at=now.timestamp())
            )
            route(
                ticket=ticket,
                group=group,
                actor_id=None,
                now=now,
                exclude=missed_by(ticket_id),
                trigger=RoutingDecision.Trigger.RECLAIM,
            )
    return True


def decline_offer(*, ticket_id: int, handler_id: int, reason: str, now: datetime) -> Ticket:
    """The agent turns down the ticket offered or auto-assigned to them, before accepting it:
    only if it is still theirs and unaccepted (compare-and-set; otherwise IllegalTransition,
    nothing changed). The transition's audit record ("decline", actor = the agent, with the
    reason and the group) is the decline: the metrics count it per agent apart from misses,
    and `missed_by` keeps the agent away from this ticket on every later routing. The ticket
    is routed again at once; the agent is free again in the group (after commit)."""
    with transaction.atomic():
        group_id = (
            Ticket.objects.filter(pk=ticket_id).values_list("handler_group_id", flat=True).first()
        )
        # No ticket or no group (None): pk=None finds no group, and the transition then fails.
        group = HandlerGroup.objects.select_for_update().filter(pk=group_id).first()  # type: ignore[misc]
        ticket = apply_transition(
            ticket_id=ticket_id,
            transition=lifecycle.DECLINE,
            actor_id=handler_id,
            now=now,
            values={"handler_id": None, "assigned_time": None, "queued_time": now},
            condition=Q(
                handler_id=handler_id, handler_group_id=group_id, accepted_time__isnull=True
            ),
            detail={"handler_id": handler_id, "group_id": group_id, "reason": reason},
        )
        if group is not None:
            group_pk = group.pk

            def back_to_pool() -> None:
                idle_pool.clear_offer(group_pk, handler_id, back_to_pool_at=now.timestamp())
                drain_now([group_pk])

            transaction.on_commit(back_to_pool)
        return route(
            ticket=ticket,
            group=group,
            actor_id=None,
            now=now,
            exclude=missed_by(ticket_id),
            trigger=RoutingDecision.Trigger.DECLINE,
        )


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
            assigned_time__lte=now - timedelta(seconds=timeout),  # type: ignore[arg-type]  # not null
        ).values_list("pk", "handler_id", "assigned_time")
        for ticket_id, handler_id, assigned_time in overdue[:1000]:
            reclaimed += reclaim_offer(
                ticket_id=ticket_id,
                handler_id=handler_id,
                assigned_time=assigned_time,  # type: ignore[arg-type]  # an offer's: not null
                now=now,
            )
    return reclaimed


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
