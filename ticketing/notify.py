"""Lifecycle events → notifications. Every message goes through notifications.send with a
dedupe key naming the event, inside the caller's transaction. A template problem (logged
and counted by send) must not undo the ticket change that triggered it."""

import logging
from datetime import UTC, datetime

from django.utils.translation import gettext_lazy as _

from collaboration.models import Watcher
from notifications.rendering import TemplateError
from notifications.sending import Message, send

from .models import ReplyType, Ticket, TicketReply

logger = logging.getLogger(__name__)


def _params(ticket: Ticket, handler_group=None, **extra) -> dict[str, object]:
    """The parameters every ticket message has, the group's name from `handler_group` when
    the caller holds it (else the ticket's), and `extra`."""
    group = handler_group
    if group is None and ticket.handler_group_id:
        group = ticket.handler_group
    return {
        "billCode": ticket.bill_code,
        "title": ticket.title,
        "ticketId": ticket.pk,
        # Words, not data: lazily translated, so each recipient reads their language.
        "group": group.name if group is not None else _("no group"),
        **extra,
    }


def _send(*, recipients, template_code: str, ticket: Ticket, dedupe_key: str, **params) -> None:
    _send_message(
        template_code,
        Message(
            recipients=recipients,
            params=_params(ticket, **params),
            dedupe_key=dedupe_key,
            ticket_id=ticket.pk,
        ),
    )


def _send_message(template_code: str, message: Message, readers=None) -> None:
    try:
        # send refuses a bad template before writing anything: no savepoint needed.
        send(
            recipients=message.recipients,
            template_code=template_code,
            params=message.params,
            dedupe_key=message.dedupe_key,
            ticket_id=message.ticket_id,
            readers=readers,
        )
    except TemplateError:
        logger.warning(
            "notification not sent",
            extra={"ticket_id": message.ticket_id, "template": template_code},
        )


def assignment_message(
    ticket: Ticket, *, group, handler_id: int, assigned_time: datetime
) -> tuple[str, Message]:
    """What tells an agent of an assignment to them by `group` at `assigned_time`: an offer
    with its deadline in groups that make offers, else "assigned". The dedupe key names the
    assignment (the agent and the instant, in UTC as the database returns it), so it is the
    same whoever composes it."""
    at = assigned_time.astimezone(UTC).isoformat()
    if group is not None and group.offer_timeout_seconds:
        minutes = max(1, round(group.offer_timeout_seconds / 60))
        return "ticket-offered", Message(
            recipients=[handler_id],
            params=_params(ticket, group, minutes=minutes),
            dedupe_key=f"ticket:{ticket.pk}:offered:{handler_id}:{at}",
            ticket_id=ticket.pk,
        )
    return "ticket-assigned", Message(
        recipients=[handler_id],
        params=_params(ticket, group),
        dedupe_key=f"ticket:{ticket.pk}:assigned:{handler_id}:{at}",
        ticket_id=ticket.pk,
    )


def assigned(ticket: Ticket) -> None:
    """The handler's inbox confirms what they took (self-assignment) or were given."""
    template_code, message = assignment_message(
        ticket,
        group=None,
        # An assigned ticket has both.
        handler_id=ticket.handler_id,  # type: ignore[arg-type]
        assigned_time=ticket.assigned_time,  # type: ignore[arg-type]
    )
    _send_message(template_code, message)


def replied(ticket: Ticket, reply: TicketReply, *, mentioned: list[int] | None = None) -> None:
    """A public reply from the handling side tells the applicant; the applicant's reply tells
    the handler. Internal notes tell the handler when someone else wrote them (unless the note
    mentions them: `mentioned` hears of it through `mentioned`). Every public reply also tells
    the ticket's watchers."""
    if reply.author_id == ticket.creator_id:
        recipients = [ticket.handler_id]
    elif reply.reply_type == ReplyType.PUBLIC:
        recipients = [ticket.creator_id]
    else:
        recipients = [ticket.handler_id]
    if reply.reply_type == ReplyType.PUBLIC:
        recipients += watcher_ids(ticket.pk)
    skipped = {reply.author_id, *(mentioned or ())}
    recipients = list(dict.fromkeys(r for r in recipients if r and r not in skipped))
    if recipients:
        _send(
            recipients=recipients,
            template_code="ticket-replied",
            ticket=ticket,
            dedupe_key=f"ticket:{ticket.pk}:reply:{reply.pk}",
            author=reply.author.get_username() if reply.author else _("system"),
            # The e-mail carries the reply itself (notifications/channels/email.py), and its
            # files and audience (mail/outbound.py: an internal note never goes by e-mail).
            body=reply.content,
            replyId=reply.pk,
        )


def watcher_ids(ticket_id: int) -> list[int]:
    """Who watches the ticket (collaboration.models.Watcher), in the order they were added."""
    return list(
        Watcher.objects.filter(ticket_id=ticket_id).order_by("id").values_list("user_id", flat=True)
    )


