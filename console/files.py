"""Files on the console's pages: the rows the ticket page lists (FileRow), the uploads a form
carries until it is sent (attachments.js uploads them at once; each is a hidden
`attachment_ids` value), and the files a page without script sends with the form itself,
uploaded here with attachments.services.upload — all of them, or none."""

import json
from dataclasses import dataclass

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.template.defaultfilters import filesizeformat
from django.urls import reverse
from django.utils import formats

from attachments import selectors, services
from attachments.errors import FileTooLarge, Infected, ScannerUnavailable, UnsupportedType
from attachments.models import Attachment
from console.forms import AttachingForm
from ticketing.models import ReplyType

# Why attachments.services.upload refuses a file; each says it in its `detail`.
REFUSALS = (FileTooLarge, UnsupportedType, Infected, ScannerUnavailable)

# Short names of the formats people know by their extension; others show their MIME subtype.
KINDS = {
    "image/jpeg": "JPEG",
    "text/plain": "TXT",
    "application/msword": "DOC",
    "application/vnd.ms-excel": "XLS",
    "application/vnd.ms-powerpoint": "PPT",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "DOCX",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "XLSX",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": "PPTX",
    "application/vnd.oasis.opendocument.text": "ODT",
    "application/vnd.oasis.opendocument.spreadsheet": "ODS",
    "application/vnd.oasis.opendocument.presentation": "ODP",
    "message/rfc822": "EML",
}
KIND_MAX = 10


def kind_of(content_type: str) -> str:
    """'PDF', 'PNG', 'DOCX': the format as people name it."""
    if content_type in KINDS:
        return KINDS[content_type]
    subtype = content_type.rsplit("/", 1)[-1].removeprefix("x-").removeprefix("vnd.")
    return subtype.upper()[:KIND_MAX] or content_type


@dataclass(frozen=True)
class FileRow:
    """One file as a page lists it."""

    id: int
    name: str
    size: int
    content_type: str
    kind: str
    download_url: str
    thumbnail_url: str | None
    internal: bool
    reply_id: int | None


def row(attachment: Attachment, *, internal: bool) -> FileRow:
    blob = attachment.blob
    return FileRow(
        id=attachment.pk,
        name=attachment.filename,
        size=blob.size,
        content_type=blob.content_type,
        kind=kind_of(blob.content_type),
        download_url=reverse("attachment-download", args=[attachment.pk]),
        thumbnail_url=(
            reverse("attachment-thumbnail", args=[attachment.pk]) if blob.thumbnail else None
        ),
        internal=internal,
        reply_id=attachment.reply_id,
    )


def rows(attachments: list[Attachment]) -> list[FileRow]:
    """Rows of files whose reply is loaded (attachments.selectors.on_ticket)."""
    return [row(a, internal=selectors.is_internal(a)) for a in attachments]


def rows_by_reply(found: dict[int, list[Attachment]], replies) -> dict[int, list[FileRow]]:
    """The rows of each reply's files (attachments.selectors.by_reply), marked internal as
    their reply is."""
    return {
        reply.pk: [
            row(a, internal=reply.reply_type == ReplyType.INTERNAL) for a in found.get(reply.pk, [])
        ]
        for reply in replies
    }


def waiting_uploads(user, ids: list[int]) -> list[FileRow]:
    """The user's own uploads among `ids` that no ticket has yet, in the order given: what a
    form that came back (an error, a newer reply) still carries."""
    found = selectors.waiting(user, ids)
    return [row(found[i], internal=False) for i in ids if i in found]


def upload_chosen(user, chosen: list[UploadedFile]) -> list[Attachment]:
    """Upload the files a form sent itself (the page without script), each checked as the
    API checks it. All or none: on a refusal (one of REFUSALS, raised again) the ones already
    stored are removed."""
    stored: list[Attachment] = []
    try:
        for file in chosen:
            stored.append(services.upload(uploader=user, file=file))
    except REFUSALS:
        discard(user, stored)
        raise
    return stored


def take_chosen(user, form: AttachingForm) -> list[Attachment]:
    """Upload the files chosen in the form's file field (the page without script), all or
    none, and carry them in its attachment_ids with those uploaded before; a refusal is the
    file field's error. Validates the form (its other errors stay for the caller)."""
    form.is_valid()
    try:
        uploaded = upload_chosen(user, form.cleaned_data.get("files") or [])
    except REFUSALS as exc:
        form.add_error("files", str(exc.detail))
        return []
    form.carry([*form.carried_ids(), *(a.pk for a in uploaded)])
    return uploaded


def refuse(user, form: AttachingForm, uploaded: list[Attachment], message: str) -> None:
    """The service would not attach the files (one not the sender's upload, or beyond the
    ticket's total): the message by the file field. The files sent with this very form go
    again (without script they could not be taken off it); those uploaded before stay."""
    discard(user, uploaded)
    gone = {a.pk for a in uploaded}
    form.carry([i for i in form.carried_ids() if i not in gone])
    form.add_error("files", message)


def discard(user, uploads: list[Attachment]) -> None:
    """Remove uploads not attached to anything (this request's own, after a refusal)."""
    for attachment in uploads:
        services.remove(user=user, attachment=attachment)


def limits() -> dict:
    """What attachments.js checks before uploading: the size limit and the server's own
    words for a file beyond it, and how to write a size as the pages do (all in the
    request's language)."""
    limit = settings.ATTACHMENT_MAX_BYTES
    return {
        "max_bytes": limit,
        "max_size": filesizeformat(limit),
        "too_large": str(FileTooLarge(limit).detail),
        "size_words": json.dumps(size_words(), ensure_ascii=False),
    }


def size_words() -> dict:
    """filesizeformat's own words for each unit, "%s" in place of the number, and its
    decimal separator: the script writes "1.5 MB" as the page would (Django's catalogue
    translates them)."""
    number = formats.number_format(2.0, 1)
    return {
        "byte": filesizeformat(1).replace("1", "%s", 1),
        "bytes": filesizeformat(2).replace("2", "%s", 1),
        "KB": filesizeformat(2 * 1024).replace(number, "%s", 1),
        "MB": filesizeformat(2 * 1024**2).replace(number, "%s", 1),
        "GB": filesizeformat(2 * 1024**3).replace(number, "%s", 1),
        "decimal": formats.get_format("DECIMAL_SEPARATOR"),
    }
