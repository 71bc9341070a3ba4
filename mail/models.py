"""Mailboxes, the messages that went through them, and the ones kept because they could not."""

from email.headerregistry import Address

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from handler_groups.models import HandlerGroup
from ticketing.models import Priority, Ticket, TicketReply

from . import crypto

# Large enough for a 10 MB attachment (base64 grows it by a third) with room to spare.
DEFAULT_MAX_MESSAGE_BYTES = 25 * 1024 * 1024


class UnknownSenders(models.TextChoices):
    CREATE_APPLICANT = "create_applicant", _("create an applicant for the address")
    REJECT = "reject", _("refuse with a polite bounce")


class Mailbox(models.Model):
    """An address people write to (`it-help@company`): the group, priority and category of the
    tickets it opens, how its mail arrives (IMAP, or only the pipe and the HTTP endpoint), and
    the From and Reply-To of what the team sends on its tickets. The IMAP password and the
    HTTP endpoint's secret are stored encrypted (mail.crypto, MAIL_SECRET_KEY)."""

    address = models.EmailField(verbose_name=_("address"), max_length=254, unique=True)
    name = models.CharField(
        verbose_name=_("display name"), max_length=100, help_text=_("e.g. IT support")
    )
    handler_group = models.ForeignKey(
        HandlerGroup,
        verbose_name=_("handler group"),
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="mailboxes",
    )
    priority = models.PositiveSmallIntegerField(
        verbose_name=_("priority"), choices=Priority.choices, default=Priority.MEDIUM
    )
    category = models.CharField(verbose_name=_("category"), max_length=50, blank=True)
    unknown_senders = models.CharField(
        verbose_name=_("unknown senders"),
        max_length=20,
        choices=UnknownSenders.choices,
        default=UnknownSenders.CREATE_APPLICANT,
    )
    imap_host = models.CharField(verbose_name=_("IMAP host"), max_length=255, blank=True)
    imap_port = models.PositiveIntegerField(verbose_name=_("IMAP port"), default=993)
    imap_tls = models.BooleanField(verbose_name=_("IMAP over TLS"), default=True)
    imap_user = models.CharField(verbose_name=_("IMAP user"), max_length=255, blank=True)
    imap_password_encrypted = models.TextField(
        verbose_name=_("IMAP password (encrypted)"), blank=True, default=""
    )
    imap_folder = models.CharField(verbose_name=_("IMAP folder"), max_length=255, default="INBOX")
    inbound_secret_encrypted = models.TextField(
        verbose_name=_("inbound secret (encrypted)"), blank=True, default=""
    )
    max_message_bytes = models.PositiveIntegerField(
        verbose_name=_("largest message (bytes)"), default=DEFAULT_MAX_MESSAGE_BYTES
    )
    active = models.BooleanField(verbose_name=_("active"), default=True)
    created = models.DateTimeField(verbose_name=_("created"), auto_now_add=True)
    updated = models.DateTimeField(verbose_name=_("updated"), auto_now=True)

    class Meta:
        verbose_name = _("mailbox")
        verbose_name_plural = _("mailboxes")
        ordering = ["address"]

    def __str__(self) -> str:
        return f"{self.name} <{self.address}>"

    @property
    def uses_imap(self) -> bool:
        return bool(self.imap_host)

    @property
    def imap_password(self) -> str:
        return crypto.decrypt(self.imap_password_encrypted)

    @imap_password.setter
    def imap_password(self, value: str) -> None:
        self.imap_password_encrypted = crypto.encrypt(value) if value else ""

    @property
    def inbound_secret(self) -> str:
        return crypto.decrypt(self.inbound_secret_encrypted)

    @inbound_secret.setter
    def inbound_secret(self, value: str) -> None:
        self.inbound_secret_encrypted = crypto.encrypt(value) if value else ""

    @property
    def from_header(self) -> str:
        """`"IT support" <it-help@company>`, quoted as RFC 5322 wants."""
        return str(Address(display_name=self.name, addr_spec=self.address))


class Direction(models.TextChoices):
    IN = "in", _("received")
    OUT = "out", _("sent")


class MessageOutcome(models.TextChoices):
    TICKET = "ticket", _("opened a ticket")
    REPLY = "reply", _("added a reply")
    AUTOMATIC = "automatic", _("automatic message: no ticket")
    BOUNCE = "bounce", _("delivery report")
    REFUSED = "refused", _("sender refused")
    KEPT = "kept", _("kept in failed mail")
    SENT = "sent", _("sent")
    FAILED = "failed", _("could not be delivered")


