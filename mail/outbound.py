"""A ticket's messages as its e-mail thread (registered with notifications.channels.email).

What the applicant and the watchers read of a ticket by e-mail (its public replies and the
lifecycle notices: THREADED) goes out as one conversation: From and Reply-To the ticket's
mailbox, the subject `[#BILL-CODE] title` whatever the notice (so mail clients keep it one
thread, and intake finds the ticket by the token when the headers are lost), In-Reply-To and
References naming the ticket's earlier messages, the reply's files attached. The notice's own
words (in the reader's language) open the body; a reply's text follows as typed.

Each message sent is recorded (MailMessage, by its Message-ID: the delivery's, the same on
every attempt) before it is sent, so an answer to it threads back even if the worker dies
before marking the delivery sent. A delivery that fails for good is recorded on the ticket
(`mail_failed`, "could not reach …") by the failure hook `record_failures`.

An internal note's text never leaves by e-mail: a reply notice about anything but a public
reply, and the mention notice, are withheld here whatever the templates' channels say."""

from __future__ import annotations

import logging
from datetime import datetime

from django.conf import settings
from django.core.files.storage import default_storage
from django.db import transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from accounts.preferences import reader_settings
from attachments.models import Attachment
from notifications.channels.email import Withheld, email_bodies
from notifications.channels.email import message_id as delivery_message_id
from notifications.models import DeliveryStatus, OutboxDelivery
from ticketing.models import ReplyType, Ticket, TicketReply
from ticketing.transitions import record

from .models import Direction, Mailbox, MailMessage, MessageOutcome

logger = logging.getLogger(__name__)

# The notices that belong to the ticket's conversation with its applicant and watchers.
# The team's own notices (assigned, offered, SLA, overflow, low rating) are not threaded:
# answering one by e-mail must not become a public reply. The survey is not either: a
# "thanks!" to it must not reopen the ticket.
THREADED = frozenset(
    {
        "ticket-replied",
        "ticket-completed",
        "ticket-rejected",
        "ticket-reopened",
        "ticket-status-changed",
        "ticket-watching",
    }
)
REPLY_TEMPLATE = "ticket-replied"
# ticketing.notify.replied: the reply a notice is about.
REPLY_PARAM = "replyId"
# Notices that carry an internal note's text (ticketing.notify.mentioned).
NEVER_BY_EMAIL = frozenset({"ticket-mentioned"})

# A message stays well under common relays' limits (25 MB, base64 adds a third): files past
# this total are named with a link to the ticket's page instead of attached.
MAX_ATTACHED_BYTES = 20 * 1024 * 1024
# References keeps the thread's first message and the latest ones (RFC 5322 §3.6.4: long
# lists are trimmed, the first kept).
MAX_REFERENCES = 20
# A ticket's messages that make up its thread: the ones received and the ones sent.
THREAD_OUTCOMES = (MessageOutcome.TICKET, MessageOutcome.REPLY, MessageOutcome.SENT)


def compose(delivery, message) -> None:
    """The e-mail channel's composer (notifications.channels.email.set_composer): make a
    ticket's notice part of its thread, and record it. Raises Withheld for a notice that must
    not go by e-mail (an internal note's)."""
    notification = delivery.notification
    code = notification.template_code
    if code in NEVER_BY_EMAIL:
        raise Withheld(f"{code}: an internal note's text")
    reply = _public_reply(notification) if code == REPLY_TEMPLATE else None
    if code not in THREADED or not notification.ticket_id:
        return
    ticket = Ticket.objects.filter(pk=notification.ticket_id).first()
    if ticket is None:
        return
    mailbox = mailbox_for(ticket)
    if mailbox is not None:
        message.from_email = mailbox.from_header
        message.reply_to = [mailbox.from_header]
    message.subject = thread_subject(ticket)
    earlier = thread_ids(ticket, delivery)
    if earlier:
        message.extra_headers["In-Reply-To"] = f"<{earlier[-1]}>"
        message.extra_headers["References"] = " ".join(f"<{m}>" for m in earlier)
    language = reader_settings([notification.recipient_id])[notification.recipient_id].language
    left_out = _attach_files(message, reply) if reply is not None else []
    with translation.override(language):
        extra = _left_out_text(ticket, left_out) if left_out else ""
    text, html = email_bodies(notification, extra=extra, language=language)
    message.body = text
    message.alternatives = []
    message.attach_alternative(html, "text/html")
    _record_sent(delivery, message, ticket=ticket, reply=reply, mailbox=mailbox, earlier=earlier)


def thread_subject(ticket: Ticket) -> str:
    """`[#BILL-CODE] title`: every message of the ticket's thread (intake finds the ticket by
    the token when a reply has lost its headers)."""
    return f"[#{ticket.bill_code}] {ticket.title}"


def mailbox_for(ticket: Ticket) -> Mailbox | None:
    """The mailbox the ticket's messages go out from (and answers come back to): the one its
    first message arrived at, else an active mailbox of its group, else the first active
    mailbox; None when there is none (DEFAULT_FROM_EMAIL then)."""
    first = (
        MailMessage.objects.filter(
            ticket_id=ticket.pk, direction=Direction.IN, mailbox__active=True
        )
        .select_related("mailbox")
        .order_by("id")
        .first()
    )
    if first is not None:
        return first.mailbox
    active = Mailbox.objects.filter(active=True).order_by("id")
    if ticket.handler_group_id:
        mine = active.filter(handler_group_id=ticket.handler_group_id).first()
        if mine is not None:
            return mine
    return active.first()


