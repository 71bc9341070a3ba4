"""Uploading, attaching, removing and sweeping attachments; each one transaction.

Blobs are stored once per content hash. Creating one and removing one take the same
PostgreSQL advisory lock (per hash, until commit), so an upload of a file whose last reference
is being removed at that moment either finds the blob still there or stores the bytes anew —
never a row without its bytes."""

import hashlib
import io
import logging
from collections.abc import Iterable
from datetime import datetime, timedelta

from celery import current_app
from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import UploadedFile
from django.db import connection, transaction
from django.db.models import Sum
from django.utils import timezone
from django.utils.translation import gettext as _

from config.errors import InvalidArgument
from ticketing.models import Ticket, TicketReply
from ticketing.transitions import record

from . import scanning, selectors, types
from .errors import FileTooLarge, Infected, ScannerUnavailable, TicketFull, UnsupportedType
from .models import Attachment, Blob

logger = logging.getLogger(__name__)

THUMBNAIL_TASK = "attachments.thumbnail"
FIELD = "attachment_ids"


def _lock_hash(sha256: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 25))", [sha256])


def _digest(upload: UploadedFile) -> tuple[str, bytes]:
    sha = hashlib.sha256()
    head = b""
    for chunk in upload.chunks():
        sha.update(chunk)
        if len(head) < types.SNIFF_BYTES:
            head += chunk[: types.SNIFF_BYTES - len(head)]
    return sha.hexdigest(), head


def upload(*, uploader, file: UploadedFile, now: datetime | None = None) -> Attachment:
    """Check, scan and store one uploaded file; an attachment no ticket has yet. Refused
    (nothing stored) when too large (413), of a type not allowed (415), infected (422) or
    while the scanner cannot be reached (503)."""
    now = now or timezone.now()
    limit = settings.ATTACHMENT_MAX_BYTES
    if file.size is None or file.size > limit:
        raise FileTooLarge(limit)
    sha256, head = _digest(file)
    content_type = types.detect(head)
    if not types.allowed(content_type):
        raise UnsupportedType(content_type)
    try:
        scanning.scan(file.chunks())
    except scanning.Infected as exc:
        logger.warning(
            "upload refused: malware found",
            extra={"signature": exc.signature, "sha256": sha256, "uploader": uploader.pk},
        )
        raise Infected() from exc
    except scanning.ScannerUnavailable as exc:
        logger.error("upload refused: the malware scanner is unavailable: %s", exc)
        raise ScannerUnavailable() from exc
    with transaction.atomic():
        _lock_hash(sha256)
        blob = Blob.objects.filter(sha256=sha256).first()
        created = blob is None
        if blob is None:
            blob = Blob(sha256=sha256, size=file.size, content_type=content_type, created=now)
            _store(blob, file)
            blob.save()
        attachment = Attachment.objects.create(
            blob=blob,
            filename=types.clean_filename(file.name or ""),
            uploader=uploader,
            uploaded=now,
        )
        if created and content_type in types.THUMBNAIL_TYPES:
            blob_id = blob.pk
            transaction.on_commit(lambda: _enqueue_thumbnail(blob_id))
    return attachment


def _store(blob: Blob, file: UploadedFile) -> None:
    """The bytes under the blob's key. A file already there with the right size is the same
    bytes (the key is their hash); one of another size is what a crash left half-written."""
    key = blob.key
    if default_storage.exists(key):
        if default_storage.size(key) == blob.size:
            return
        default_storage.delete(key)
    file.seek(0)
    saved = default_storage.save(key, file)
    if saved != key:  # (a store that renames instead of overwriting)
        default_storage.delete(saved)
        raise RuntimeError(f"storage saved {key} as {saved}")


def _enqueue_thumbnail(blob_id: int) -> None:
    try:
        current_app.send_task(THUMBNAIL_TASK, args=[blob_id], queue="slow")
    except Exception:  # the broker is down: the file is there, only its preview is not
        logger.warning("thumbnail not queued for blob %s", blob_id, exc_info=True)


def attach(
    *,
    user,
    ticket: Ticket,
    attachment_ids: Iterable[int],
    reply: TicketReply | None = None,
    now: datetime | None = None,
) -> list[Attachment]:
    """Put the user's own unattached uploads on `ticket` (and `reply`), within the ticket's
    total. Call inside the transaction that creates the ticket or reply, with the ticket's row
    locked (two replies attaching at once then add up correctly). Anything wrong: a 400 naming
    attachment_ids (someone else's, already attached, unknown), or 413 over the total."""
    ids = list(dict.fromkeys(attachment_ids))
    if not ids:
        return []
    now = now or timezone.now()
    found = list(
        Attachment.objects.select_for_update()
        .select_related("blob")
        .filter(pk__in=ids, uploader=user, ticket=None)
        .order_by("pk")
    )
    if len(found) != len(ids):
        missing = sorted(set(ids) - {a.pk for a in found})
        raise InvalidArgument(
            FIELD,
            _("No upload of yours waiting to be attached has the id %(ids)s.")
            % {"ids": ", ".join(str(i) for i in missing)},
        )
    adding = sum(a.blob.size for a in found)
    held = Attachment.objects.filter(ticket=ticket).aggregate(total=Sum("blob__size"))["total"] or 0
    if held + adding > settings.ATTACHMENT_TICKET_MAX_BYTES:
        raise TicketFull(settings.ATTACHMENT_TICKET_MAX_BYTES)
    Attachment.objects.filter(pk__in=[a.pk for a in found]).update(
        ticket=ticket, reply=reply, attached=now
    )
    for attachment in found:
        attachment.ticket, attachment.reply, attachment.attached = ticket, reply, now
    return found


