import smtplib
from typing import ClassVar

from django.conf import settings
from django.core.mail import EmailMessage
from django.core.mail.utils import DNS_NAME

from .base import PermanentDeliveryError, TransientDeliveryError
from .registry import register


def message_id(idempotency_key: str) -> str:
    """The delivery's Message-ID, the same on every attempt (a retry after a crash is the
    same message: receivers and mail clients that dedupe by Message-ID show it once)."""
    domain = settings.DEFAULT_FROM_EMAIL.rpartition("@")[2].strip("> ") or DNS_NAME.get_fqdn()
    return f"<{idempotency_key}@{domain}>"


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
        message = EmailMessage(
            subject=notification.title,
            body=notification.content,
            from_email=settings.DEFAULT_FROM_EMAIL,
            to=[delivery.target],
            headers={
                "Idempotency-Key": delivery.idempotency_key,
                "Message-ID": message_id(delivery.idempotency_key),
            },
        )
        try:
            message.send(fail_silently=False)
        except smtplib.SMTPRecipientsRefused as exc:
            raise PermanentDeliveryError(f"recipient refused: {exc}") from exc
        except (smtplib.SMTPException, OSError) as exc:
            raise TransientDeliveryError(str(exc)) from exc
