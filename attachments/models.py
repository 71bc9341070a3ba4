from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from ticketing.models import Ticket, TicketReply


class Blob(models.Model):
    """Bytes stored once, under a key made from their SHA-256 (never a user's file name):
    the same file uploaded twice is stored once. Removed, bytes and all, once no attachment
    refers to it (attachments.services.release)."""

    sha256 = models.CharField(verbose_name=_("SHA-256"), max_length=64, unique=True)
    size = models.BigIntegerField(verbose_name=_("size"))
    content_type = models.CharField(verbose_name=_("content type"), max_length=127)
    created = models.DateTimeField(verbose_name=_("created"))
    # The storage key of a small PNG preview, made by a worker for raster images ("" until
    # then, or for other types).
    thumbnail = models.CharField(
        verbose_name=_("thumbnail"), max_length=200, blank=True, default=""
    )

    class Meta:
        verbose_name = _("stored file")
        verbose_name_plural = _("stored files")

    def __str__(self) -> str:
        return self.sha256

    @property
    def key(self) -> str:
        return f"blobs/{self.sha256[:2]}/{self.sha256[2:4]}/{self.sha256}"

    @property
    def thumbnail_key(self) -> str:
        return f"thumbnails/{self.sha256[:2]}/{self.sha256[2:4]}/{self.sha256}.png"


class Attachment(models.Model):
    """A file as someone uploaded it: its name, its uploader, and — once attached — the ticket
    and, for a file sent with a reply, the reply it belongs to (whose audience it shares: an
    internal note's file is the team's only)."""

    blob = models.ForeignKey(
        Blob,
        verbose_name=_("stored file"),
        on_delete=models.PROTECT,
        related_name="attachments",
        db_index=False,
    )
    filename = models.CharField(verbose_name=_("file name"), max_length=200)
    uploader = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("uploader"),
        on_delete=models.SET_NULL,
        null=True,
        related_name="+",
    )
    uploaded = models.DateTimeField(verbose_name=_("uploaded"))
    ticket = models.ForeignKey(
        Ticket,
        verbose_name=_("ticket"),
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="attachments",
        db_index=False,
    )
    reply = models.ForeignKey(
        TicketReply,
        verbose_name=_("reply"),
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="attachments",
        db_index=False,
    )
    attached = models.DateTimeField(verbose_name=_("attached"), null=True, blank=True)

    class Meta:
        verbose_name = _("attachment")
        verbose_name_plural = _("attachments")
        indexes = [
            models.Index(fields=["ticket", "id"], name="attachment_ticket_idx"),
            models.Index(fields=["reply"], name="attachment_reply_idx"),
            models.Index(fields=["blob"], name="attachment_blob_idx"),
            # (The sweep of uploads never attached finds them through the ticket index: ticket
            # IS NULL.)
        ]

    def __str__(self) -> str:
        return self.filename

    @property
    def size(self) -> int:
        return self.blob.size

    @property
    def content_type(self) -> str:
        return self.blob.content_type
