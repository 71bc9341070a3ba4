"""Mail no ticket and no answer may come from (pure): automatic messages and delivery
reports. RFC 3834 (Auto-Submitted), the de-facto Precedence, X-Autoreply and Microsoft's
X-Auto-Response-Suppress headers, and RFC 3464 delivery-status reports (a bounce of one of
our own messages is recorded on its ticket: mail.services.intake).

Checked in this order, the first that matches wins:
1. a delivery-status report (multipart/report; report-type=delivery-status, read by
   mail.parsing into `ParsedMessage.report`): a Bounce when a recipient failed, Automatic
   when it only reports a delay or a delivery (no failure to record);
2. the common non-standard bounce: From MAILER-DAEMON/postmaster (or Return-Path <>, or an
   X-Failed-Recipients header) with a bounce subject ("Undelivered Mail Returned to Sender",
   "Delivery Status Notification (Failure)", "Mail delivery failed", "Undeliverable", 退信):
   a Bounce read best-effort from the text and the returned headers or message;
3. Auto-Submitted other than "no"; X-Autoreply, X-Autorespond, X-Auto-Response-Suppress
   (any value); Precedence bulk/junk/list/auto_reply; List-Id or List-Unsubscribe (a mailing
   list or a newsletter); any other multipart/report (read receipts, abuse reports); From
   MAILER-DAEMON or Return-Path <> without a bounce subject: Automatic.
"""

from __future__ import annotations

import email.parser
import email.policy
import re
from dataclasses import dataclass

from .parsing import ParsedMessage, message_ids


@dataclass(frozen=True)
class Automatic:
    """Sent by a machine (an out-of-office, a list, a notification): no ticket, no answer."""

    reason: str  # the header and value that said so, e.g. "Auto-Submitted: auto-replied"


@dataclass(frozen=True)
class Bounce:
    """A delivery report: the message it is about and the addresses that failed."""

    original_message_ids: tuple[str, ...]  # without angle brackets, nearest first
    recipients: tuple[str, ...]  # the failed addresses, lower-cased
    status: str  # e.g. "5.1.1"
    diagnostic: str  # the remote server's words, when given


_DAEMONS = {"mailer-daemon", "postmaster", "mail-daemon", "mailerdaemon"}
_BOUNCE_SUBJECT = re.compile(
    r"undeliver|returned mail|returned to sender|delivery status notification \((failure|fail)"
    r"|delivery (has )?failed|delivery failure|mail delivery failed|failure notice"
    r"|could not be delivered|non.?delivery|nondeliverable|rejected|系统退信|退信|投递失败"
    r"|unzustellbar|non remis|no se puede entregar",
    re.IGNORECASE,
)
_STATUS = re.compile(r"\b([45]\.\d{1,3}\.\d{1,3})\b")
_ADDRESS = re.compile(r"<?([A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)>?")
_MESSAGE_ID_LINE = re.compile(r"^\s*message-id\s*:\s*(<[^<>\s]+>)", re.IGNORECASE | re.MULTILINE)


def classify(message: ParsedMessage) -> Automatic | Bounce | None:
    """None for a message a person wrote; else why it gets no ticket and no answer."""
    headers = message.headers
    content_type = headers.get("content-type", "").lower()
    if message.report is not None:
        return _from_report(message)
    if _is_plain_bounce(message):
        return _plain_bounce(message)
    auto = headers.get("auto-submitted", "").strip().lower()
    if auto and not auto.startswith("no"):
        return Automatic(f"Auto-Submitted: {auto}")
    for name in ("x-autoreply", "x-autorespond", "x-auto-response-suppress"):
        if name in headers:
            return Automatic(f"{_title(name)}: {headers[name]}")
    precedence = headers.get("precedence", "").strip().lower()
    if precedence in {"bulk", "junk", "list", "auto_reply"}:
        return Automatic(f"Precedence: {precedence}")
    for name in ("list-id", "list-unsubscribe"):
        if name in headers:
            return Automatic(f"{_title(name)}: {headers[name]}")
    if "multipart/report" in content_type:
        return Automatic(f"Content-Type: {content_type}")
    if _local_part(message.sender) in _DAEMONS:
        return Automatic(f"From: {message.sender}")
    if headers.get("return-path", "").strip() == "<>":
        return Automatic("Return-Path: <>")
    return None


