"""Reads: the ticket pool (the same selectors serve the API and the console)."""

from django.db.models import QuerySet

from .access import Audience, is_approver, pool_scope, visible_tickets
from .models import ProcessStatus, ReplyType, Ticket, TicketRecord, TicketReply, TicketStatus

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


# The applicant's public story of their ticket: these steps, with only these details.
PUBLIC_RECORD_DETAIL = {
    "submit": ("field",),
    "approve": ("field",),
    "reject": ("field", "reason"),
    "cancel": ("field",),
    "reply": ("reply_id", "reply_type"),
    "complete": ("field",),
    "close": ("field",),
}
PUBLIC_REPLY_LABEL = ReplyType.PUBLIC.label


def records_for(audience: Audience, ticket: Ticket) -> list[TicketRecord]:
    """The ticket's audit trail as this viewer may read it: all of it for staff-side viewers;
    for anyone else the public story — submitted, approved or rejected, cancelled, public
    replies, completed, closed — with no internal note, routing step, SLA event or handler
    id (the actor is kept only when it is the applicant or the author of a public reply)."""
    records = ticket.records.select_related("actor").order_by("id")
    if audience.sees_internals(ticket):
        return list(records)
    public = []
    for record in records.filter(action__in=PUBLIC_RECORD_DETAIL):
        detail = record.detail or {}
        if record.action == "reply" and detail.get("reply_type") != PUBLIC_REPLY_LABEL:
            continue
        kept = PUBLIC_RECORD_DETAIL[record.action]
        record.detail = {key: detail[key] for key in kept if key in detail}
        if record.action != "reply" and record.actor_id != ticket.creator_id:
            record.actor_id, record.actor = None, None
        public.append(record)
    return public


def replies_for(audience: Audience, ticket: Ticket) -> QuerySet[TicketReply]:
    """Every reply for staff-side viewers; public ones for everyone else."""
    replies = ticket.replies.select_related("author").order_by("id")
    if audience.sees_internals(ticket):
        return replies
    return replies.filter(reply_type=ReplyType.PUBLIC)
