"""One received message → a ticket, a public reply, or a message kept in failed mail.

Whatever way a message arrives (IMAP, the MTA's pipe, the HTTP endpoint, a retry from
admin) it goes through `receive`, which decides, in one transaction, in this order:

1. Too large for the mailbox, or unreadable: kept whole in failed mail with the reason.
2. Already received (the same Message-ID: a re-fetch after a crash, two paths, a forwarded
   copy): skipped. A transaction-level advisory lock on the Message-ID makes two deliveries
   of one message at the same instant queue behind each other, so one wins.
3. Written by a machine (loops.classify): an out-of-office, a list or bulk message gets no
   ticket and no answer; a delivery report about one of our own messages is recorded on
   its ticket as a failed delivery to that address.
4. Threaded: In-Reply-To / References naming a message of a ticket (one we sent or one we
   received), else a `[#BILL-CODE]` token in the subject, names the ticket. The message is
   a public reply on it only if its sender may write there (the applicant, a watcher, the
   team: ticketing.access "mail_reply"); anyone else starts a ticket of their own. A reply
   on a completed ticket reopens it (within REOPEN_DAYS for the applicant; the team and
   watchers any time); one on a closed ticket, or on the applicant's completed ticket past
   the window, opens a new ticket that names the old one (and is linked to it).
5. Otherwise a new ticket with the mailbox's group, priority and category, from the sender
   (an unknown address gets an applicant account, or a polite refusal, as the mailbox says);
   more than MAIL_FLOOD_PER_HOUR new tickets in an hour from one address are held for review
   instead. The first message's Cc'd addresses become the ticket's watchers.

Attachments and inline images go through the attachments app's checks; a refused one keeps
the whole message in failed mail (nothing half-made). Every message received, whatever
became of it, is one MailMessage row: the thread index and the duplicate check."""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.parser import BytesHeaderParser
from email.policy import default as default_policy

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import InterfaceError, OperationalError, connection, transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape
from django.utils.translation import gettext as _
from redis.exceptions import RedisError
from rest_framework.exceptions import APIException

from attachments import services as attachments
from collaboration.services.links import link_add
from collaboration.services.watchers import watcher_add
from config.errors import ConflictError, Forbidden, InvalidArgument
from mail import loops, outbound
from mail.models import (
    Direction,
    FailedMail,
    FailedMailStatus,
    FailureReason,
    Mailbox,
    MailMessage,
    MessageOutcome,
    UnknownSenders,
)
from mail.parsing import ParsedMessage, Unparseable, message_ids, parse
from mail.services import notices
from ticketing import access, categories
from ticketing.models import ProcessStatus, ReplyType, Ticket, TicketStatus
from ticketing.transitions import record
from workflow import services as workflow

logger = logging.getLogger(__name__)

DUPLICATE = "duplicate"
# `[#TK20261207000042]` (or with a space, `[# TK…]`) anywhere in the subject.
_BILL_TOKEN = re.compile(r"\[#\s*([A-Za-z]{1,8}\d{6,20})\]")
_TITLE_MAX = 200
_SOURCES = ("imap", "pipe", "http", "retry")
_CID_SRC = re.compile(r'src="cid:([^"]*)"', re.IGNORECASE)
# What is the infrastructure's, not the message's: the caller retries (IMAP leaves the message
# unmarked, the pipe answers EX_TEMPFAIL, the endpoint 503).
INFRASTRUCTURE = (OperationalError, InterfaceError, RedisError)


@dataclass(frozen=True)
class Received:
    outcome: str  # a MessageOutcome value, or "duplicate"
    message_id: str
    ticket_id: int | None = None
    reply_id: int | None = None
    failed_mail_id: int | None = None
    detail: str = ""


