import smtplib

from django.conf import settings
from django.core.mail import EmailMessage

from .base import PermanentDeliveryError, TransientDeliveryError
from .registry import register


@register("email", external=True)
class Email:
    """Through Django's email backend (console in `make run`, SMTP by settings)."""

    def targets(self, notifications) -> dict[int, list[str]]:
        from django.contrib.auth import get_user_model

        emails = dict(
            get_user_model()
            .objects.filter(pk__in={n.recipient_id for n in notifications})
            .exclude(email="")
            .values_list("pk", "email")
        )
        return {n.pk: [emails[n.recipient_id]] for n in notifications if n.recipient_id in emails}

    def deliver(self, delivery) -> None:
        notification = delivery.notification
        message = EmailMessage(
            subject=notification.title,
            body=notification.content,
            from_email=settings.DEFAULT_FROM_EMAIL,
            to=[delivery.target],
            headers={"Idempotency-Key": delivery.idempotency_key},
        )
        try:
            message.send(fail_silently=False)
        except smtplib.SMTPRecipientsRefused as exc:
            raise PermanentDeliveryError(f"recipient refused: {exc}") from exc
        except (smtplib.SMTPException, OSError) as exc:
            raise TransientDeliveryError(str(exc)) from exc
