"""The periodic routing backstop (beat, every 30 s; `manage.py routing_sweep`): assignment
notices lost between commit and sending, offer timeouts, overflow, draining, and folding
handlers' load rows (routing.loads)."""

from datetime import datetime

from django.utils import timezone

from handler_groups.models import GroupStatus
from ticketing.models import ProcessStatus, Ticket, TicketStatus

from .drain import drain_group
from .loads import fold_sweep
from .notices import notice_sweep
from .offers import offer_sweep
from .overflow import overflow_sweep


def routing_sweep(*, now: datetime | None = None) -> dict[str, int]:
    """Periodic backstop: lost offer timeouts, overflow, and draining every group that has
    waiting tickets (in case a drain request was lost)."""
    now = now or timezone.now()
    result = {
        "notified": notice_sweep(now=now),
        "reclaimed": offer_sweep(now=now),
        "overflowed": overflow_sweep(now=now),
    }
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
    result["loads_folded"] = fold_sweep(now=now)
    return result
