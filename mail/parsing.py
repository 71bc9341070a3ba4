"""A raw RFC 5322 message as the desk needs it (pure: the standard library and nh3, no Django).

`parse(raw)` gives a ParsedMessage or raises Unparseable. It never loses the message: what it
cannot read becomes the reason a message is kept in failed mail (mail.services.intake).

Real mail is not what the RFCs say, so the reading is tolerant, and deliberately done here
rather than by the email package's header objects (which turn undeclared 8-bit bytes into
U+FFFD and decode a declared gb2312 with the narrow codec):
- charsets: a declared gb2312/gbk is read as gb18030 (its superset), big5 falls back to cp950
  and big5hkscs, a declared iso-8859-1/us-ascii with 8-bit bytes is read as cp1252 (what
  Windows sends under that label); an unknown or missing charset tries utf-8, then gb18030,
  then cp1252 (which cannot fail). Decoding never raises.
- headers: RFC 2047 encoded words wherever they appear (also inside quotes and without the
  spaces around them, as Outlook and QQ Mail write them), adjacent words joined before
  decoding (a character split over two words), bad base64 padding repaired; raw 8-bit header
  bytes (GBK from QQ/Outlook) decoded by the same guess, the body's charset as a hint.
- file names: RFC 2231 (`filename*=`, continuations), RFC 2047 inside `filename=` (Outlook,
  Foxmail), raw 8-bit; path parts and control characters removed; a part without a name gets
  one from its type (image001.png, attachment002.pdf, the forwarded subject .eml).
- structure: the body is the text/plain and text/html parts that are not attachments
  (multipart/alternative: one of each; Apple Mail's text pieces around inline images are
  joined); everything else is a Part; message/rfc822 becomes an .eml Part.
- broken MIME (a missing closing boundary, bad base64, junk header lines) is read as far as
  it goes, and what was repaired is listed in `defects`; only a message with no headers, no
  From address, or binary bytes in its header block is Unparseable.
- HTML is sanitised with nh3 (basic formatting, links with rel="noopener noreferrer", images
  only as `cid:` references, no scripts, styles or event handlers); the text of an HTML-only
  message comes from the HTML (blocks, lists, links as "text (url)", blockquotes as ">").
- delivery-status reports (RFC 3464) are read into `report` (a DeliveryReport) for
  mail.loops; the returned message's Message-ID comes from its message/rfc822 or
  text/rfc822-headers part.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import email
import email.parser
import email.policy
import email.utils
import mimetypes
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.message import Message
from html.parser import HTMLParser
from urllib.parse import quote_from_bytes, unquote_to_bytes

import nh3

from .quoting import is_forward, split_reply


class Unparseable(Exception):
    """Not a message the desk can read (no headers, no sender, broken structure)."""


@dataclass(frozen=True)
class Part:
    """A file carried by the message: an attachment, or an inline image (`cid:`)."""

    filename: str
    content_type: str
    data: bytes
    content_id: str = ""  # without the angle brackets
    inline: bool = False


@dataclass(frozen=True)
class RecipientStatus:
    """One recipient's lines of a delivery-status report (RFC 3464 section 2.3)."""

    final_recipient: str  # the address, lower-cased ("rfc822;" removed)
    original_recipient: str = ""
    action: str = ""  # failed | delayed | delivered | relayed | expanded (lower-cased)
    status: str = ""  # e.g. "5.1.1"
    diagnostic: str = ""  # e.g. "smtp; 550 5.1.1 <x@y>: Recipient address rejected"
    remote_mta: str = ""


@dataclass(frozen=True)
class DeliveryReport:
    """A multipart/report; report-type=delivery-status, as mail.loops needs it."""

    reporting_mta: str = ""
    recipients: tuple[RecipientStatus, ...] = ()
    original_message_id: str = ""  # of the returned message or headers ("" when not included)
    original_headers: dict[str, str] = field(default_factory=dict)  # lower-cased, decoded


@dataclass(frozen=True)
class ParsedMessage:
    message_id: str  # without angle brackets; "" when the message has none
    in_reply_to: tuple[str, ...]  # Message-IDs, without angle brackets
    references: tuple[str, ...]
    sender: str  # the From address, lower-cased
    sender_name: str
    to: tuple[str, ...]  # addresses, lower-cased
    cc: tuple[str, ...]
    subject: str  # decoded (RFC 2047)
    date: str  # the Date header as written ("" when absent)
    text: str  # the whole plain-text body (from the HTML when there is no text part)
    html: str  # the HTML body, sanitised ("" when there is none)
    new_text: str  # what the sender wrote now: quoted history and signature folded away
    quoted_text: str  # what was folded away ("" when nothing)
    parts: tuple[Part, ...] = ()
    headers: dict[str, str] = field(default_factory=dict)  # lower-cased name -> first value
    return_path: str = ""  # the envelope sender when known ("" for the null sender <>)
    # Added by the parsing work (all with defaults, so the fixed interface holds):
    reply_to: tuple[str, ...] = ()  # Reply-To addresses, lower-cased
    names: dict[str, str] = field(default_factory=dict)  # address -> display name (From/To/Cc)
    report: DeliveryReport | None = None  # the delivery-status report, when this is one
    defects: tuple[str, ...] = ()  # what was broken and read anyway ("missing end boundary")

    def thread_ids(self) -> tuple[str, ...]:
        """The Message-IDs this message answers, nearest first: In-Reply-To, then References
        from the last (the parent) to the first (the thread's start)."""
        seen: list[str] = []
        for value in (*self.in_reply_to, *reversed(self.references)):
            if value and value not in seen:
                seen.append(value)
        return tuple(seen)