class _Keep(Exception):
    """Raised inside the transaction to roll back what the message began and keep it whole."""

    def __init__(self, reason: str, detail: str):
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def receive(
    *,
    mailbox: Mailbox,
    raw: bytes,
    source: str,
    now: datetime | None = None,
    allow_flood: bool = False,
) -> Received:
    """Turn one raw message into what it is (see the module). Commits before returning.
    Problems with the message are kept in failed mail (outcome "kept", detail the reason);
    errors of the infrastructure (database down) propagate, so the caller retries or
    tells the sending MTA to (the IMAP fetch leaves the message unmarked). `allow_flood`:
    a held message released from admin."""
    if source not in _SOURCES:
        raise ValueError(f"source must be one of {_SOURCES}")
    now = now or timezone.now()
    if len(raw) > mailbox.max_message_bytes:
        detail = _("%(size)s bytes, over the mailbox's limit of %(limit)s.") % {
            "size": len(raw),
            "limit": mailbox.max_message_bytes,
        }
        return _keep(mailbox, raw, source, now, FailureReason.TOO_LARGE, detail, None)
    try:
        parsed = parse(raw)
    except Unparseable as exc:
        return _keep(mailbox, raw, source, now, FailureReason.UNPARSEABLE, str(exc), None)
    message_id = parsed.message_id or _synthetic_id(raw)
    try:
        with transaction.atomic():
            _lock_message_id(message_id)
            if MailMessage.objects.filter(message_id=message_id).exists():
                return Received(DUPLICATE, message_id)
            if source != "retry" and _kept_already(message_id):
                return Received(DUPLICATE, message_id)
            return _decide(mailbox, parsed, message_id, now, allow_flood=allow_flood)
    except _Keep as keep:
        return _keep(mailbox, raw, source, now, keep.reason, keep.detail, parsed)
    except INFRASTRUCTURE:
        raise
    except Exception as exc:  # noqa: BLE001 - one message's bug must not stall the mailbox
        logger.exception("mail could not be processed", extra={"mailbox": mailbox.address})
        detail = f"{type(exc).__name__}: {exc}"
        return _keep(mailbox, raw, source, now, FailureReason.ERROR, detail, parsed)


def _synthetic_id(raw: bytes) -> str:
    """A message without a Message-ID (some scripts send them) still has one identity: its
    bytes. The same message fetched twice is the same id."""
    return f"sha256-{hashlib.sha256(raw).hexdigest()}@ticketdesk.invalid"


