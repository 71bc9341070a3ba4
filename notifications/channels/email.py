import smtplib
from typing import ClassVar

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.core.mail.utils import DNS_NAME
from django.template.loader import render_to_string
from django.utils.safestring import mark_safe

from notifications.markup import render_markdown

from .base import PermanentDeliveryError, TransientDeliveryError
from .registry import register


def message_id(idempotency_key: str) -> str:
    """The delivery's Message-ID, the same on every attempt (a retry after a crash is the
    same message: receivers and mail clients that dedupe by Message-ID show it once)."""
    domain = settings.DEFAULT_FROM_EMAIL.rpartition("@")[2].strip("> ") or DNS_NAME.get_fqdn()
    return f"<{idempotency_key}@{domain}>"


# The message's own Markdown body (a reply's text: ticketing.notify.replied), when it has one.
BODY_PARAM = "body"


def email_bodies(notification) -> tuple[str, str]:
    """The plain text and the HTML alternative of a notification's e-mail: its words, then
    the body it carries (a reply) as typed and as the console renders it (render_markdown:
    the same HTML as the ticket page)."""
    body = notification.params.get(BODY_PARAM) if notification.params else None
    text = notification.content
    if isinstance(body, str) and body.strip():
        text = f"{text}\n\n{body}"
    else:
        body = None
    html = render_to_string(
        "notifications/email.html",
        {
            "title": notification.title,
            "content": notification.content,
            # Sanitised by nh3 in render_markdown.
            "body_html": mark_safe(render_markdown(body)) if body else "",  # noqa: S308
        },
    )
    return text, html


@register("email", external=True)
class Email:
    """Through Django's email backend (console in `make run`, SMTP by settings)."""

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
            message.send(fail_silently=False)
        except smtplib.SMTPRecipientsRefused as exc:
            raise PermanentDeliveryError(f"recipient refused: {exc}") from exc
        except (smtplib.SMTPException, OSError) as exc:
            raise TransientDeliveryError(str(exc)) from exc
