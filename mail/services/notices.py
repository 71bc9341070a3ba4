"""The one polite notice a sender gets when their message could not become a ticket or reply
(an unknown sender at a mailbox that refuses them, a message kept in failed mail).

Safe only where it cannot start a loop or reach a bystander: never to an automatic message
or a delivery report (loops.classify said neither), never to the null envelope sender, to
one of our own mailboxes or to a MAILER-DAEMON/postmaster/no-reply address, and at most one
per address in an hour. The notice itself says `Auto-Submitted: auto-replied` (RFC 3834) so
that other desks do not answer it. Each is recorded as a sent MailMessage whose Message-ID
is derived from the message it answers: the unique key makes it once per message, whatever
retries."""

from __future__ import annotations

import hashlib
import logging
import re
from datetime import timedelta

from celery import current_app
from django.conf import settings
from django.core.mail import EmailMessage
from django.core.mail.utils import DNS_NAME
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from mail.models import Direction, FailedMail, Mailbox, MailMessage, MessageOutcome
from mail.parsing import ParsedMessage

logger = logging.getLogger(__name__)

NOTICE_TASK = "mail.notice"
_MACHINE = re.compile(r"^(mailer-daemon|postmaster|no-?reply|do-?not-?reply|bounce)", re.I)


def safe_to_notify(parsed: ParsedMessage) -> bool:
    sender = parsed.sender
    if not sender or _MACHINE.match(sender.partition("@")[0]):
        return False
    if "return-path" in parsed.headers and not parsed.return_path:
        return False  # the null sender <>: a machine's message by definition
    return not Mailbox.objects.filter(address__iexact=sender).exists()


def enqueue_notice(
    *,
    mailbox_id: int,
    address: str,
    subject: str,
    message_id: str,
    reason: str,
    failed_mail_id: int | None = None,
) -> None:
    """After the commit: the notice goes out from a worker of slow work (an SMTP server's
    pace is not the intake's). A broker that is down costs the notice, not the message."""
    kwargs = {
        "mailbox_id": mailbox_id,
        "address": address,
        "subject": subject,
        "message_id": message_id,
        "reason": reason,
        "failed_mail_id": failed_mail_id,
    }
    try:
        current_app.send_task(NOTICE_TASK, kwargs=kwargs, queue="deliveries")
    except Exception:  # noqa: BLE001 - best effort, logged
        logger.warning("mail notice not queued for %s", address, exc_info=True)


def _notice_id(message_id: str, address: str) -> str:
    domain = settings.DEFAULT_FROM_EMAIL.rpartition("@")[2].strip("> ") or DNS_NAME.get_fqdn()
    digest = hashlib.sha256(f"{message_id}\n{address}".encode()).hexdigest()[:32]
    return f"notice-{digest}@{domain}"


def _wording(reason: str) -> tuple[str, str]:
    if reason == "unknown_sender":
        return (
            _("Your message was not accepted"),
            _(
                "This address accepts requests only from people the support team knows. "
                "Please write from the address of your account, or use the support portal."
            ),
        )
    if reason == "too_large":
        return (
            _("Your message was too large"),
            _(
                "Your message is larger than this mailbox accepts, so it has not been made "
                "into a request. Please send it again with smaller attachments, or put them "
                "on the support portal."
            ),
        )
    if reason == "refused_type":
        return (
            _("Your message was not accepted"),
            _(
                "One of the attached files is of a kind the support team does not accept, "
                "so your message has been kept for the team to review."
            ),
        )
    return (
        _("Your message could not be processed"),
        _(
            "Your message could not be read, so it has been kept for the support team, "
            "who will look at it. There is no need to send it again."
        ),
    )


def send_notice(
    *,
    mailbox_id: int,
    address: str,
    subject: str,
    message_id: str,
    reason: str,
    failed_mail_id: int | None = None,
) -> bool:
    """Send the notice unless it was sent already (for this message, or to this address in
    the last hour). True when this call sent it."""
    mailbox = Mailbox.objects.filter(pk=mailbox_id).first()
    if mailbox is None:
        return False
    now = timezone.now()
    notice_id = _notice_id(message_id, address)
    recent = MailMessage.objects.filter(
        direction=Direction.OUT,
        address=address,
        message_id__startswith="notice-",
        at__gt=now - timedelta(hours=1),
    ).exists()
    if recent:
        return False
    title, text = _wording(reason)
    try:
        with transaction.atomic():
            MailMessage.objects.create(
                message_id=notice_id,
                direction=Direction.OUT,
                outcome=MessageOutcome.SENT,
                mailbox=mailbox,
                address=address,
                subject=title[:500],
                in_reply_to=f"<{message_id}>" if message_id else "",
                detail=reason,
                at=now,
            )
            if failed_mail_id is not None:
                FailedMail.objects.filter(pk=failed_mail_id, bounced=None).update(bounced=now)
            headers = {
                "Message-ID": f"<{notice_id}>",
                "Auto-Submitted": "auto-replied",
                "X-Auto-Response-Suppress": "All",
                "Reply-To": mailbox.from_header,
            }
            if message_id:
                headers["In-Reply-To"] = f"<{message_id}>"
                headers["References"] = f"<{message_id}>"
            quoted = _("Your message: %(subject)s") % {"subject": subject} if subject else ""
            EmailMessage(
                subject=title,
                body=f"{text}\n\n{quoted}".strip(),
                from_email=mailbox.from_header,
                to=[address],
                headers=headers,
            ).send(fail_silently=False)
    except IntegrityError:
        return False  # sent already for this message
    return True