_ID = re.compile(r"<([^<>\s]+)>")


def message_ids(value: str | None) -> tuple[str, ...]:
    """The Message-IDs in a header's value, without angle brackets (a bare one is taken
    whole, as some clients write it)."""
    if not value:
        return ()
    found = _ID.findall(str(value))
    if not found and str(value).strip() and " " not in str(value).strip():
        found = [str(value).strip()]
    return tuple(found)


def parse(raw: bytes) -> ParsedMessage:
    """The message as the desk reads it; Unparseable (with the reason, which becomes the
    failed mail's) for no headers, no From address, or binary bytes in the header block.
    Any other failure while reading is also Unparseable, its reason starting with INTERNAL:
    the message is kept, not lost to a bug."""
    if not raw or not raw.strip():
        raise Unparseable("empty message")
    _check_header_block(raw)
    try:
        message = email.message_from_bytes(raw, policy=email.policy.compat32)
    except Exception as exc:  # noqa: BLE001 - the email package raises many kinds
        raise Unparseable(f"cannot read the message: {exc}") from exc
    if not message.keys():
        raise Unparseable("no headers")
    try:
        return _read(message)
    except Unparseable:
        raise
    except RecursionError as exc:
        raise Unparseable("parts nested too deeply") from exc
    except Exception as exc:  # noqa: BLE001 - a message is never lost to a reading bug
        raise Unparseable(f"{INTERNAL}: {type(exc).__name__}: {exc}") from exc


# The reason given when reading failed on a bug rather than on the message (tests look for it).
INTERNAL = "internal error reading the message"


def _read(message: Message) -> ParsedMessage:
    hint = _charset_hint(message)
    headers = _Headers(message, hint)
    sender_name, sender = (headers.addresses("from") or [("", "")])[0]
    if not sender:
        raise Unparseable("no From address")
    reader = _BodyReader(hint)
    reader.read(message)
    text = "\n\n".join(t for t in reader.texts if t.strip()).strip("\n")
    html = "\n".join(reader.htmls)
    if not text.strip() and html:
        text = html_to_text(html)
    clean_html = sanitize_html(html) if html else ""
    subject = headers.first("subject")
    if is_forward(subject):
        new_text, quoted = text.strip("\n"), ""
    else:
        new_text, quoted = split_reply(text)
    names: dict[str, str] = {}
    for name in ("from", "to", "cc"):
        for display, address in headers.addresses(name):
            if display and address not in names:
                names[address] = display
    return ParsedMessage(
        message_id=(message_ids(headers.first("message-id")) or ("",))[0],
        in_reply_to=message_ids(headers.first("in-reply-to")),
        references=message_ids(" ".join(headers.all("references"))),
        sender=sender,
        sender_name=sender_name,
        to=tuple(a for _, a in headers.addresses("to")),
        cc=tuple(a for _, a in headers.addresses("cc")),
        subject=subject,
        date=headers.first("date"),
        text=text,
        html=clean_html,
        new_text=new_text,
        quoted_text=quoted,
        parts=tuple(reader.parts),
        headers=headers.firsts(),
        return_path=email.utils.parseaddr(headers.first("return-path"))[1].lower(),
        reply_to=tuple(a for _, a in headers.addresses("reply-to")),
        names=names,
        report=reader.report,
        defects=tuple(dict.fromkeys([*_defects(message), *reader.defects])),
    )


_HEADER_LINE = re.compile(rb"^(From |[\x21-\x39\x3b-\x7e]+[ \t]*:)")


def _check_header_block(raw: bytes) -> None:
    """Binary bytes are not a message: the first line must look like a header, and the
    header block must hold no NUL or other control bytes."""
    start = raw.lstrip(b"\r\n\t ")
    if not _HEADER_LINE.match(start):
        raise Unparseable("no headers")
    end = re.search(rb"\r?\n\r?\n", start)
    block = start[: end.start()] if end else start[:65536]
    if re.search(rb"[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f]", block):
        raise Unparseable("binary data in the header block")


# --- charsets ---------------------------------------------------------------------------------

_SUPERSETS = {
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "cp936": "gb18030",
    "euc_cn": "gb18030",
    "gb18030": "gb18030",
    "iso8859_1": "cp1252",
    "latin_1": "cp1252",
    "ascii": "cp1252",
    "cp1252": "cp1252",
    "big5": "big5",
    "cp950": "big5",
    "big5hkscs": "big5",
    "iso2022_jp": "iso2022_jp",
}
_FALLBACKS = {
    "big5": ("big5", "cp950", "big5hkscs"),
    "iso2022_jp": ("iso2022_jp", "iso2022_jp_ext", "iso2022_jp_2004", "iso2022_jp_3"),
}
# Codecs Python has that are not charsets anyone sends: never let a header choose them.
_NOT_CHARSETS = {"idna", "punycode", "unicode_escape", "raw_unicode_escape", "undefined", "mbcs"}


