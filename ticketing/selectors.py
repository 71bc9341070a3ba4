"""Reads: the ticket pool (the same selectors serve the API and the console)."""

from django.db.models import QuerySet

from .access import is_approver, pool_scope, visible_tickets
from .models import ProcessStatus, Ticket, TicketStatus

MY_HANDLING_DEFAULT = (
    TicketStatus.PENDING_PROCESS,
    TicketStatus.PROCESSING,
    TicketStatus.COMPLETED,
)


def pool_pending_for(user) -> QuerySet[Ticket]:
    return Ticket.objects.filter(pool_scope(user), ticket_status=TicketStatus.PENDING_ASSIGN)


def pool_my_handling_for(user, *, ticket_status: int | None = None) -> QuerySet[Ticket]:
    qs = Ticket.objects.filter(handler=user)
    if ticket_status is None:
        return qs.filter(ticket_status__in=MY_HANDLING_DEFAULT)
    return qs.filter(ticket_status=ticket_status)


def pool_all_for(user) -> QuerySet[Ticket]:
    return Ticket.objects.filter(pool_scope(user))


def pool_for(
    user,
    *,
    view: str,
    priority: int | None = None,
    category: str | None = None,
    ticket_status: int | None = None,
    handler_group: int | None = None,
) -> QuerySet[Ticket]:
    if view == "pending":
        qs = pool_pending_for(user)
    elif view == "my_handling":
        qs = pool_my_handling_for(user, ticket_status=ticket_status)
        ticket_status = None
    else:
        qs = pool_all_for(user)
    if priority is not None:
        qs = qs.filter(priority=priority)
    if category:
        qs = qs.filter(category=category)
    if ticket_status is not None:
        qs = qs.filter(ticket_status=ticket_status)
    if handler_group is not None:
        qs = qs.filter(handler_group_id=handler_group)
    return qs.order_by("-id")


def my_submitted_tickets(user) -> QuerySet[Ticket]:
    return Ticket.objects.filter(creator=user).order_by("-id")


def ticket_for(user, ticket_id: int) -> Ticket:
    """The ticket if the user may see it; Ticket.DoesNotExist (a 404) otherwise."""
    return visible_tickets(user).select_related("handler_group").get(pk=ticket_id)


def awaiting_approval_for(user) -> QuerySet[Ticket]:
    """Submitted tickets waiting for an approver, oldest first; empty for non-approvers."""
    if not is_approver(user):
        return Ticket.objects.none()
    return Ticket.objects.filter(process_status=ProcessStatus.APPROVING).order_by(
        "submitted_time", "id"
    )
