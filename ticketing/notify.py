"""Lifecycle events → notifications. Every message goes through notifications.send with a
dedupe key naming the event, inside the caller's transaction. A template problem (logged
and counted by send) must not undo the ticket change that triggered it."""

import logging

from django.utils.translation import gettext_lazy as _

from notifications.rendering import TemplateError
from notifications.sending import send

from .models import ReplyType, Ticket, TicketReply

logger = logging.getLogger(__name__)


def _params(ticket: Ticket, **extra) -> dict[str, object]:
    return {
        "billCode": ticket.bill_code,
        "title": ticket.title,
        "ticketId": ticket.pk,
        # Words, not data: lazily translated, so each recipient reads their language.
        "group": ticket.handler_group.name if ticket.handler_group_id else _("no group"),
        **extra,
    }


def _send(*, recipients, template_code: str, ticket: Ticket, dedupe_key: str, **params) -> None:
    try:
        # send refuses a bad template before writing anything: no savepoint needed.
        send(
            recipients=recipients,
            template_code=template_code,
            params=_params(ticket, **params),
            dedupe_key=dedupe_key,
            ticket_id=ticket.pk,
        )
    except TemplateError:
        logger.warning(
            "notification not sent", extra={"ticket_id": ticket.pk, "template": template_code}
        )


def assigned(ticket: Ticket) -> None:
    _send(
        recipients=[ticket.handler_id],
        template_code="ticket-assigned",
        ticket=ticket,
        dedupe_key=f"ticket:{ticket.pk}:assigned:{ticket.handler_id}:{ticket.assigned_time.isoformat()}",
    )


def replied(ticket: Ticket, reply: TicketReply) -> None:
    """A public reply from the handling side tells the applicant; the applicant's reply tells
    the handler. Internal notes tell the handler when someone else wrote them."""
    if reply.author_id == ticket.creator_id:
        recipients = [ticket.handler_id]
    elif reply.reply_type == ReplyType.PUBLIC:
        recipients = [ticket.creator_id]
    else:
        recipients = [ticket.handler_id]
    recipients = [r for r in recipients if r and r != reply.author_id]
    if recipients:
        _send(
            recipients=recipients,
            template_code="ticket-replied",
            ticket=ticket,
            dedupe_key=f"ticket:{ticket.pk}:reply:{reply.pk}",
            author=reply.author.get_username() if reply.author else _("system"),
        )


def completed(ticket: Ticket) -> None:
    _send(
        recipients=[ticket.creator_id],
        template_code="ticket-completed",
        ticket=ticket,
        dedupe_key=f"ticket:{ticket.pk}:completed",
        handler=ticket.handler.get_username() if ticket.handler_id else "",
    )


def rejected(ticket: Ticket, reason: str) -> None:
    _send(
        recipients=[ticket.creator_id],
        template_code="ticket-rejected",
        ticket=ticket,
        dedupe_key=f"ticket:{ticket.pk}:rejected",
        reason=reason,
    )


def offered(ticket: Ticket, timeout_seconds: int) -> None:
    _send(
        recipients=[ticket.handler_id],
        template_code="ticket-offered",
        ticket=ticket,
        dedupe_key=f"ticket:{ticket.pk}:offered:{ticket.handler_id}:{ticket.assigned_time.isoformat()}",
        minutes=max(1, round(timeout_seconds / 60)),
    )


def reclaimed(ticket: Ticket, handler_id: int, assigned_time) -> None:
    _send(
        recipients=[handler_id],
        template_code="ticket-reclaimed",
        ticket=ticket,
        dedupe_key=f"ticket:{ticket.pk}:reclaimed:{handler_id}:{assigned_time.isoformat()}",
    )


def overflow_to_leader(ticket: Ticket, group, now) -> None:
    """Last resort: nobody in the group (or its overflow group) could take the ticket."""
    waited = (now - ticket.queued_time).total_seconds() if ticket.queued_time else 0
    _send(
        recipients=[group.leader_id],
        template_code="ticket-overflow",
        ticket=ticket,
        dedupe_key=f"ticket:{ticket.pk}:overflow-leader:{group.pk}",
        minutes=max(1, round(waited / 60)),
        group=group.name,
    )
