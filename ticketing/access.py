"""Who may see and do what with a ticket. Lists are filtered by `visible_tickets`; a ticket
outside it is a 404 for that user. A visible ticket whose action the user may not take is a
403."""

from django.db.models import Q, QuerySet

from handler_groups.selectors import group_ids_for_user, is_handler, is_member, leads

from .models import ProcessStatus, Ticket


def is_approver(user) -> bool:
    return user.is_authenticated and (user.is_staff or user.has_perm("ticketing.approve_ticket"))


def pool_scope(user) -> Q:
    """Approved tickets the user works on: their groups' (as member or leader) and those with
    no group. A user in no group gets only no-group tickets, never every group's (the source
    design's fallback to "no filter" leaked tickets). Staff get every approved ticket."""
    approved = Q(process_status=ProcessStatus.APPROVED)
    if user.is_staff:
        return approved
    group_ids = group_ids_for_user(user)
    return approved & (Q(handler_group__isnull=True) | Q(handler_group_id__in=group_ids))


def visible_tickets(user) -> QuerySet[Ticket]:
    """Their own tickets, the ones they handle, and their pool; approvers and staff see all."""
    qs = Ticket.objects.all()
    if not user.is_authenticated:
        return qs.none()
    if user.is_staff or is_approver(user):
        return qs
    return qs.filter(Q(creator=user) | Q(handler=user) | pool_scope(user))


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
