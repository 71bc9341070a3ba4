from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import gettext_lazy as _

from .channels.registry import channel_choices
from .rendering import placeholders


class NotifyTemplate(models.Model):
    """Mirror of the source system's notify-template table. Title and content carry
    {{param}} placeholders; operators edit the wording in admin."""

    code = models.CharField(verbose_name=_("code"), max_length=64, unique=True)
    name = models.CharField(verbose_name=_("name"), max_length=200)
    title = models.CharField(verbose_name=_("title"), max_length=300)
    content = models.TextField(verbose_name=_("content"))
    channels = models.JSONField(
        verbose_name=_("channels"),
        default=list,
        blank=True,
        help_text=_('Channel codes, e.g. ["in_app", "email", "webhook"].'),
    )
    enabled = models.BooleanField(verbose_name=_("enabled"), default=True)
    sample_params = models.JSONField(
        verbose_name=_("sample parameters"),
        default=dict,
        blank=True,
        help_text=_("Parameters for the admin preview."),
    )
    updated = models.DateTimeField(verbose_name=_("updated"), auto_now=True)

    class Meta:
        db_table = "oa_notify_template"
        verbose_name = _("notification template")
        verbose_name_plural = _("notification templates")
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
            raise ValidationError({"channels": _("A list of channel codes.")})
        unknown = sorted(set(self.channels) - known)
        if unknown:
            raise ValidationError(
                {
                    "channels": _("Unknown channel(s) %(unknown)s; known: %(known)s.")
                    % {"unknown": ", ".join(unknown), "known": ", ".join(sorted(known))}
                }
            )


class NotifyTemplateTranslation(models.Model):
    """A template's wording in another language. The template's own title and content are in
    LANGUAGE_CODE; a recipient whose language has a row here reads this wording instead (same
    {{param}} placeholders; channels and on/off stay the template's)."""

    template = models.ForeignKey(
        NotifyTemplate,
        on_delete=models.CASCADE,
        related_name="translations",
        verbose_name=_("template"),
    )
    language = models.CharField(
        verbose_name=_("language"), max_length=16, choices=settings.LANGUAGES
    )
    title = models.CharField(verbose_name=_("title"), max_length=300)
    content = models.TextField(verbose_name=_("content"))

    class Meta:
        db_table = "oa_notify_template_translation"
        verbose_name = _("template translation")
        verbose_name_plural = _("template translations")
        ordering = ["template", "language"]
        constraints = [
            models.UniqueConstraint(
                fields=["template", "language"], name="notify_template_one_per_language"
            )
        ]

    def __str__(self) -> str:
        return f"{self.template_id}:{self.language}"

    def clean(self) -> None:
        """The wording may use only the parameters the template's own wording uses: a
        translation must never ask for a parameter no sender provides."""
        if self.template_id is None:
            return
        allowed = placeholders(self.template.title) | placeholders(self.template.content)
        extra = sorted((placeholders(self.title) | placeholders(self.content)) - allowed)
        if extra:
            raise ValidationError(
                {
                    "content": _("Unknown parameter(s) %(extra)s; the template uses %(allowed)s.")
                    % {"extra": ", ".join(extra), "allowed": ", ".join(sorted(allowed))}
                }
            )


class Notification(models.Model):
    """One inbox message for one recipient. (recipient, dedupe_key) is unique: the same event
    never produces a second message, however often it is replayed."""

    recipient = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="notifications",
        verbose_name=_("recipient"),
    )
    template_code = models.CharField(verbose_name=_("template code"), max_length=64)
    title = models.CharField(verbose_name=_("title"), max_length=500)
    content = models.TextField(verbose_name=_("content"))
    params = models.JSONField(verbose_name=_("parameters"), default=dict, blank=True)
    dedupe_key = models.CharField(verbose_name=_("dedupe key"), max_length=200)
    ticket = models.ForeignKey(
        "ticketing.Ticket",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="notifications",
        verbose_name=_("ticket"),
    )
    created = models.DateTimeField(verbose_name=_("created"))
    read_at = models.DateTimeField(verbose_name=_("read at"), null=True, blank=True)

    class Meta:
        db_table = "oa_notification"
        verbose_name = _("notification")
        verbose_name_plural = _("notifications")
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

    name = models.CharField(verbose_name=_("name"), max_length=100, unique=True)
    url = models.URLField(verbose_name=_("URL"), max_length=500)
    secret = models.CharField(
        verbose_name=_("secret"), max_length=200, help_text=_("HMAC-SHA256 key for X-Signature.")
    )
    template_codes = models.JSONField(verbose_name=_("template codes"), default=list, blank=True)
    timeout_seconds = models.FloatField(verbose_name=_("timeout (seconds)"), default=5.0)
    enabled = models.BooleanField(verbose_name=_("enabled"), default=True)

    class Meta:
        db_table = "oa_notify_webhook"
        verbose_name = _("webhook")
        verbose_name_plural = _("webhooks")
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def subscribes_to(self, template_code: str) -> bool:
        return not self.template_codes or template_code in self.template_codes


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", _("pending")
    SENDING = "sending", _("sending")
    SENT = "sent", _("sent")
    FAILED = "failed", _("failed")


class OutboxDelivery(models.Model):
    """One external delivery of one notification (email, webhook). Written in the sender's
    transaction; performed by a Celery task after commit; retried with backoff."""

    notification = models.ForeignKey(
        Notification,
        on_delete=models.CASCADE,
        related_name="deliveries",
        verbose_name=_("notification"),
    )
    channel = models.CharField(verbose_name=_("channel"), max_length=20)
    target = models.CharField(
        verbose_name=_("target"), max_length=500, help_text=_("Email address or webhook id.")
    )
    status = models.CharField(
        verbose_name=_("status"),
        max_length=10,
        choices=DeliveryStatus.choices,
        default=DeliveryStatus.PENDING,
    )
    attempts = models.PositiveIntegerField(verbose_name=_("attempts"), default=0)
    next_attempt_at = models.DateTimeField(verbose_name=_("next attempt at"))
    # While a worker holds the delivery (status sending); past it the sweep takes it back.
    lease_until = models.DateTimeField(verbose_name=_("lease until"), null=True, blank=True)
    last_error = models.TextField(verbose_name=_("last error"), blank=True, default="")
    idempotency_key = models.CharField(
        verbose_name=_("idempotency key"), max_length=64, unique=True
    )
    created = models.DateTimeField(verbose_name=_("created"))
    sent_at = models.DateTimeField(verbose_name=_("sent at"), null=True, blank=True)

    class Meta:
        db_table = "oa_notify_outbox"
        verbose_name = _("outbox delivery")
        verbose_name_plural = _("outbox deliveries")
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