def thread_ids(ticket: Ticket, delivery) -> list[str]:
    """The Message-IDs (without brackets) of the ticket's thread as this delivery's reader
    has it, oldest first: every message the ticket received, and those sent to this
    address (not the copies sent to others, which this reader never saw: their mail client
    could not place them); the first and the latest MAX_REFERENCES - 1. This delivery's own
    message (recorded on an earlier attempt) is not part of it."""
    own = delivery_message_id(delivery.idempotency_key).strip("<>")
    rows = (
        MailMessage.objects.filter(ticket_id=ticket.pk, outcome__in=THREAD_OUTCOMES)
        .filter(Q(direction=Direction.IN) | Q(direction=Direction.OUT, address=_to(delivery)))
        .exclude(message_id=own)
    )
    first = rows.order_by("id").values_list("message_id", flat=True).first()
    if first is None:
        return []
    latest = list(rows.order_by("-id").values_list("message_id", flat=True)[: MAX_REFERENCES - 1])
    return list(dict.fromkeys([first, *reversed(latest)]))


def _to(delivery) -> str:
    return delivery.target.lower()


def _public_reply(notification) -> TicketReply:
    """The public reply a reply notice is about; Withheld for anything else (an internal note
    or a system message, or a notice that does not say which reply: it cannot be shown to be
    public)."""
    reply_id = (notification.params or {}).get(REPLY_PARAM)
    reply = (
        TicketReply.objects.filter(pk=reply_id, ticket_id=notification.ticket_id).first()
        if isinstance(reply_id, int)
        else None
    )
    if reply is None:
        raise Withheld("a reply notice without its reply")
    if reply.reply_type != ReplyType.PUBLIC:
        raise Withheld("not a public reply")
    return reply


def _attach_files(message, reply: TicketReply) -> list[Attachment]:
    """Attach the reply's files, in the order they were uploaded, while they fit in
    MAX_ATTACHED_BYTES; returns those left out."""
    budget = MAX_ATTACHED_BYTES
    left_out = []
    files = Attachment.objects.filter(reply_id=reply.pk).select_related("blob").order_by("id")
    for attachment in files:
        blob = attachment.blob
        if blob.size > budget:
            left_out.append(attachment)
            continue
        with default_storage.open(blob.key, "rb") as stored:
            message.attach(attachment.filename, stored.read(), blob.content_type)
        budget -= blob.size
    return left_out


def _left_out_text(ticket: Ticket, left_out: list[Attachment]) -> str:
    page = settings.SITE_URL.rstrip("/") + reverse("console:ticket", args=[ticket.pk])
    return _("Too large to send by e-mail, on the ticket's page (%(url)s): %(files)s") % {
        "url": page,
        "files": ", ".join(a.filename for a in left_out),
    }


def _record_sent(delivery, message, *, ticket, reply, mailbox, earlier: list[str]) -> None:
    """The message as sent (before sending: a retry is the same message, recorded once)."""
    MailMessage.objects.get_or_create(
        message_id=message.extra_headers["Message-ID"].strip("<>"),
        defaults={
            "direction": Direction.OUT,
            "outcome": MessageOutcome.SENT,
            "mailbox": mailbox,
            "ticket": ticket,
            "reply": reply,
            "address": _to(delivery),
            "subject": message.subject[:500],
            "in_reply_to": f"<{earlier[-1]}>" if earlier else "",
            "references": message.extra_headers.get("References", ""),
            "delivery_id": delivery.pk,
            "at": timezone.now(),
        },
    )


def record_failures(notification) -> None:
    """notifications.delivery.on_delivery_failure hook (mail/apps.py): each e-mail delivery of
    this notice that has failed for good is recorded on its ticket (delivery_failed). A
    delivery still to be retried is left alone."""
    if not notification.ticket_id:
        return
    failed = OutboxDelivery.objects.filter(
        notification_id=notification.pk, channel="email", status=DeliveryStatus.FAILED
    )
    for delivery in failed:
        delivery_failed(
            message_id=delivery_message_id(delivery.idempotency_key).strip("<>"),
            ticket_id=notification.ticket_id,
            address=delivery.target,
            error=delivery.last_error,
            delivery_id=delivery.pk,
        )


def delivery_failed(
    *,
    message_id: str,
    ticket_id: int,
    address: str,
    error: str,
    delivery_id: int | None = None,
    now: datetime | None = None,
) -> bool:
    """Record that the message `message_id` (without brackets) did not reach `address`: the
    sent message's row turns failed (or one is written), and the ticket's history says so
    (`mail_failed` {"address", "error"}: "could not reach …"). Once per message: the row's
    outcome is the claim (compare-and-set), so a hook run twice, or a bounce of a message
    already known failed, records nothing more. Returns whether it recorded. Also for
    bounces of our messages (intake)."""
    now = now or timezone.now()
    address = address.lower()
    detail = error[:2000]
    with transaction.atomic():
        claimed = (
            MailMessage.objects.filter(message_id=message_id, direction=Direction.OUT)
            .exclude(outcome=MessageOutcome.FAILED)
            .update(outcome=MessageOutcome.FAILED, detail=detail)
        )
        if not claimed:
            _row, claimed = MailMessage.objects.get_or_create(
                message_id=message_id,
                defaults={
                    "direction": Direction.OUT,
                    "outcome": MessageOutcome.FAILED,
                    "ticket_id": ticket_id,
                    "address": address,
                    "detail": detail,
                    "delivery_id": delivery_id,
                    "at": now,
                },
            )
        if claimed:
            record(
                ticket_id=ticket_id,
                action="mail_failed",
                actor_id=None,
                now=now,
                detail={"address": address, "error": error[:500]},
            )
    if claimed:
        logger.warning(
            "e-mail could not be delivered",
            extra={"ticket_id": ticket_id, "delivery_id": delivery_id, "error": error[:300]},
        )
    return bool(claimed)