def _codec(charset: str | None) -> str | None:
    """The Python codec for a declared charset (its superset where mail needs one)."""
    if not charset:
        return None
    name = charset.strip().strip("\"'").lower()
    name = name.split("*", 1)[0]  # RFC 2231 language: utf-8*en
    if name in {"x-gbk", "gb_2312-80", "x-euc-cn", "csgb2312", "x-gb2312"}:
        return "gb18030"
    if name in {"x-x-big5", "x-big5", "big5-hkscs"}:
        return "big5"
    if not name.isascii() or not name.isprintable():
        return None
    try:
        info = codecs.lookup(name)
    except (LookupError, ValueError):
        return None
    if info.name in _NOT_CHARSETS or not getattr(info, "_is_text_encoding", True):
        return None
    codec = info.name.replace("-", "_")
    return _SUPERSETS.get(codec, info.name)


def _cp1252_errors(error: UnicodeError) -> tuple[str, int]:
    """The five bytes cp1252 leaves undefined read as their Latin-1 characters."""
    assert isinstance(error, UnicodeDecodeError)
    return error.object[error.start : error.end].decode("latin-1"), error.end


codecs.register_error("ticketdesk-cp1252", _cp1252_errors)


def decode_bytes(data: bytes, charset: str | None = None) -> str:
    """Text from bytes in a declared (or no) charset; never raises (see the module doc)."""
    codec = _codec(charset)
    if not re.search(rb"[\x80-\xff\x1b]", data):
        return data.decode("ascii")
    ascii_label = codec == "cp1252" and bool(charset) and "ascii" in str(charset).lower()
    if codec is None or codec == "utf-8" or ascii_label:
        # Nothing (trustworthy) declared: UTF-8, then Chinese, then what Windows sends.
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            pass
        guessed = _guess_chinese(data)
        if guessed is not None:
            return guessed
        if codec == "utf-8" and _UTF8_SEQUENCE.search(data):
            return data.decode("utf-8", errors="replace")  # UTF-8 with a few broken bytes
        return data.decode("cp1252", errors="ticketdesk-cp1252")
    for candidate in (codec, *_FALLBACKS.get(codec, ()), "utf-8"):
        try:
            return data.decode(candidate)
        except (UnicodeDecodeError, LookupError):
            continue
    if codec == "cp1252":
        return data.decode("cp1252", errors="ticketdesk-cp1252")
    try:
        return data.decode(codec, errors="replace")
    except LookupError:
        return data.decode("cp1252", errors="ticketdesk-cp1252")


_UTF8_SEQUENCE = re.compile(
    rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}"
)


def _guess_chinese(data: bytes) -> str | None:
    """Undeclared bytes read as GB18030 only when they look like Chinese: at least half of
    the characters are common (GB2312) ones and some come two or more in a row. Latin-1 text
    also decodes as GB18030 ("Ça" is one character there), but its accents stand alone."""
    try:
        text = data.decode("gb18030")
    except UnicodeDecodeError:
        return None
    wide = [c for c in text if ord(c) > 0x7F]
    if not wide:
        return text
    common = sum(1 for c in wide if _in_gb2312(c))
    runs = re.findall(r"[^\x00-\x7f]{2,}", text)
    fullwidth = any("\u3000" <= c <= "\u303f" or "\uff00" <= c <= "\uffef" for c in wide)
    if common * 2 >= len(wide) and (runs or fullwidth):
        return text
    return None


def _in_gb2312(character: str) -> bool:
    try:
        character.encode("gb2312")
    except UnicodeEncodeError:
        return False
    return True


def _raw_bytes(value: str) -> bytes:
    """The bytes behind a header string the parser read with surrogateescape (real
    non-ASCII characters, from text that was already decoded, as UTF-8)."""
    return value.encode("utf-8", errors="surrogateescape")


def _charset_hint(message: Message) -> str | None:
    """The first charset the message declares: raw 8-bit headers are usually in it."""
    for part in message.walk():
        charset = _params(_raw(part, "content-type") or "").get("charset")
        if charset:
            return charset
    return None


# --- headers ----------------------------------------------------------------------------------

_ENCODED_WORD = re.compile(r"=\?([^?\s]+)\?([bBqQ])\?([^?]*)\?=")


def decode_header(value: str, hint: str | None = None) -> str:
    """A header value as text: unfolded, RFC 2047 words decoded however they are written,
    raw 8-bit bytes decoded by guess (`hint` first after UTF-8)."""
    value = re.sub(r"\r?\n(?=[ \t])", "", value).replace("\r", "").replace("\n", "")
    pieces: list[tuple[str | None, bytes]] = []  # (charset of an encoded word | None, bytes)
    position = 0
    for match in _ENCODED_WORD.finditer(value):
        between = value[position : match.start()]
        if between and not (between.isspace() and pieces and pieces[-1][0] is not None):
            pieces.append((None, _raw_bytes(between)))
        charset, encoding, encoded = match.groups()
        data = _decode_word(encoding.lower(), encoded)
        if pieces and pieces[-1][0] is not None and pieces[-1][0] == charset.lower():
            pieces[-1] = (pieces[-1][0], pieces[-1][1] + data)
        else:
            pieces.append((charset.lower(), data))
        position = match.end()
    if position < len(value):
        pieces.append((None, _raw_bytes(value[position:])))
    out = []
    for charset, data in pieces:
        if charset is None:
            out.append(_decode_raw_header(data, hint))
        else:
            out.append(decode_bytes(data, charset))
    text = "".join(out).replace("\ufeff", "")
    return "".join(c if c.isprintable() or c == "\t" else " " for c in text).strip()