def _lock_message_id(message_id: str) -> None:
    """A transaction-level advisory lock on the Message-ID's hash: the same message arriving
    by two paths at once is decided once (the second sees the first's row)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 27))", [message_id])


def _kept_already(message_id: str) -> bool:
    return FailedMail.objects.filter(
        message_id=message_id, status=FailedMailStatus.WAITING
    ).exists()


def _decide(
    mailbox: Mailbox, parsed: ParsedMessage, message_id: str, now: datetime, *, allow_flood: bool
) -> Received:
    kind = loops.classify(parsed)
    if kind is None and Mailbox.objects.filter(address__iexact=parsed.sender).exists():
        # From one of our own addresses: our own message come back (a forwarding loop).
        kind = loops.Automatic(f"From: {parsed.sender} (one of this desk's mailboxes)")
    if isinstance(kind, loops.Bounce):
        return _bounce(mailbox, parsed, message_id, kind, now)
    thread = _threaded_ticket(parsed)
    if isinstance(kind, loops.Automatic):
        _store(mailbox, parsed, message_id, MessageOutcome.AUTOMATIC, now, ticket=thread)
        return Received(MessageOutcome.AUTOMATIC, message_id, detail=kind.reason)
    sender = _person(parsed.sender)
    if thread is not None and sender is not None:
        answered = _reply_or_follow_up(mailbox, parsed, message_id, thread, sender, now)
        if answered is not None:
            return answered
    if sender is None:
        if mailbox.unknown_senders == UnknownSenders.REJECT:
            _store(mailbox, parsed, message_id, MessageOutcome.REFUSED, now)
            _bounce_later(mailbox, parsed, reason="unknown_sender")
            return Received(MessageOutcome.REFUSED, message_id, detail="unknown_sender")
    if not allow_flood and _flooding(parsed.sender, now):
        raise _Keep(
            FailureReason.FLOOD,
            _("More than %(limit)s new tickets from %(sender)s in an hour.")
            % {"limit": settings.MAIL_FLOOD_PER_HOUR, "sender": parsed.sender},
        )
    if sender is None:
        sender = _new_applicant(parsed.sender, parsed.sender_name)
    return _open_ticket(mailbox, parsed, message_id, sender, now, follows=thread)


def _threaded_ticket(parsed: ParsedMessage) -> Ticket | None:
    """The ticket the message answers: a message of its thread named in In-Reply-To or
    References (nearest first), else a `[#BILL-CODE]` token in the subject. A merged ticket
    stands for the ticket it was merged into."""
    ids = parsed.thread_ids()
    ticket_id = None
    if ids:
        found = dict(
            MailMessage.objects.filter(message_id__in=ids, ticket__isnull=False).values_list(
                "message_id", "ticket_id"
            )
        )
        ticket_id = next((found[i] for i in ids if i in found), None)
    if ticket_id is None:
        match = _BILL_TOKEN.search(parsed.subject or "")
        if match:
            ticket_id = (
                Ticket.objects.filter(bill_code=match.group(1).upper())
                .values_list("pk", flat=True)
                .first()
            )
    if ticket_id is None:
        return None
    ticket = Ticket.objects.select_related("handler_group").get(pk=ticket_id)
    hops = 0
    while ticket.merged_into_id is not None and hops < 10:  # (merges never cycle; bounded)
        ticket = Ticket.objects.select_related("handler_group").get(pk=ticket.merged_into_id)
        hops += 1
    return ticket


def _person(address: str):
    """The active account with this e-mail address (case-insensitively), or None."""
    return (
        get_user_model()
        .objects.filter(email__iexact=address, is_active=True)
        .order_by("id")
        .first()
    )


def _reply_or_follow_up(
    mailbox: Mailbox,
    parsed: ParsedMessage,
    message_id: str,
    ticket: Ticket,
    sender,
    now: datetime,
) -> Received | None:
    """A public reply on `ticket` by `sender`, reopening it when completed, or a new ticket
    that names it when it is over. None when the sender may not write there: they start a
    ticket of their own."""
    if not access.may("mail_reply", sender, ticket):
        return None
    over = ticket.ticket_status == TicketStatus.CLOSED or ticket.process_status in (
        ProcessStatus.REJECTED,
        ProcessStatus.CANCELLED,
    )
    if not over and ticket.ticket_status == TicketStatus.COMPLETED:
        within = sender.pk != ticket.creator_id or access.can_reopen(sender, ticket, now=now)
        if within:
            workflow.ticket_reopen(ticket_id=ticket.pk, user=sender, now=now)
        else:
            over = True
    if over:
        return _open_ticket(mailbox, parsed, message_id, sender, now, follows=ticket)
    files = _upload_parts(parsed, sender, now)
    reply = workflow.ticket_reply(
        ticket_id=ticket.pk,
        author=sender,
        reply_type=ReplyType.PUBLIC,
        content=_body(parsed),
        attachment_ids=[f.pk for f in files],
        now=now,
    )
    _store(
        mailbox,
        parsed,
        message_id,
        MessageOutcome.REPLY,
        now,
        ticket=ticket,
        reply=reply,
        files=files,
    )
    return Received(MessageOutcome.REPLY, message_id, ticket_id=ticket.pk, reply_id=reply.pk)


def _open_ticket(
    mailbox: Mailbox,
    parsed: ParsedMessage,
    message_id: str,
    sender,
    now: datetime,
    *,
    follows: Ticket | None,
) -> Received:
    files = _upload_parts(parsed, sender, now)
    content = _body(parsed)
    if follows is not None and (
        follows.creator_id == sender.pk or access.can_work_on(sender, follows)
    ):
        # Only someone who could see the old ticket is told its code (and gets the link).
        content = (
            _("Follow-up to [#%(code)s]: %(title)s")
            % {
                "code": follows.bill_code,
                "title": follows.title,
            }
            + f"\n\n{content}"
        )
    else:
        follows = None
    ticket = workflow.ticket_submit(
        creator=sender,
        title=_title(parsed.subject),
        content=content,
        priority=mailbox.priority,
        category=categories.offered_name(mailbox.category),
        handler_group_id=mailbox.handler_group_id,
        attachment_ids=[f.pk for f in files],
        now=now,
    )
    record(
        ticket_id=ticket.pk,
        action="mail_received",
        actor_id=sender.pk,
        now=now,
        detail={"mailbox": mailbox.address, "message_id": message_id},
    )
    _store(mailbox, parsed, message_id, MessageOutcome.TICKET, now, ticket=ticket, files=files)
    _copy_in(ticket, parsed, mailbox, sender, now)
    if follows is not None:
        try:
            link_add(ticket_id=ticket.pk, other_id=follows.pk, kind="related", user=sender, now=now)
        except (ConflictError, Forbidden, InvalidArgument, Ticket.DoesNotExist):
            pass  # the applicant may not link: the code in the text names it
    return Received(MessageOutcome.TICKET, message_id, ticket_id=ticket.pk)


def _copy_in(ticket: Ticket, parsed: ParsedMessage, mailbox: Mailbox, sender, now) -> None:
    """The first message's Cc'd people watch the ticket: known accounts, and for a mailbox
    that makes applicants of unknown senders, new ones. Our own mailboxes are not people."""
    ours = set(Mailbox.objects.values_list("address", flat=True))
    for address in dict.fromkeys(parsed.cc):
        if address in ours or address == parsed.sender:
            continue
        person = _person(address)
        if person is None:
            if mailbox.unknown_senders != UnknownSenders.CREATE_APPLICANT:
                continue
            person = _new_applicant(address, "")
        if person.pk == ticket.creator_id:
            continue
        watcher_add(ticket_id=ticket.pk, user_id=person.pk, actor=sender, now=now)


def _new_applicant(address: str, name: str):
    """An applicant account for an address that wrote in: no password (they sign in by
    having one set, or never: the mail is their channel), username the address."""
    User = get_user_model()
    username = address[:150]
    if User.objects.filter(username__iexact=username).exists():
        digest = hashlib.sha256(address.encode()).hexdigest()[:8]
        username = f"{address[:140]}-{digest}"
    first, _sep, last = (name or "").strip().partition(" ")
    user = User(username=username, email=address, first_name=first[:150], last_name=last[:150])
    user.set_unusable_password()
    user.save()
    return user


def _flooding(address: str, now: datetime) -> bool:
    opened = MailMessage.objects.filter(
        direction=Direction.IN,
        outcome=MessageOutcome.TICKET,
        address=address,
        at__gt=now - timedelta(hours=1),
        at__lte=now,
    ).count()
    return opened >= settings.MAIL_FLOOD_PER_HOUR


def _title(subject: str) -> str:
    title = " ".join((subject or "").split())
    title = _BILL_TOKEN.sub("", title).strip()
    return (title or _("(no subject)"))[:_TITLE_MAX]


def _body(parsed: ParsedMessage) -> str:
    text = (parsed.new_text or parsed.text or "").strip()
    return text or _("(no text)")


def _upload_parts(parsed: ParsedMessage, uploader, now: datetime) -> list:
    """The message's files as uploads of the sender (checked, scanned, stored); a refused
    one keeps the whole message (raising _Keep rolls back the uploads made so far)."""
    uploads = []
    for part in parsed.parts:
        file = SimpleUploadedFile(
            part.filename or "attachment", part.data, content_type=part.content_type
        )
        try:
            uploads.append(attachments.upload(uploader=uploader, file=file, now=now))
        except APIException as exc:
            raise _Keep(
                FailureReason.REFUSED_TYPE,
                _("Attachment %(name)s refused: %(why)s")
                % {"name": part.filename or part.content_type, "why": exc.detail},
            ) from exc
    return uploads


def _with_files(parsed: ParsedMessage, files: list) -> str:
    """The sanitised HTML with its inline images (`cid:`) pointing at the files they became
    (whose download checks who may read them); an image without its file is dropped."""
    html = parsed.html
    if not html or "cid:" not in html.lower():
        return html
    by_cid = {
        part.content_id.lower(): reverse("attachment-download", args=[upload.pk])
        for part, upload in zip(parsed.parts, files, strict=False)
        if part.content_id
    }

    def point(match: re.Match) -> str:
        url = by_cid.get(match.group(1).lower())
        return f'src="{escape(url)}"' if url else 'src=""'

    return _CID_SRC.sub(point, html)


def _store(
    mailbox: Mailbox,
    parsed: ParsedMessage,
    message_id: str,
    outcome: str,
    now: datetime,
    *,
    ticket: Ticket | None = None,
    reply=None,
    detail: str = "",
    files: list | None = None,
) -> MailMessage:
    return MailMessage.objects.create(
        message_id=message_id,
        direction=Direction.IN,
        outcome=outcome,
        mailbox=mailbox,
        ticket=ticket,
        reply=reply,
        address=parsed.sender[:254],
        subject=(parsed.subject or "")[:500],
        in_reply_to=" ".join(f"<{i}>" for i in parsed.in_reply_to),
        references=" ".join(f"<{i}>" for i in parsed.references),
        full_text=parsed.text if parsed.quoted_text else "",
        html=_with_files(parsed, files or []),
        detail=detail,
        at=now,
    )


def _bounce(
    mailbox: Mailbox, parsed: ParsedMessage, message_id: str, report: loops.Bounce, now: datetime
) -> Received:
    """A delivery report: when it is about one of our messages, that message is marked failed
    and its ticket's history says which address could not be reached."""
    ours = (
        MailMessage.objects.filter(
            message_id__in=report.original_message_ids, direction=Direction.OUT
        )
        .order_by("id")
        .first()
    )
    ticket = ours.ticket if ours is not None else None
    address = (report.recipients[0] if report.recipients else (ours.address if ours else ""))[:254]
    detail = " ".join(x for x in (report.status, report.diagnostic) if x)[:2000]
    _store(mailbox, parsed, message_id, MessageOutcome.BOUNCE, now, ticket=ticket, detail=detail)
    if ours is not None and ticket is not None:
        outbound.delivery_failed(
            message_id=ours.message_id, ticket_id=ticket.pk, address=address, error=detail, now=now
        )
    return Received(
        MessageOutcome.BOUNCE, message_id, ticket_id=ticket.pk if ticket else None, detail=detail
    )