class MailMessage(models.Model):
    """One message received or sent, by its Message-ID: what threads a reply back to its
    ticket (In-Reply-To / References name one of these) and what makes a message received
    twice (a re-fetch after a crash, two paths, a forwarded copy) a duplicate to skip.
    A received message's full text (quoted history and signature included) and its
    sanitised HTML are kept here; the reply holds the new part only."""

    message_id = models.CharField(verbose_name=_("Message-ID"), max_length=998)
    direction = models.CharField(
        verbose_name=_("direction"), max_length=3, choices=Direction.choices
    )
    outcome = models.CharField(
        verbose_name=_("outcome"), max_length=12, choices=MessageOutcome.choices
    )
    mailbox = models.ForeignKey(
        Mailbox,
        verbose_name=_("mailbox"),
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="messages",
        db_index=False,
    )
    ticket = models.ForeignKey(
        Ticket,
        verbose_name=_("ticket"),
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="mail_messages",
        db_index=False,  # mail_message_ticket_idx leads with it
    )
    reply = models.ForeignKey(
        TicketReply,
        verbose_name=_("reply"),
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="mail_messages",
        db_index=False,
    )
    # The address it came from (received) or went to (sent), lower-cased.
    address = models.CharField(verbose_name=_("address"), max_length=254)
    subject = models.CharField(verbose_name=_("subject"), max_length=500, blank=True)
    in_reply_to = models.TextField(verbose_name=_("In-Reply-To"), blank=True, default="")
    references = models.TextField(verbose_name=_("References"), blank=True, default="")
    full_text = models.TextField(verbose_name=_("full text"), blank=True, default="")
    html = models.TextField(verbose_name=_("HTML (sanitised)"), blank=True, default="")
    detail = models.TextField(verbose_name=_("detail"), blank=True, default="")
    # The outbox delivery a sent message is (its Message-ID is the delivery's).
    delivery_id = models.BigIntegerField(verbose_name=_("delivery"), null=True, blank=True)
    at = models.DateTimeField(verbose_name=_("at"))

    class Meta:
        verbose_name = _("e-mail message")
        verbose_name_plural = _("e-mail messages")
        ordering = ["id"]
        constraints = [
            # The duplicate check (mail.services.intake) and the thread lookup.
            models.UniqueConstraint(fields=["message_id"], name="mail_message_id_key"),
        ]
        indexes = [
            # A ticket's messages: its mailbox, its thread's References, the ticket page.
            models.Index(fields=["ticket", "id"], name="mail_message_ticket_idx"),
            # The flood check: new tickets from one address in the last hour.
            models.Index(
                fields=["address", "at"],
                name="mail_message_opened_idx",
                condition=Q(direction="in", outcome="ticket"),
            ),
            models.Index(
                fields=["reply"], name="mail_message_reply_idx", condition=Q(reply__isnull=False)
            ),
        ]

    def __str__(self) -> str:
        return self.message_id


class FailureReason(models.TextChoices):
    UNPARSEABLE = "unparseable", _("cannot be parsed")
    TOO_LARGE = "too_large", _("over the mailbox's size limit")
    REFUSED_TYPE = "refused_type", _("an attachment refused by the type rules")
    FLOOD = "flood", _("held: too many new tickets from this sender")
    ERROR = "error", _("could not be processed")


class FailedMailStatus(models.TextChoices):
    WAITING = "waiting", _("waiting")
    RETRIED = "retried", _("retried")
    DISMISSED = "dismissed", _("dismissed")


class FailedMail(models.Model):
    """A message that did not become a ticket or reply, kept whole with the reason, to be
    retried after a fix (or released, for a held flood) from admin."""

    mailbox = models.ForeignKey(
        Mailbox,
        verbose_name=_("mailbox"),
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="failed",
    )
    raw = models.BinaryField(verbose_name=_("message"))
    size = models.PositiveIntegerField(verbose_name=_("size (bytes)"))
    reason = models.CharField(
        verbose_name=_("reason"), max_length=20, choices=FailureReason.choices
    )
    detail = models.TextField(verbose_name=_("detail"), blank=True, default="")
    message_id = models.CharField(
        verbose_name=_("Message-ID"), max_length=998, blank=True, default=""
    )
    sender = models.CharField(verbose_name=_("sender"), max_length=254, blank=True, default="")
    subject = models.CharField(verbose_name=_("subject"), max_length=500, blank=True, default="")
    source = models.CharField(verbose_name=_("arrived by"), max_length=10)
    status = models.CharField(
        verbose_name=_("status"),
        max_length=10,
        choices=FailedMailStatus.choices,
        default=FailedMailStatus.WAITING,
    )
    received = models.DateTimeField(verbose_name=_("received"))
    retried = models.DateTimeField(verbose_name=_("retried"), null=True, blank=True)
    bounced = models.DateTimeField(verbose_name=_("bounce sent"), null=True, blank=True)

    class Meta:
        verbose_name = _("failed mail")
        verbose_name_plural = _("failed mail")
        ordering = ["-received", "-id"]
        indexes = [
            models.Index(
                fields=["received"],
                name="failed_mail_waiting_idx",
                condition=Q(status="waiting"),
            ),
            # A message kept once is not kept again (a re-fetch of the same failure).
            models.Index(fields=["message_id"], name="failed_mail_message_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.get_reason_display()}: {self.subject or self.message_id}"


class ImapCursor(models.Model):
    """How far a mailbox's IMAP folder has been read: the folder's UIDVALIDITY and the last
    UID whose message is committed (a ticket, reply or failure) and marked on the server."""

    mailbox = models.OneToOneField(
        Mailbox, verbose_name=_("mailbox"), on_delete=models.CASCADE, related_name="imap_cursor"
    )
    folder = models.CharField(verbose_name=_("folder"), max_length=255)
    uidvalidity = models.BigIntegerField(verbose_name=_("UIDVALIDITY"), default=0)
    last_uid = models.BigIntegerField(verbose_name=_("last UID"), default=0)
    fetched = models.DateTimeField(verbose_name=_("last fetched"), null=True, blank=True)
    last_error = models.TextField(verbose_name=_("last error"), blank=True, default="")

    class Meta:
        verbose_name = _("IMAP cursor")
        verbose_name_plural = _("IMAP cursors")

    def __str__(self) -> str:
        return f"{self.mailbox_id}: {self.folder} UID {self.last_uid}"
