"""Who may see and do what with a ticket. Lists are filtered by `visible_tickets`; a ticket
outside it is a 404 for that user. A visible ticket whose action the user may not take is a
403."""

from django.db.models import Q, QuerySet

from handler_groups.selectors import group_ids_for_user, is_handler, is_member, leads

from .models import ProcessStatus, Ticket


def is_approver(user) -> bool:
    return user.is_authenticated and (
        user.is_staff or user.has_perm("ticketing.approve_ticket")
    )


def visible_tickets(user) -> QuerySet[Ticket]:
    qs = Ticket.objects.all()
    if not user.is_authenticated:
        return qs.none()
    if user.is_staff or is_approver(user):
        return qs
    condition = Q(creator=user) | Q(handler=user)
    group_ids = group_ids_for_user(user)
    if group_ids:
        condition |= Q(process_status=ProcessStatus.APPROVED, handler_group_id__in=group_ids)
    if is_handler(user):
        condition |= Q(process_status=ProcessStatus.APPROVED, handler_group__isnull=True)
    return qs.filter(condition)


def can_handle(user, ticket: Ticket) -> bool:
    """May take the ticket from the pool: a member of its group, or anyone in a handler group
    when it has none, or the handler it is assigned to."""
    if ticket.handler_id == user.pk:
        return True
    if ticket.handler_group_id is None:
        return is_handler(user)
    return is_member(user, ticket.handler_group)


def can_work_on(user, ticket: Ticket) -> bool:
    """May write internal replies and see internal content: staff, the handler, members and
    the leader of the ticket's group (any handler for a ticket with no group)."""
    return (
        user.is_staff
        or ticket.handler_id == user.pk
        or leads(user, ticket.handler_group)
        or can_handle(user, ticket)
    )


def can_transfer(user, ticket: Ticket) -> bool:
    return user.is_staff or leads(user, ticket.handler_group)


def can_close(user, ticket: Ticket) -> bool:
    return user.is_staff or ticket.creator_id == user.pk