def _keep(
    mailbox: Mailbox,
    raw: bytes,
    source: str,
    now: datetime,
    reason: str,
    detail: str,
    parsed: ParsedMessage | None,
) -> Received:
    """Keep the message whole with the reason (one row per message: a re-fetch of the same
    failure finds it), and send its sender one notice where that is safe."""
    message_id, sender, subject = _identity(raw, parsed)
    with transaction.atomic():
        if message_id:
            _lock_message_id(message_id)
            existing = FailedMail.objects.filter(
                message_id=message_id, status=FailedMailStatus.WAITING
            ).first()
            if existing is not None:
                if source == "retry":
                    FailedMail.objects.filter(pk=existing.pk).update(
                        reason=reason, detail=detail[:4000]
                    )
                return Received(
                    MessageOutcome.KEPT, message_id, failed_mail_id=existing.pk, detail=reason
                )
        failed = FailedMail.objects.create(
            mailbox=mailbox,
            raw=raw,
            size=len(raw),
            reason=reason,
            detail=detail[:4000],
            message_id=message_id[:998],
            sender=sender[:254],
            subject=subject[:500],
            source=source,
            received=now,
        )
        if reason != FailureReason.FLOOD and parsed is not None:
            _bounce_later(mailbox, parsed, reason=reason, failed_mail_id=failed.pk)
    logger.warning(
        "mail kept in failed mail",
        extra={"reason": reason, "mailbox": mailbox.address, "failed_mail_id": failed.pk},
    )
    return Received(MessageOutcome.KEPT, message_id, failed_mail_id=failed.pk, detail=reason)


