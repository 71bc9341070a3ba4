"""The mailbox API's shape (mail/apis.py). Only the shape: what a mailbox may be (a unique
address, an enabled group, an IMAP host with its sign-in) is checked by the services
(mail/services/mailboxes.py), which admin calls too."""

from django.conf import settings
from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from rest_framework import serializers

from mail.models import DEFAULT_MAX_MESSAGE_BYTES, Mailbox, UnknownSenders
from mail.services.mailboxes import MAX_MESSAGE_BYTES, MAX_SECRET_LENGTH, MIN_MESSAGE_BYTES
from ticketing.models import Priority


def inbound_url(mailbox: Mailbox) -> str:
    """Where a provider posts this mailbox's mail (settings.SITE_URL, absolute)."""
    path = reverse("mail-inbound", kwargs={"id": mailbox.pk})
    return settings.SITE_URL.rstrip("/") + path


class MailboxSerializer(serializers.Serializer):
    """A mailbox. The IMAP password and the inbound secret are written, never read back:
    `has_imap_password` and `has_inbound_secret` say whether one is stored. Leaving one out
    of a PATCH keeps it; an empty one clears it."""

    id = serializers.IntegerField(read_only=True)
    address = serializers.EmailField(max_length=254)
    name = serializers.CharField(max_length=100, help_text=_("e.g. IT support"))
    handler_group_id = serializers.IntegerField(
        min_value=1,
        allow_null=True,
        default=None,
        help_text=_("The enabled handler group its new tickets go to (none: the pool's rules)."),
    )
    priority = serializers.ChoiceField(choices=Priority.choices, default=Priority.MEDIUM)
    category = serializers.CharField(max_length=50, allow_blank=True, default="")
    unknown_senders = serializers.ChoiceField(
        choices=UnknownSenders.choices,
        default=UnknownSenders.CREATE_APPLICANT,
        help_text=_(
            "create_applicant: an account without password for a new address; reject: a "
            "polite bounce."
        ),
    )
    imap_host = serializers.CharField(
        max_length=255,
        allow_blank=True,
        default="",
        help_text=_("Empty: mail arrives only by the pipe command or the HTTP endpoint."),
    )
    imap_port = serializers.IntegerField(min_value=1, max_value=65535, default=993)
    imap_tls = serializers.BooleanField(default=True)
    imap_user = serializers.CharField(max_length=255, allow_blank=True, default="")
    imap_password = serializers.CharField(
        max_length=MAX_SECRET_LENGTH,
        allow_blank=True,
        trim_whitespace=False,
        write_only=True,
        default="",
        help_text=_("Write-only; stored encrypted."),
    )
    inbound_secret = serializers.CharField(
        max_length=MAX_SECRET_LENGTH,
        allow_blank=True,
        trim_whitespace=False,
        write_only=True,
        default="",
        help_text=_(
            "Write-only; stored encrypted. The HMAC-SHA256 key of the HTTP endpoint's "
            "X-Signature; without one the endpoint refuses every message."
        ),
    )
    imap_folder = serializers.CharField(max_length=255, default="INBOX")
    max_message_bytes = serializers.IntegerField(
        min_value=MIN_MESSAGE_BYTES, max_value=MAX_MESSAGE_BYTES, default=DEFAULT_MAX_MESSAGE_BYTES
    )
    active = serializers.BooleanField(default=True)

    has_imap_password = serializers.SerializerMethodField()
    has_inbound_secret = serializers.SerializerMethodField()
    inbound_url = serializers.SerializerMethodField()
    last_fetched = serializers.DateTimeField(
        source="imap_cursor.fetched",
        read_only=True,
        allow_null=True,
        help_text=_("When its IMAP folder was last read (null: never, or no IMAP)."),
    )
    last_error = serializers.CharField(
        source="imap_cursor.last_error",
        read_only=True,
        allow_null=True,
        help_text=_("Why the last IMAP fetch failed (empty: it did not)."),
    )

    def get_has_imap_password(self, mailbox: Mailbox) -> bool:
        return bool(mailbox.imap_password_encrypted)

    def get_has_inbound_secret(self, mailbox: Mailbox) -> bool:
        return bool(mailbox.inbound_secret_encrypted)

    def get_inbound_url(self, mailbox: Mailbox) -> str:
        return inbound_url(mailbox)


class InboundAcceptedSerializer(serializers.Serializer):
    """What became of a message the desk took responsibility for."""

    outcome = serializers.CharField(
        help_text=_(
            "ticket, reply, automatic, bounce, refused, kept (in failed mail, see detail) "
            "or duplicate"
        )
    )
    message_id = serializers.CharField()
    ticket_id = serializers.IntegerField(allow_null=True)
    reply_id = serializers.IntegerField(allow_null=True)
    failed_mail_id = serializers.IntegerField(allow_null=True)
    detail = serializers.CharField(allow_blank=True)