def _decode_word(encoding: str, encoded: str) -> bytes:
    if encoding == "q":
        return binascii.a2b_qp(encoded.encode("ascii", "replace"), header=True)
    compact = re.sub(r"[^A-Za-z0-9+/]", "", encoded)
    if len(compact) % 4 == 1:
        compact = compact[:-1]
    try:
        return base64.b64decode(compact + "=" * (-len(compact) % 4))
    except (binascii.Error, ValueError):
        return b""


def _decode_raw_header(data: bytes, hint: str | None) -> str:
    if b"\x1b$" in data or b"\x1b(" in data:
        try:
            return data.decode("iso2022_jp_2004")
        except UnicodeDecodeError:
            pass
    if data.isascii():
        return data.decode("ascii")
    for candidate in dict.fromkeys(["utf-8", _codec(hint) or "utf-8"]):
        if candidate == "cp1252":
            continue  # cp1252 accepts anything: only as the last resort
        try:
            return data.decode(candidate)
        except (UnicodeDecodeError, LookupError):
            continue
    guessed = _guess_chinese(data)
    if guessed is not None:
        return guessed
    return data.decode("cp1252", errors="ticketdesk-cp1252")


def _raw(part: Message, name: str) -> str | None:
    """A header's value exactly as written (folding and all), or None."""
    name = name.lower()
    for key, value in part.raw_items():
        if key.lower() == name:
            return str(value)
    return None


class _Headers:
    def __init__(self, message: Message, hint: str | None):
        self._items = [(str(k).lower(), str(v)) for k, v in message.raw_items()]
        self._hint = hint

    def all(self, name: str) -> list[str]:
        return [decode_header(v, self._hint) for k, v in self._items if k == name]

    def first(self, name: str) -> str:
        values = self.all(name)
        return " ".join(values[0].split()) if values else ""

    def firsts(self) -> dict[str, str]:
        found: dict[str, str] = {}
        for key, value in self._items:
            if key not in found:
                found[key] = " ".join(decode_header(value, self._hint).split())
        return found

    def addresses(self, name: str) -> list[tuple[str, str]]:
        """(display name, address) pairs; the addresses are split before the names are
        decoded, so a decoded name holding a comma or "<" cannot break them apart."""
        raw_values = [re.sub(r"\r?\n(?=[ \t])", "", v) for k, v in self._items if k == name]
        found = []
        for display, address in email.utils.getaddresses(raw_values):
            address = decode_header(address).strip().lower()
            if "@" not in address or " " in address:
                continue
            found.append((decode_header(display, self._hint).strip("\"' "), address))
        return found


_PARAM = re.compile(
    r"""\s*([^\s=;"]+)\s*=\s*("(?:[^"\\]|\\.)*"?|[^;]*)""",
)


def _params(value: str, hint: str | None = None) -> dict[str, str]:
    """A Content-Type/Content-Disposition value's parameters, lower-cased names, decoded:
    RFC 2231 (`name*=charset'lang'%xx`, continuations `name*0*=`), RFC 2047 words inside
    the value, quoted strings, raw 8-bit bytes. The type itself is under ""."""
    value = re.sub(r"\r?\n(?=[ \t])", "", value)
    head, _, rest = value.partition(";")
    params: dict[str, str] = {"": head.strip().lower()}
    pieces: dict[str, dict[int, tuple[bool, str]]] = {}
    for match in _PARAM.finditer(rest):
        name, raw_value = match.group(1).lower(), match.group(2).strip()
        if raw_value.startswith('"'):
            raw_value = re.sub(r"\\(.)", r"\1", raw_value[1:].removesuffix('"'))
        extended = name.endswith("*")
        name = name.rstrip("*")
        number = 0
        if "*" in name:
            name, _, index = name.partition("*")
            number = int(index) if index.isdigit() else 0
        numbered = pieces.setdefault(name, {})
        if number not in numbered or (extended and not numbered[number][0]):
            numbered[number] = (extended, raw_value)  # filename*= wins over filename=
    for name, numbered in pieces.items():
        ordered = [numbered[n] for n in sorted(numbered)]
        if any(extended for extended, _ in ordered):
            params[name] = _rfc2231(ordered, hint)
        else:
            params[name] = decode_header("".join(v for _, v in ordered), hint)
    return params


def _rfc2231(ordered: list[tuple[bool, str]], hint: str | None) -> str:
    """The segments joined before the %xx are undone, so an escape split over two segments
    (which some writers do) still reads."""
    charset = None
    encoded = ""
    for position, (extended, value) in enumerate(ordered):
        if extended:
            if position == 0 and value.count("'") >= 2:
                charset, _, value = value.split("'", 2)
            encoded += value
        else:
            encoded += quote_from_bytes(_raw_bytes(value), safe="")
    return decode_bytes(unquote_to_bytes(_raw_bytes(encoded)), charset or hint)


# --- bodies and parts -------------------------------------------------------------------------

