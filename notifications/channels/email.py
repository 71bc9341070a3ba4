import logging
import smtplib
from collections.abc import Callable
from typing import ClassVar

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.core.mail.utils import DNS_NAME
from django.template.loader import render_to_string
from django.utils.safestring import mark_safe

from notifications.markup import render_markdown

from .base import PermanentDeliveryError, TransientDeliveryError
from .registry import register

logger = logging.getLogger(__name__)


def message_id(idempotency_key: str) -> str:
    """The delivery's Message-ID, the same on every attempt (a retry after a crash is the
    same message: receivers and mail clients that dedupe by Message-ID show it once)."""
    domain = settings.DEFAULT_FROM_EMAIL.rpartition("@")[2].strip("> ") or DNS_NAME.get_fqdn()
    return f"<{idempotency_key}@{domain}>"


# How a ticket's messages become its e-mail thread (From its mailbox, the thread's headers,
# the reply's files): registered by the mail app (mail/outbound.py), a layer above; absent a
# registration, messages go out as composed here. Called with the delivery and the message
# just before sending; it returns nothing but may change any of the message's fields, or
# raise Withheld for a message that must not go out by e-mail at all.
Composer = Callable[..., None]
_composer: list[Composer] = []


def set_composer(composer: Composer) -> None:
    _composer[:] = [composer]


class Withheld(Exception):  # noqa: N818 - a decision, not an error
    """Raised by the composer: this message is not for e-mail (an internal note's text never
    leaves the product). The delivery ends without sending anything; the inbox has it."""


# The message's own Markdown body (a reply's text: ticketing.notify.replied), when it has one.
BODY_PARAM = "body"


def email_bodies(notification, *, extra: str = "", language: str = "") -> tuple[str, str]:
    """The plain text and the HTML alternative of a notification's e-mail: its words (and
    `extra`, a paragraph the composer adds in the reader's language), then the body it
    carries (a reply) as typed and as the console renders it (render_markdown: the same HTML
    as the ticket page). `language`: the reader's, for the HTML's lang attribute."""
    body = notification.params.get(BODY_PARAM) if notification.params else None
    content = f"{notification.content}\n\n{extra}" if extra else notification.content
    text = content
    if isinstance(body, str) and body.strip():
        text = f"{text}\n\n{body}"
    else:
        body = None
    html = render_to_string(
        "notifications/email.html",
        {
            "title": notification.title,
            "content": content,
            "language": language,
            # Sanitised by nh3 in render_markdown.
            "body_html": mark_safe(render_markdown(body)) if body else "",  # noqa: S308
        },
    )
    return text, html


@register("email", external=True)
class Email:
    """Through Django's email backend (SMTP by EMAIL_URL: `make run`'s local mail catcher, a
    real relay in production; log lines when unset)."""

    code: ClassVar[str]  # these three: set by @register
    external: ClassVar[bool]
    per_event: ClassVar[bool]

    def targets(self, template_code, readers) -> dict[int, list[str]]:
        return {user_id: [reader.email] for user_id, reader in readers.items() if reader.email}

    def deliver(self, delivery) -> None:
        notification = delivery.notification
        text, html = email_bodies(notification)
        message = EmailMultiAlternatives(
            subject=notification.title,
            body=text,
            from_email=settings.DEFAULT_FROM_EMAIL,
            to=[delivery.target],
            headers={
                "Idempotency-Key": delivery.idempotency_key,
                "Message-ID": message_id(delivery.idempotency_key),
            },
        )
        message.attach_alternative(html, "text/html")
        try:
            for compose in _composer:
                compose(delivery, message)
        except Withheld as withheld:
            logger.info(
                "e-mail withheld",
                extra={"delivery_id": delivery.pk, "reason": str(withheld)},
            )
            return
        try:
            message.send(fail_silently=False)
        except Exception as exc:
            error = classify_smtp_error(exc)
            if error is exc:
                raise
            raise error from exc


def classify_smtp_error(exc: Exception) -> Exception:
    """What an SMTP failure means for the delivery. The receiving side's 5xx about this
    message or recipient is final (PermanentDeliveryError: the delivery fails, the ticket
    shows it); a 4xx, a refusal where every recipient got a 4xx, a dropped or refused
    connection and a timeout are worth another try (TransientDeliveryError: retried with
    backoff). Problems of our own relay set-up (authentication, STARTTLS, a greeting or HELO
    refused) are retried too: they are not about this recipient, and backoff gives the
    operator time to fix them before the delivery gives up."""
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        codes = [code for code, _text in exc.recipients.values()]
        detail = "; ".join(
            f"{address}: {code} {_text(text)}" for address, (code, text) in exc.recipients.items()
        )
        if codes and all(400 <= code < 500 for code in codes):
            return TransientDeliveryError(f"recipient deferred: {detail}")
        return PermanentDeliveryError(f"recipient refused: {detail}")
    if isinstance(exc, _SETUP_ERRORS):
        return TransientDeliveryError(f"SMTP server: {_describe(exc)}")
    if isinstance(exc, smtplib.SMTPResponseException):
        if 500 <= exc.smtp_code < 600:
            return PermanentDeliveryError(_describe(exc))
        return TransientDeliveryError(_describe(exc))
    if isinstance(exc, smtplib.SMTPException | OSError):  # disconnects, timeouts, refused
        return TransientDeliveryError(f"{type(exc).__name__}: {exc}")
    return exc  # unexpected: delivery.py retries it as transient, with the traceback's type


# Our relay refusing us, not the message: retried (see classify_smtp_error).
_SETUP_ERRORS = (
    smtplib.SMTPAuthenticationError,
    smtplib.SMTPHeloError,
    smtplib.SMTPConnectError,
    smtplib.SMTPNotSupportedError,
)


def _text(value: bytes | str) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _describe(exc: Exception) -> str:
    if isinstance(exc, smtplib.SMTPResponseException):
        return f"{exc.smtp_code} {_text(exc.smtp_error)}"
    return str(exc)
