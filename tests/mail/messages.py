"""Build raw messages for tests: `make_message(**fields) -> bytes`, `big_message(size)`.

The corpus (tests/mail/corpus/) holds what real clients send; these build the rest: a reply
to a message the test just sent, a message of a given size, a header the test needs. The
output is what an MTA delivers: CRLF line ends, MIME encoded by the standard library (RFC
2047 headers, base64/quoted-printable bodies), a fresh Message-ID unless one is given.

    raw = make_message(
        from_="Carla Rossi <carla@example.com>",
        subject="Re: [#IT-1042] Printer",
        body="Thanks!",
        in_reply_to="<notif-abc@desk.example.com>",
        attachments=[("log.txt", b"...", "text/plain")],
    )
"""

from __future__ import annotations

import email.policy
import email.utils
import random
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from email.message import EmailMessage

TEN_MB = 10 * 1024 * 1024


@dataclass(frozen=True)
class Attachment:
    """A file to attach; `inline` with a `content_id` is an image the HTML shows as cid:."""

    filename: str
    data: bytes
    content_type: str = "application/octet-stream"
    inline: bool = False
    content_id: str = ""  # without angle brackets


AttachmentLike = Attachment | tuple[str, bytes] | tuple[str, bytes, str]


def _ids(value: str | Iterable[str] | None) -> str:
    if not value:
        return ""
    values = [value] if isinstance(value, str) else list(value)
    return " ".join(v if v.startswith("<") else f"<{v}>" for v in values)


def make_message(
    *,
    from_: str = "Alice Example <alice@example.com>",
    to: str | Sequence[str] = "IT support <it-help@desk.example.com>",
    cc: str | Sequence[str] = (),
    subject: str = "Printer on fire",
    body: str | None = "It is on fire.",
    html: str | None = None,
    message_id: str | None = None,
    in_reply_to: str | None = None,
    references: str | Sequence[str] | None = None,
    date: str | None = None,
    reply_to: str | None = None,
    attachments: Iterable[AttachmentLike] = (),
    headers: Mapping[str, str] | Sequence[tuple[str, str]] = (),
    charset: str = "utf-8",
) -> bytes:
    """A raw message (bytes, CRLF). Addresses are "Name <addr>" strings (non-ASCII names
    are RFC 2047 encoded); ids may be given with or without angle brackets; `message_id=""`
    leaves the header out; `body=None` with `html` gives an HTML-only message; `headers`
    are added as given (e.g. {"Auto-Submitted": "auto-replied"}); attachments are
    Attachment or (filename, data[, content_type]) tuples; `charset` is the body's."""
    message = EmailMessage(policy=email.policy.SMTP)
    message["From"] = from_
    message["To"] = to if isinstance(to, str) else ", ".join(to)
    if cc:
        message["Cc"] = cc if isinstance(cc, str) else ", ".join(cc)
    if reply_to:
        message["Reply-To"] = reply_to
    message["Subject"] = subject
    message["Date"] = date or email.utils.format_datetime(
        email.utils.parsedate_to_datetime("Tue, 04 Jun 2024 10:00:00 +0000")
    )
    if message_id is None:
        message_id = f"<{uuid.uuid4().hex}@example.com>"
    if message_id:
        message["Message-ID"] = _ids(message_id)
    if in_reply_to:
        message["In-Reply-To"] = _ids(in_reply_to)
    if references:
        message["References"] = _ids(references)
    items = headers.items() if isinstance(headers, Mapping) else headers
    for name, value in items:
        message[name] = value
    if body is not None:
        message.set_content(body, charset=charset)
    if html is not None:
        if body is None:
            message.set_content(html, subtype="html", charset=charset)
        else:
            message.add_alternative(html, subtype="html", charset=charset)
    if body is None and html is None:
        message.set_content("", charset=charset)
    for item in attachments:
        _attach(message, item)
    return message.as_bytes()


def _attach(message: EmailMessage, item: AttachmentLike) -> None:
    if not isinstance(item, Attachment):
        item = Attachment(*item)
    maintype, _, subtype = item.content_type.partition("/")
    if item.inline:
        html_part = message.get_body(preferencelist=("html",))
        target = html_part if html_part is not None else message
        if html_part is not None:
            html_part.add_related(
                item.data,
                maintype=maintype,
                subtype=subtype,
                cid=f"<{item.content_id}>" if item.content_id else None,
                filename=item.filename,
                disposition="inline",
            )
            return
        target.add_attachment(
            item.data, maintype=maintype, subtype=subtype, filename=item.filename,
            disposition="inline", cid=f"<{item.content_id}>" if item.content_id else None,
        )  # fmt: skip
        return
    if maintype == "message" and subtype == "rfc822":
        forwarded = email.message_from_bytes(item.data, policy=email.policy.SMTP)
        message.add_attachment(forwarded, filename=item.filename)
        return
    message.add_attachment(item.data, maintype=maintype, subtype=subtype, filename=item.filename)


def big_message(size: int = TEN_MB, **fields: object) -> bytes:
    """A message carrying one attachment of `size` bytes (pseudo-random, so it does not
    compress; deterministic, so tests repeat), e.g. the issue's 10 MB message."""
    data = random.Random(size).randbytes(size)
    fields.setdefault("subject", "Scan of the contract")
    fields.setdefault("body", "The scan is attached.")
    attachments = [Attachment("scan.pdf", data, "application/pdf")]
    return make_message(attachments=attachments, **fields)  # type: ignore[arg-type]