_SIGNATURES = {
    "application/pkcs7-signature",
    "application/x-pkcs7-signature",
    "application/pgp-signature",
}
# Parts of a delivery report get names that say what they are.
_REPORT_NAMES = {
    "message/delivery-status": "delivery-status.txt",
    "message/global-delivery-status": "delivery-status.txt",
    "text/rfc822-headers": "returned-headers.txt",
}
_EXTENSIONS = {
    "image/jpeg": ".jpg",
    "image/png": ".png",
    "image/gif": ".gif",
    "text/plain": ".txt",
    "text/html": ".html",
    "message/rfc822": ".eml",
    "application/octet-stream": ".bin",
    "text/calendar": ".ics",
    "message/delivery-status": ".txt",
    "text/rfc822-headers": ".txt",
}


class _BodyReader:
    """Walks the MIME tree once: body texts and HTML, Parts, the delivery report."""

    def __init__(self, hint: str | None):
        self.hint = hint
        self.texts: list[str] = []
        self.htmls: list[str] = []
        self.parts: list[Part] = []
        self.report: DeliveryReport | None = None
        self.defects: list[str] = []
        self._counts: dict[str, int] = {}

    def read(self, part: Message, depth: int = 0) -> None:
        if depth > 30:
            self.defects.append("parts nested too deeply")
            return
        content_type = self._type(part)
        disposition = _params(_raw(part, "content-disposition") or "", self.hint)
        if content_type == "multipart/alternative" and isinstance(part.get_payload(), list):
            self._alternative(part, depth)
        elif content_type.startswith("multipart/") and isinstance(part.get_payload(), list):
            children = [c for c in part.get_payload() if isinstance(c, Message)]
            for child in children:
                if content_type == "multipart/signed" and self._type(child) in _SIGNATURES:
                    continue  # S/MIME and PGP signatures are no file anyone sent us
                self.read(child, depth + 1)
            if content_type == "multipart/report":
                self._report(part, children)
        elif content_type.startswith("multipart/"):
            self.texts.append(self._text(part))  # no boundary: the whole body reads as text
        elif content_type == "message/rfc822":
            self._forwarded(part)
        elif self._is_body(part, content_type, disposition):
            body = self._text(part)
            if content_type == "text/html":
                self.htmls.append(body)
            else:
                self.texts.append(body)
        else:
            self._attachment(part, content_type, disposition)

    def _type(self, part: Message) -> str:
        content_type = _params(_raw(part, "content-type") or "").get("", "")
        if not re.fullmatch(r"[a-z0-9!#$&^_.+-]+/[a-z0-9!#$&^_.+-]+", content_type):
            return "multipart/mixed" if part.is_multipart() else "text/plain"
        return content_type

    def _alternative(self, part: Message, depth: int) -> None:
        children = [c for c in part.get_payload() if isinstance(c, Message)]
        best_text = ""
        best_html = ""
        for child in children:
            inner = _BodyReader(self.hint)
            inner._counts = self._counts
            inner.read(child, depth + 1)
            text = "\n\n".join(t for t in inner.texts if t.strip())
            html = "\n".join(inner.htmls)
            if text.strip() and not best_text:
                best_text = text
            if html.strip():
                best_html = html  # the last alternative is the richest (RFC 2046)
            self.parts.extend(inner.parts)
            self.defects.extend(inner.defects)
            self.report = self.report or inner.report
        if best_text:
            self.texts.append(best_text)
        if best_html:
            self.htmls.append(best_html)

    def _is_body(self, part: Message, content_type: str, disposition: dict[str, str]) -> bool:
        if content_type not in {"text/plain", "text/html"}:
            return False
        if disposition.get("") == "attachment":
            return False
        return not (disposition.get("filename") or self._params(part).get("name"))

    def _params(self, part: Message) -> dict[str, str]:
        return _params(_raw(part, "content-type") or "", self.hint)

    def _payload(self, part: Message) -> bytes:
        try:
            data = part.get_payload(decode=True)
        except Exception:  # noqa: BLE001 - a broken encoding reads as its raw bytes
            self.defects.append("undecodable payload")
            payload = part.get_payload()
            return _raw_bytes(payload) if isinstance(payload, str) else b""
        if isinstance(data, bytes):
            return data
        return b""

    def _text(self, part: Message) -> str:
        data = self._payload(part)
        params = self._params(part)
        charset = params.get("charset")
        if not charset and self._type(part) == "text/html":
            meta = re.search(rb"<meta[^>]+charset=[\"']?([A-Za-z0-9_.:-]+)", data[:4096], re.I)
            charset = meta.group(1).decode("ascii") if meta else None
        text = decode_bytes(data, charset).replace("\r\n", "\n").replace("\r", "\n")
        text = text.replace("\ufeff", "")  # Apple Mail and Notepad leave byte-order marks
        if params.get("format", "").lower() == "flowed":
            text = unflow(text, delsp=params.get("delsp", "").lower() == "yes")
        return text

    def _filename(self, part: Message, disposition: dict[str, str]) -> str:
        name = disposition.get("filename") or self._params(part).get("name") or ""
        return safe_filename(name)

    def _default_name(self, content_type: str, stem: str | None = None) -> str:
        extension = _EXTENSIONS.get(content_type) or mimetypes.guess_extension(content_type)
        extension = extension or ".bin"
        if stem:
            return safe_filename(re.sub(r"[\\/:*?\"<>|]", "_", stem) + extension)
        kind = "image" if content_type.startswith("image/") else "attachment"
        self._counts[kind] = self._counts.get(kind, 0) + 1
        return f"{kind}{self._counts[kind]:03d}{extension}"

    def _attachment(self, part: Message, content_type: str, disposition: dict[str, str]) -> None:
        if content_type == "message/delivery-status" or content_type.startswith("multipart/"):
            data = _part_bytes(part)
        else:
            data = self._payload(part)
        content_id = (message_ids(decode_header(_raw(part, "content-id") or "")) or ("",))[0]
        inline = disposition.get("") == "inline" or (not disposition.get("") and bool(content_id))
        self.parts.append(
            Part(
                filename=self._filename(part, disposition)
                or _REPORT_NAMES.get(content_type)
                or self._default_name(content_type),
                content_type=content_type,
                data=data,
                content_id=content_id,
                inline=inline,
            )
        )

    def _forwarded(self, part: Message) -> None:
        payload = part.get_payload()
        inner = payload[0] if isinstance(payload, list) and payload else None
        if isinstance(inner, Message):
            data = _part_bytes(inner)
            subject = decode_header(_raw(inner, "subject") or "", self.hint)
        else:
            data = self._payload(part)
            subject = ""
        disposition = _params(_raw(part, "content-disposition") or "", self.hint)
        filename = self._filename(part, disposition)
        if filename and not filename.lower().endswith(".eml"):
            filename += ".eml"
        self.parts.append(
            Part(
                filename=filename or self._default_name("message/rfc822", subject or "message"),
                content_type="message/rfc822",
                data=data,
                inline=False,
            )
        )

    def _report(self, part: Message, children: list[Message]) -> None:
        params = self._params(part)
        if params.get("report-type", "").lower() != "delivery-status":
            return
        reporting_mta = ""
        recipients: list[RecipientStatus] = []
        original: dict[str, str] = {}
        for child in children:
            kind = self._type(child)
            if kind in {"message/delivery-status", "message/global-delivery-status"}:
                for block in _status_blocks(child):
                    if "final-recipient" in block or "original-recipient" in block:
                        recipients.append(_recipient(block))
                    elif "reporting-mta" in block:
                        reporting_mta = _after_type(block["reporting-mta"])
            elif kind in {"message/rfc822", "message/global"}:
                payload = child.get_payload()
                if isinstance(payload, list) and payload and isinstance(payload[0], Message):
                    original = _Headers(payload[0], self.hint).firsts()
            elif kind in {"text/rfc822-headers", "message/global-headers"}:
                headers = email.parser.BytesHeaderParser(policy=email.policy.compat32).parsebytes(
                    self._payload(child).lstrip()
                )
                original = _Headers(headers, self.hint).firsts()
        self.report = DeliveryReport(
            reporting_mta=reporting_mta,
            recipients=tuple(recipients),
            original_message_id=(message_ids(original.get("message-id")) or ("",))[0],
            original_headers=original,
        )


