"""Reads: the ticket pool (the same selectors serve the API and the console)."""

from django.db.models import Q, QuerySet

from handler_groups.selectors import group_ids_for_user

from .access import visible_tickets
from .models import ProcessStatus, Ticket, TicketStatus

MY_HANDLING_DEFAULT = (
    TicketStatus.PENDING_PROCESS,
    TicketStatus.PROCESSING,
    TicketStatus.COMPLETED,
)


def _scope(user) -> Q:
    """Approved tickets the user works on: their groups' and those with no group. A user in
    no group sees only no-group tickets, never every group's (the source design's fallback
    to "no filter" leaked tickets). Staff see every approved ticket."""
    approved = Q(process_status=ProcessStatus.APPROVED)
    if user.is_staff:
        return approved
    group_ids = group_ids_for_user(user)
    return approved & (Q(handler_group__isnull=True) | Q(handler_group_id__in=group_ids))


def pool_pending_for(user) -> QuerySet[Ticket]:
    return Ticket.objects.filter(_scope(user), ticket_status=TicketStatus.PENDING_ASSIGN)


def pool_my_handling_for(user, *, ticket_status: int | None = None) -> QuerySet[Ticket]:
    qs = Ticket.objects.filter(handler=user)
    if ticket_status is None:
        return qs.filter(ticket_status__in=MY_HANDLING_DEFAULT)
    return qs.filter(ticket_status=ticket_status)


def pool_all_for(user) -> QuerySet[Ticket]:
    return Ticket.objects.filter(_scope(user))


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