def may_remove(user, attachment: Attachment, now: datetime | None = None) -> bool:
    """Staff, and the uploader within ATTACHMENT_REMOVE_MINUTES of uploading."""
    if user.is_staff:
        return True
    now = now or timezone.now()
    window = timedelta(minutes=settings.ATTACHMENT_REMOVE_MINUTES)
    return attachment.uploader_id == user.pk and now - attachment.uploaded <= window


def remove(*, user, attachment: Attachment, now: datetime | None = None) -> None:
    """The file is gone for everyone; the ticket's history says who removed which file."""
    now = now or timezone.now()
    with transaction.atomic():
        locked = (
            Attachment.objects.select_for_update(of=("self",))
            .select_related("reply")
            .filter(pk=attachment.pk)
            .first()
        )
        if locked is None:
            return  # removed meanwhile
        if locked.ticket_id is not None:
            internal = selectors.is_internal(locked)
            record(
                ticket_id=locked.ticket_id,
                action="attachment_removed",
                actor_id=user.pk,
                now=now,
                detail={
                    "attachment_id": locked.pk,
                    "filename": locked.filename,
                    "reply_id": locked.reply_id,
                    "audience": "internal" if internal else "public",
                },
            )
        blob_id = locked.blob_id
        locked.delete()
        release(blob_id)


def release(blob_id: int) -> bool:
    """Remove the blob, bytes and thumbnail, if no attachment refers to it any more. Inside a
    transaction; the bytes go before it commits, under the hash's lock."""
    blob = Blob.objects.filter(pk=blob_id).first()
    if blob is None:
        return False
    _lock_hash(blob.sha256)
    if Attachment.objects.filter(blob_id=blob_id).exists():
        return False
    Blob.objects.filter(pk=blob_id).delete()
    default_storage.delete(blob.key)
    if blob.thumbnail:
        default_storage.delete(blob.thumbnail)
    return True


def sweep_unattached(*, now: datetime | None = None, batch: int = 500) -> int:
    """Uploads never attached within ATTACHMENT_UNATTACHED_HOURS are removed, their bytes too
    when nothing else refers to them; so are the bytes no attachment refers to any more (a
    ticket deleted in the admin takes its attachments, not their blobs). Safe to run twice or
    on two nodes at once. Returns the uploads removed."""
    now = now or timezone.now()
    cutoff = now - timedelta(hours=settings.ATTACHMENT_UNATTACHED_HOURS)
    removed = 0
    while True:
        with transaction.atomic():
            stale = list(
                Attachment.objects.select_for_update(skip_locked=True)
                .filter(ticket=None, uploaded__lt=cutoff)
                .order_by("uploaded")
                .values_list("pk", "blob_id")[:batch]
            )
            if not stale:
                break
            Attachment.objects.filter(pk__in=[pk for pk, _ in stale]).delete()
            for blob_id in {blob_id for _, blob_id in stale}:
                release(blob_id)
            removed += len(stale)
    orphans = Blob.objects.filter(attachments=None, created__lt=cutoff).values_list("pk", flat=True)
    for blob_id in list(orphans[:batch]):
        with transaction.atomic():
            release(blob_id)
    return removed


def make_thumbnail(blob_id: int, size: int = 320) -> bool:
    """A PNG at most `size` pixels on its longer side, for a raster image. A file Pillow
    cannot read (or a decompression bomb) simply gets none."""
    from PIL import Image, UnidentifiedImageError

    blob = Blob.objects.filter(pk=blob_id).first()
    if blob is None or blob.thumbnail or blob.content_type not in types.THUMBNAIL_TYPES:
        return False
    try:
        with default_storage.open(blob.key, "rb") as source, Image.open(source) as image:
            image.thumbnail((size, size))
            small = image if image.mode in ("RGB", "RGBA", "L", "LA") else image.convert("RGBA")
            out = io.BytesIO()
            small.save(out, format="PNG", optimize=True)
    except (UnidentifiedImageError, Image.DecompressionBombError, OSError, ValueError):
        logger.info("no thumbnail for blob %s: Pillow cannot read it", blob_id)
        return False
    key = blob.thumbnail_key
    if default_storage.exists(key):
        default_storage.delete(key)
    default_storage.save(key, ContentFile(out.getvalue()))
    # The blob may have been removed meanwhile: then the thumbnail goes too.
    if not Blob.objects.filter(pk=blob_id).update(thumbnail=key):
        default_storage.delete(key)
        return False
    return True