def _part_bytes(part: Message) -> bytes:
    try:
        return part.as_bytes()
    except Exception:  # noqa: BLE001 - the generator refuses some broken headers: write it raw
        return _raw_part(part)


def _raw_part(part: Message) -> bytes:
    """A part as it was read: its headers as written, then its body."""
    head = b"".join(_raw_bytes(f"{name}: {value}") + b"\n" for name, value in part.raw_items())
    payload = part.get_payload()
    if not isinstance(payload, list):
        return head + b"\n" + _raw_bytes(str(payload or ""))
    children = [c for c in payload if isinstance(c, Message)]
    boundary = part.get_boundary() if part.is_multipart() else None
    if boundary and _params(_raw(part, "content-type") or "").get("", "").startswith("multipart/"):
        marker = b"--" + _raw_bytes(boundary)
        body = b"".join(marker + b"\n" + _raw_part(c) + b"\n" for c in children)
        return head + b"\n" + body + marker + b"--\n"
    return head + b"\n" + b"\n".join(_raw_part(c) for c in children)


def _status_blocks(part: Message) -> list[dict[str, str]]:
    """The header blocks of a message/delivery-status part (per message, per recipient)."""
    payload = part.get_payload()
    blocks: list[dict[str, str]] = []
    if isinstance(payload, list):
        for block in payload:
            if isinstance(block, Message):
                blocks.append(_Headers(block, None).firsts())
        if any(blocks):
            return blocks
    # Some reporters base64-encode the part, or the parser kept it as one text.
    data = part.get_payload(decode=True)
    text = decode_bytes(data if isinstance(data, bytes) else b"")
    for chunk in re.split(r"\n\s*\n", text.replace("\r\n", "\n")):
        parsed = email.parser.HeaderParser(policy=email.policy.compat32).parsestr(chunk.strip())
        found = _Headers(parsed, None).firsts()
        if found:
            blocks.append(found)
    return blocks


def _after_type(value: str) -> str:
    """ "rfc822; x@y" -> "x@y" (the address-type and the MTA-name-type prefixes)."""
    return value.split(";", 1)[1].strip() if ";" in value else value.strip()