def _identity(raw: bytes, parsed: ParsedMessage | None) -> tuple[str, str, str]:
    """Message-ID, sender and subject of a message, as far as its headers can be read."""
    if parsed is not None:
        return parsed.message_id or _synthetic_id(raw), parsed.sender, parsed.subject
    try:
        headers = BytesHeaderParser(policy=default_policy).parsebytes(raw[:65536])
        ids = message_ids(str(headers.get("message-id") or ""))
        sender = str(headers.get("from") or "")
        subject = str(headers.get("subject") or "")
    except Exception:  # noqa: BLE001 - whatever is unreadable reads as absent
        ids, sender, subject = (), "", ""
    return (ids[0] if ids else _synthetic_id(raw)), sender, subject


def _bounce_later(
    mailbox: Mailbox, parsed: ParsedMessage, *, reason: str, failed_mail_id: int | None = None
) -> None:
    """One polite notice to the sender after the commit, where that is safe: not to an
    automatic message (classify said none), not to a null envelope sender, not to our own
    mailboxes, and not to anyone already told within the hour (mail.services.notices)."""
    if not notices.safe_to_notify(parsed):
        return
    mailbox_id = mailbox.pk
    transaction.on_commit(
        lambda: notices.enqueue_notice(
            mailbox_id=mailbox_id,
            address=parsed.sender,
            subject=parsed.subject,
            message_id=parsed.message_id,
            reason=reason,
            failed_mail_id=failed_mail_id,
        )
    )
