from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from .channels.registry import channel_choices


class NotifyTemplate(models.Model):
    """Mirror of the source system's notify-template table. Title and content carry
    {{param}} placeholders; operators edit the wording in admin."""

    code = models.CharField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    title = models.CharField(max_length=300)
    content = models.TextField()
    channels = models.JSONField(
        default=list, blank=True, help_text='Channel codes, e.g. ["in_app", "email", "webhook"].'
    )
    enabled = models.BooleanField(default=True)
    sample_params = models.JSONField(
        default=dict, blank=True, help_text="Parameters for the admin preview."
    )
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "oa_notify_template"
        ordering = ["code"]

    def __str__(self) -> str:
        return self.code

    def clean(self) -> None:
        """Channels must be registered ones: an operator's typo is refused in admin rather
        than discovered by a sender."""
        known = {code for code, _ in channel_choices()}
        if not isinstance(self.channels, list) or not all(
            isinstance(c, str) for c in self.channels
        ):
            raise ValidationError({"channels": "A list of channel codes."})
        unknown = sorted(set(self.channels) - known)
        if unknown:
            raise ValidationError(
                {"channels": f"Unknown channel(s) {unknown}; known: {sorted(known)}."}
            )


class Notification(models.Model):
    """One inbox message for one recipient. (recipient, dedupe_key) is unique: the same event
    never produces a second message, however often it is replayed."""

    recipient = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notifications"
    )
    template_code = models.CharField(max_length=64)
    title = models.CharField(max_length=500)
    content = models.TextField()
    params = models.JSONField(default=dict, blank=True)
    dedupe_key = models.CharField(max_length=200)
    ticket = models.ForeignKey(
        "ticketing.Ticket",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="notifications",
    )
    created = models.DateTimeField()
    read_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "oa_notification"
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["recipient", "dedupe_key"], name="notification_once_per_recipient"
            )
        ]
        indexes = [
            # The inbox and its unread badge.
            models.Index(fields=["recipient", "read_at", "-id"], name="notification_inbox_idx")
        ]

    def __str__(self) -> str:
        return f"{self.template_code} → {self.recipient_id}"

    @property
    def is_read(self) -> bool:
        return self.read_at is not None


class Webhook(models.Model):
    """A JSON endpoint (e.g. a chat-tool robot) that receives notifications of the templates
    it subscribes to (all webhook-channel templates when `template_codes` is empty)."""

    name = models.CharField(max_length=100, unique=True)
    url = models.URLField(max_length=500)
    secret = models.CharField(max_length=200, help_text="HMAC-SHA256 key for X-Signature.")
    template_codes = models.JSONField(default=list, blank=True)
    timeout_seconds = models.FloatField(default=5.0)
    enabled = models.BooleanField(default=True)

    class Meta:
        db_table = "oa_notify_webhook"
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def subscribes_to(self, template_code: str) -> bool:
        return not self.template_codes or template_code in self.template_codes


class DeliveryStatus(models.TextChoices):
    PENDING = "pending"
    SENDING = "sending"
    SENT = "sent"
    FAILED = "failed"


class OutboxDelivery(models.Model):
    """One external delivery of one notification (email, webhook). Written in the sender's
    transaction; performed by a Celery task after commit; retried with backoff."""

    notification = models.ForeignKey(
        Notification, on_delete=models.CASCADE, related_name="deliveries"
    )
    channel = models.CharField(max_length=20)
    target = models.CharField(max_length=500, help_text="Email address or webhook id.")
    status = models.CharField(
        max_length=10, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING
    )
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField()
    # While a worker holds the delivery (status sending); past it the sweep takes it back.
    lease_until = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True, default="")
    idempotency_key = models.CharField(max_length=64, unique=True)
    created = models.DateTimeField()
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "oa_notify_outbox"
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["notification", "channel", "target"], name="outbox_once_per_target"
            )
        ]
        indexes = [
            # The sweep: deliveries due again or abandoned by a dead worker.
            models.Index(fields=["status", "next_attempt_at"], name="outbox_due_idx")
        ]

    def __str__(self) -> str:
        return f"{self.channel}:{self.target} ({self.status})"