def _recipient(block: dict[str, str]) -> RecipientStatus:
    final = _after_type(block.get("final-recipient", "") or block.get("original-recipient", ""))
    status = re.search(r"\b[245]\.\d{1,3}\.\d{1,3}\b", block.get("status", ""))
    return RecipientStatus(
        final_recipient=final.strip("<>").lower(),
        original_recipient=_after_type(block.get("original-recipient", "")).strip("<>").lower(),
        action=block.get("action", "").strip().lower(),
        status=status.group(0) if status else block.get("status", "").strip(),
        diagnostic=block.get("diagnostic-code", "").strip(),
        remote_mta=_after_type(block.get("remote-mta", "")),
    )


def _defects(message: Message) -> Iterator[str]:
    for part in message.walk():
        for defect in getattr(part, "defects", []):
            yield _DEFECT_NAMES.get(type(defect).__name__, type(defect).__name__)


_DEFECT_NAMES = {
    "CloseBoundaryNotFoundDefect": "missing end boundary",
    "StartBoundaryNotFoundDefect": "missing start boundary",
    "NoBoundaryInMultipartDefect": "multipart without a boundary",
    "MissingHeaderBodySeparatorDefect": "junk in the header block",
    "InvalidBase64PaddingDefect": "bad base64",
    "InvalidBase64CharactersDefect": "bad base64",
    "InvalidBase64LengthDefect": "bad base64",
    "MultipartInvariantViolationDefect": "multipart without parts",
}


def safe_filename(name: str) -> str:
    """A file name that is only a name: no directories, no control characters, at most 200
    characters (the extension kept)."""
    name = unicodedata.normalize("NFC", name)
    name = re.split(r"[\\/]", name)[-1]
    name = "".join(c for c in name if c.isprintable()).strip().strip(".")
    if len(name) > 200:
        stem, dot, extension = name.rpartition(".")
        if dot and len(extension) <= 10:
            name = stem[: 200 - len(extension) - 1] + "." + extension
        else:
            name = name[:200]
    return name


def unflow(text: str, *, delsp: bool = False) -> str:
    """RFC 3676 format=flowed: soft line breaks (a trailing space) joined, space-stuffing
    removed; the signature line "-- " and quoted depths kept."""
    out: list[str] = []
    current: str | None = None
    current_depth = 0
    for line in text.split("\n"):
        depth = len(line) - len(line.lstrip(">"))
        content = line[depth:]
        if content.startswith(" "):
            content = content[1:]  # space-stuffing
        if current is not None and depth != current_depth:
            out.append(">" * current_depth + (" " if current_depth else "") + current)
            current = None
        flowed = content.endswith(" ") and content != "-- "
        if flowed and delsp:
            content = content[:-1]
        current = content if current is None else current + content
        current_depth = depth
        if not flowed:
            out.append(">" * depth + (" " if depth else "") + current)
            current = None
    if current is not None:
        out.append(">" * current_depth + (" " if current_depth else "") + current)
    return "\n".join(out)


# --- HTML -------------------------------------------------------------------------------------

_TAGS = {
    "a", "abbr", "b", "blockquote", "br", "caption", "code", "col", "colgroup", "dd", "del",
    "div", "dl", "dt", "em", "font", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img",
    "ins", "li", "ol", "p", "pre", "q", "s", "small", "span", "strike", "strong", "sub", "sup",
    "table", "tbody", "td", "tfoot", "th", "thead", "tr", "u", "ul",
}  # fmt: skip
_ATTRIBUTES = {
    "a": {"href", "title"},
    "img": {"src", "alt", "width", "height", "title"},
    "td": {"colspan", "rowspan"},
    "th": {"colspan", "rowspan"},
    "ol": {"start"},
}


def _keep_attribute(element: str, attribute: str, value: str) -> str | None:
    if element == "img" and attribute == "src":
        return value if value.strip().lower().startswith("cid:") else None
    return value


_CLEANER = nh3.Cleaner(
    tags=_TAGS,
    clean_content_tags={"script", "style", "title", "head", "noscript", "template"},
    attributes=_ATTRIBUTES,
    attribute_filter=_keep_attribute,
    link_rel="noopener noreferrer",
    url_schemes={"http", "https", "mailto", "cid", "tel"},
    strip_comments=True,
)
# nh3 writes every attribute as name="value" with `"` escaped: a whole img tag is this.
_IMG = re.compile(r'<img((?:\s+[a-zA-Z_:][-a-zA-Z0-9_:.]*="[^"]*")*)\s*/?>')


def sanitize_html(html: str) -> str:
    """Display-safe HTML: basic formatting, links with rel="noopener noreferrer", images only
    as cid: references (remote images, which track the reader, are dropped)."""
    cleaned = _CLEANER.clean(html).strip()
    return _IMG.sub(lambda m: m.group(0) if re.search(r'\ssrc="', m.group(1)) else "", cleaned)


_BLOCKS = {
    "address", "article", "aside", "blockquote", "center", "dd", "div", "dl", "dt",
    "fieldset", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header",
    "hr", "li", "main", "nav", "ol", "p", "pre", "section", "table", "tr", "ul",
}  # fmt: skip
_PARAGRAPHS = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "table", "ul", "ol", "blockquote", "pre"}
_SKIP = {"script", "style", "head", "title", "noscript", "template", "xml"}