# What a watcher reads of each status change they are told of (lazily translated: each
# recipient reads their language).
STATUS_WORDS = {
    "approve": _("approved"),
    "reject": _("rejected"),
    "cancel": _("cancelled"),
    "accept": _("being worked on"),
    "complete": _("completed"),
    "close": _("closed"),
    "merge": _("merged into another ticket"),
    "reopen": _("reopened"),
}


def status_changed(
    ticket: Ticket,
    action: str,
    actor_id: int | None,
    record_key: str,
    *,
    watchers: list[int] | None = None,
) -> None:
    """A status change the applicant sees (STATUS_WORDS) tells the ticket's watchers, never
    the one who made it nor the applicant (told by their own messages). `record_key` names
    the change (its instant, or the record), so a replay tells nobody twice. `watchers`: the
    watcher ids when the caller read them already (no query)."""
    if watchers is None:
        watchers = watcher_ids(ticket.pk)
    recipients = [w for w in watchers if w not in (actor_id, ticket.creator_id)]
    if recipients:
        _send(
            recipients=recipients,
            template_code="ticket-status-changed",
            ticket=ticket,
            dedupe_key=f"ticket:{ticket.pk}:status:{action}:{record_key}",
            status=STATUS_WORDS[action],
        )


def watching(ticket: Ticket, *, user_id: int, actor, watcher_id: int) -> None:
    """Someone else added `user_id` as a watcher (the watcher row `watcher_id`)."""
    if actor is not None and actor.pk == user_id:
        return
    _send(
        recipients=[user_id],
        template_code="ticket-watching",
        ticket=ticket,
        dedupe_key=f"ticket:{ticket.pk}:watching:{watcher_id}",
        actor=actor.get_username() if actor is not None else _("system"),
    )


def mentioned(ticket: Ticket, reply: TicketReply, user_ids: list[int]) -> None:
    """An internal note mentioned these team members (workflow/mentions.py decided who)."""
    recipients = [u for u in user_ids if u != reply.author_id]
    if recipients:
        _send(
            recipients=recipients,
            template_code="ticket-mentioned",
            ticket=ticket,
            dedupe_key=f"ticket:{ticket.pk}:mention:{reply.pk}",
            author=reply.author.get_username() if reply.author else _("system"),
            body=reply.content,
        )


def completed(ticket: Ticket) -> None:
    # The completion's instant names it: a ticket completed again after a reopen tells anew.
    at = ticket.completed_time.astimezone(UTC).isoformat() if ticket.completed_time else ""
    _send(
        recipients=[ticket.creator_id],
        template_code="ticket-completed",
        ticket=ticket,
        dedupe_key=f"ticket:{ticket.pk}:completed:{at}",
        handler=ticket.handler.get_username() if ticket.handler else "",
    )


def reopened(ticket: Ticket, actor, record_key: str, *, reason: str = "") -> None:
    """A completed ticket taken up again (workflow.services.ticket_reopen): its applicant and
    its handler read "reopened" (ticket-reopened, with the reason), its watchers the status
    change (status_changed); whoever reopened it is told nothing, nobody twice. `actor`: the
    user who reopened it, or None (the system)."""
    actor_id = actor.pk if actor is not None else None
    people = [r for r in (ticket.creator_id, ticket.handler_id) if r and r != actor_id]
    people = list(dict.fromkeys(people))
    if people:
        _send(
            recipients=people,
            template_code="ticket-reopened",
            ticket=ticket,
            dedupe_key=f"ticket:{ticket.pk}:reopened:{record_key}",
            actor=actor.get_username() if actor is not None else _("system"),
            handler=ticket.handler.get_username() if ticket.handler else _("nobody"),
            # The e-mail carries the reason itself (notifications/channels/email.py).
            body=reason,
        )
    watchers = [w for w in watcher_ids(ticket.pk) if w not in people]
    status_changed(ticket, "reopen", actor_id, record_key, watchers=watchers)


def rejected(ticket: Ticket, reason: str) -> None:
    _send(
        recipients=[ticket.creator_id],
        template_code="ticket-rejected",
        ticket=ticket,
        dedupe_key=f"ticket:{ticket.pk}:rejected",
        reason=reason,
    )


def told_of_assignment(ticket: Ticket, group, *, readers=None) -> None:
    """The assignment notice (assignment_message) of the ticket's current assignment.
    `readers` (accounts.preferences.Reader by user id), when the caller has read them."""
    template_code, message = assignment_message(
        ticket,
        group=group,
        handler_id=ticket.handler_id,  # type: ignore[arg-type]  # assigned: set
        assigned_time=ticket.assigned_time,  # type: ignore[arg-type]  # assigned: set
    )
    _send_message(template_code, message, readers)


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