def _title(name: str) -> str:
    return "-".join(word.capitalize() for word in name.split("-"))


def _local_part(address: str) -> str:
    return address.rpartition("@")[0].lower()


def _from_report(message: ParsedMessage) -> Automatic | Bounce:
    report = message.report
    assert report is not None
    failed = [
        r
        for r in report.recipients
        if r.action == "failed" or (not r.action and r.status.startswith("5"))
    ]
    if not failed:
        actions = ", ".join(sorted({r.action or "unknown" for r in report.recipients}))
        return Automatic(f"delivery-status: {actions or 'no recipients'}")
    ids = _nearest_first(report.original_message_id, message.thread_ids())
    return Bounce(
        original_message_ids=ids,
        recipients=tuple(dict.fromkeys(r.final_recipient for r in failed if r.final_recipient)),
        status=failed[0].status,
        diagnostic=failed[0].diagnostic,
    )


def _nearest_first(first: str, others: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(i for i in (first, *others) if i))


def _is_plain_bounce(message: ParsedMessage) -> bool:
    headers = message.headers
    if "x-failed-recipients" in headers:
        return True
    from_daemon = _local_part(message.sender) in _DAEMONS
    null_sender = headers.get("return-path", "").strip() == "<>"
    return (from_daemon or null_sender) and bool(_BOUNCE_SUBJECT.search(message.subject))


def _plain_bounce(message: ParsedMessage) -> Bounce:
    """Best effort: the failed addresses from X-Failed-Recipients or the text, the status
    code from the text, the original Message-ID from the returned message or headers (an
    attached .eml, text/rfc822-headers, or headers pasted into the text)."""
    text = message.text
    returned = [
        p for p in message.parts if p.content_type in {"message/rfc822", "text/rfc822-headers"}
    ]
    original_ids: list[str] = []
    for part in returned:
        headers = email.parser.BytesHeaderParser(policy=email.policy.compat32).parsebytes(part.data)
        original_ids.extend(message_ids(str(headers.get("message-id", ""))))
    # The returned headers pasted below the explanation: the bounce's own id is not in the text.
    original_ids.extend(m.strip("<>") for m in _MESSAGE_ID_LINE.findall(text))
    failed = message.headers.get("x-failed-recipients", "")
    recipients = [a.lower() for a in _ADDRESS.findall(failed)]
    if not recipients:
        recipients = _addresses_in_explanation(text, message)
    status = _STATUS.search(text)
    return Bounce(
        original_message_ids=_nearest_first("", (*original_ids, *message.thread_ids())),
        recipients=tuple(dict.fromkeys(recipients)),
        status=status.group(1) if status else "",
        diagnostic=_diagnostic(text),
    )


def _addresses_in_explanation(text: str, message: ParsedMessage) -> list[str]:
    """The addresses named before the returned message starts (not its From/To lines, not
    the bounce's own parties)."""
    explanation = re.split(
        r"^\s*(-{3,}.*(original message|returned message|this is a copy|headers).*|"
        r"(return-path|received|from|to|message-id|subject|date)\s*:)",
        text,
        maxsplit=1,
        flags=re.IGNORECASE | re.MULTILINE,
    )[0]
    own = {message.sender, *message.to}
    return [a.lower() for a in _ADDRESS.findall(explanation) if a.lower() not in own]


def _diagnostic(text: str) -> str:
    for line in text.splitlines():
        if _STATUS.search(line) or re.search(r"\b5\d\d\b", line):
            return " ".join(line.split())[:500]
    return ""
