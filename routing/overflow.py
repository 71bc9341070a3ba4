"""Overflow: a ticket that found nobody eligible for its group's overflow_after_seconds moves
once to the overflow group; otherwise the group's leader is told (once per ticket and group)."""

from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from handler_groups.models import GroupStatus, HandlerGroup
from ticketing import lifecycle, notify
from ticketing.models import Ticket, TicketStatus
from ticketing.transitions import apply_transition

from .drain import missed_by, waiting_tickets
from .models import AssignmentEvent, RoutingDecision
from .route import record_decision, route
from .strategies.registry import get_strategy
from .strategies.service import members_seen


def overflow_sweep(*, now: datetime | None = None) -> int:
    """Tickets that found nobody eligible for their group's overflow_after_seconds go to the
    overflow group (once); without one, or when it cannot take them either, the group
    leader is told (once per ticket and group)."""
    now = now or timezone.now()
    moved = 0
    groups = HandlerGroup.objects.filter(
        status=GroupStatus.ENABLED, overflow_after_seconds__isnull=False
    )
    for group in groups:
        if not get_strategy(group.assign_strategy).auto_assigns:
            continue
        cutoff = now - timedelta(seconds=group.overflow_after_seconds)  # type: ignore[arg-type]  # filtered
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
                target = locked.get(group.overflow_group_id)  # type: ignore[arg-type]  # None: no target
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
                # Two decisions: out of this group (what its members looked like), then the
                # overflow group's own pick.
                record_decision(
                    ticket_id=ticket.pk,
                    group=group,
                    trigger=RoutingDecision.Trigger.OVERFLOW,
                    outcome=RoutingDecision.Outcome.OVERFLOWED,
                    chosen_id=None,
                    members=members_seen(group=group, now=now, exclude=missed_by(ticket.pk)),
                    now=now,
                )
                route(
                    ticket=ticket,
                    group=target,
                    actor_id=None,
                    now=now,
                    overflowed=True,
                    trigger=RoutingDecision.Trigger.OVERFLOW,
                )
                moved += 1
    return moved