class _TextWriter(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = []
        self.line = ""
        self.breaks = 0  # newlines owed before the next text
        self.quote = 0
        self.pre = 0
        self.skip = 0
        self.lists: list[list[int | None]] = []  # per open list: [number or None]
        self.links: list[str] = []  # the open links' href
        self.link_text: list[str] = []
        self.p_gap = 2  # the open paragraph's gap (1 for Outlook's MsoNormal lines)
        self.break_quote = 0

    def _newline(self, count: int) -> None:
        if self.line or self.lines:
            # A blank line between quote levels belongs to the outer one.
            self.break_quote = min(self.break_quote, self.quote) if self.breaks else self.quote
            self.breaks = max(self.breaks, count)

    def _flush_breaks(self) -> None:
        if self.breaks and (self.line or self.lines):
            self.lines.append(self.line.rstrip())
            for _ in range(self.breaks - 1):
                self.lines.append(("> " * min(self.break_quote, self.quote)).rstrip())
            self.line = ""
        self.breaks = 0

    def _write(self, text: str) -> None:
        if (self.breaks or not self.line) and not self.pre and not text.strip(" \t"):
            return  # spaces at the start of a line are layout, not text
        self._flush_breaks()
        if not self.line:
            self.line = "> " * self.quote
            text = text.lstrip(" \t") if not self.pre else text
        self.line += text
        if self.link_text:
            self.link_text[-1] += text

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP:
            self.skip += 1
            return
        if self.skip:
            return
        if tag == "p":
            self.p_gap = self._gap(tag, attrs)
        if tag in _BLOCKS:
            self._newline(self._gap(tag, attrs))
        if tag == "br":
            self._flush_breaks()
            if self.line or self.lines:
                self.lines.append(self.line.rstrip() or ("> " * self.quote).rstrip())
            self.line = ""
        elif tag == "blockquote":
            self.quote += 1
        elif tag == "pre":
            self.pre += 1
        elif tag in {"ul", "ol"}:
            self.lists.append([1 if tag == "ol" else None])
        elif tag == "li":
            marker = "- "
            if self.lists and self.lists[-1][0] is not None:
                number = self.lists[-1][0]
                marker = f"{number}. "
                self.lists[-1][0] = number + 1
            self._write("  " * max(0, len(self.lists) - 1) + marker)
        elif tag == "hr":
            self._write("-" * 32)
            self._newline(1)
        elif tag in {"td", "th"} and self.line.strip(" >"):
            self._write("\t")
        elif tag == "a":
            self.links.append(dict(attrs).get("href") or "")
            self.link_text.append("")
        elif tag == "img":
            alt = (dict(attrs).get("alt") or "").strip()
            if alt:
                self._write(f"[{alt}]")

    @staticmethod
    def _gap(tag: str, attrs: list[tuple[str, str | None]]) -> int:
        """Newlines around a block: a paragraph gets a blank line, except Outlook's
        MsoNormal paragraphs, which are its lines (a blank one holds a lone &nbsp;)."""
        if tag == "p" and "msonormal" in (dict(attrs).get("class") or "").lower():
            return 1
        return 2 if tag in _PARAGRAPHS else 1

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            self.skip = max(0, self.skip - 1)
            return
        if self.skip:
            return
        if tag == "a" and self.links:
            href = self.links.pop()
            text = self.link_text.pop().strip()
            target = href.removeprefix("mailto:")
            if href and not href.lower().startswith(("cid:", "#", "javascript:")):
                if target != text and href != text:
                    self._write(f" ({target})" if text else target)
        elif tag == "blockquote":
            self._newline(2)
            self.quote = max(0, self.quote - 1)
        elif tag == "pre":
            self.pre = max(0, self.pre - 1)
        elif tag in {"ul", "ol"} and self.lists:
            self.lists.pop()
        if tag in _BLOCKS:
            self._newline(self.p_gap if tag == "p" else 2 if tag in _PARAGRAPHS else 1)

    def handle_data(self, data: str) -> None:
        if self.skip:
            return
        if self.pre:
            for index, chunk in enumerate(data.split("\n")):
                if index:
                    self.breaks = max(self.breaks, 1)
                    if not self.line and not self.lines:
                        self.lines.append("")
                if chunk:
                    self._write(chunk)
            return
        text = re.sub(r"[ \t\r\n\f]+", " ", data)
        if not text.strip() and "\xa0" in text:
            self._write("\xa0")  # a line that holds only &nbsp; is a blank line
        elif text.strip() or (self.line and not self.line.endswith(" ")):
            if text == " " and not self.line:
                return
            self._write(text.replace("\xa0", " "))

    def text(self) -> str:
        self.close()
        lines = [*self.lines, self.line.rstrip()]
        out: list[str] = []
        for line in lines:
            line = line.rstrip()
            if not line.strip("> ") and out and not out[-1].strip("> "):
                continue
            out.append(line)
        return "\n".join(out).strip("\n")


def html_to_text(html: str) -> str:
    """Readable text from HTML: blocks and <br> as line breaks, lists as "- "/"1. ", links
    as "text (url)", blockquotes as "> " lines (so quoted history folds), entities
    unescaped, scripts, styles and the head dropped."""
    writer = _TextWriter()
    try:
        writer.feed(html)
        return writer.text()
    except Exception:  # noqa: BLE001 - html.parser is lenient; this is the last resort
        return re.sub(r"\s+", " ", re.sub(r"<[^>]*>", " ", html)).strip()
