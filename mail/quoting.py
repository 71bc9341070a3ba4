"""Fold the quoted history and the signature away from what a sender wrote now (pure).

Mail clients append the whole thread to a reply; a ticket's reply should show only the new
words, with the rest kept and shown on demand. `split_reply` finds the first line where the
history or the signature starts, as the common clients write it, and cuts there once: the
text before is new, the text from that line on is quoted. One cut keeps the rule simple and
checkable (the content lines of new + quoted are the original's, in order) and never drops
an answer written between quotes (an interleaved reply stays whole). It never folds
everything: a text that would leave nothing new is kept whole as new.

Recognised (case-insensitive where it makes sense):
- a trailing block of lines starting with ">" (with the attribution line before it);
- attributions "On <date>, <name> wrote:" (Gmail, Apple Mail "On …, at …, … wrote:",
  Thunderbird; wrapped over two lines as Gmail does), "<name> wrote:" before a ">" line,
  German "Am … schrieb …:", French "Le … a écrit :", Spanish "El … escribió:", Dutch "Op …
  schreef …:", Italian "Il … ha scritto:", Chinese "在 … 写道：" / "… 于 … 写道：" (寫道);
- "-----Original Message-----" and its translations, QQ Mail/Foxmail's
  "------------------ 原始邮件 ------------------";
- Outlook's header block "From: … Sent: … To: … Subject: …" (and 发件人/发送时间/收件人/主题,
  Von/Gesendet/An/Betreff, De/Envoyé/À/Objet), with the rule line above it;
- a signature after a "-- " line, and "Sent from my iPhone" and the like.

A forward ("---------- Forwarded message ---------", "Begin forwarded message:") stops the
search: what follows it is what the sender wants read (see `is_forward` for the subject)."""

from __future__ import annotations

import re

_QUOTE = re.compile(r"^\s*>")
_SIGNATURE = re.compile(r"^--\s?$")
_SENT_FROM = re.compile(
    r"^\s*(sent from my \w+|sent from (mail|outlook|yahoo mail) for \w+|sent from my .{1,30}"
    r"|get outlook for \w+|sent from outlook|envoyé de mon \w+|von meinem \w+ gesendet"
    r"|enviado desde mi \w+|inviato da \w+|发自我的\s?\w+|从我的\s?\w+\s?发送|來自我的\s?\w+)\s*$",
    re.IGNORECASE,
)
_ORIGINAL = re.compile(
    r"^\s*-{2,}\s*(original message|original|原始邮件|原始信息|原始郵件|ursprüngliche nachricht"
    r"|originalnachricht|message d'origine|mensaje original|messaggio originale"
    r"|oorspronkelijk bericht|mensagem original|исходное сообщение|元のメッセージ)\s*-{2,}\s*$",
    re.IGNORECASE,
)
_FORWARD_LINE = re.compile(
    r"^\s*(-{2,}\s*(forwarded message|forwarded|weitergeleitete nachricht|message transféré"
    r"|mensaje reenviado|转发邮件|轉寄郵件)\s*-{2,}|begin forwarded message:|anfang der "
    r"weitergeleiteten nachricht:|début du message réexpédié\s?:)\s*$",
    re.IGNORECASE,
)
_RULE = re.compile(r"^\s*(_{8,}|-{8,}|—{4,})\s*$")
_HEADER_START = re.compile(r"^\s*\*?\s*(from|发件人|發件人|von|de|van|da)\s*\*?\s*[:：]", re.I)
_HEADER_FIELD = re.compile(
    r"^\s*\*?\s*(sent|date|to|cc|subject|发送时间|發送時間|时间|日期|收件人|抄送|主题|主旨|gesendet"
    r"|datum|an|betreff|envoyé|date|à|objet|verzonden|aan|onderwerp|enviado|para|asunto"
    r"|inviato|a|oggetto)\s*\*?\s*[:：]",
    re.IGNORECASE,
)
_ATTRIBUTION = [
    re.compile(p, re.IGNORECASE)
    for p in (
        r"^\s*on\b.{4,}\bwrote\s*:\s*$",  # Gmail, Apple Mail, Thunderbird
        r"^\s*am\b.{4,}\bschrieb\b.*:\s*$",  # German
        r"^\s*le\b.{4,}\ba écrit\s*:\s*$",  # French
        r"^\s*el\b.{4,}\bescribió\s*:\s*$",  # Spanish
        r"^\s*op\b.{4,}\bschreef\b.*:\s*$",  # Dutch
        r"^\s*il\b.{4,}\bha scritto\s*:\s*$",  # Italian
        r"^.{0,200}(写道|寫道)\s*[:：]\s*$",  # Chinese (Gmail, Apple Mail, Thunderbird)
    )
]
# "<name> wrote:" alone is too common in prose: only when a quoted line follows.
_WROTE = re.compile(
    r"^.{1,120}\b(wrote|schrieb|a écrit|escribió|написал\(а\)|написал)\s*:\s*$", re.I
)
_FORWARD_SUBJECT = re.compile(
    r"^\s*(fwd?|fw|wg|tr|rv|enc|vs|doorst|转发|轉寄|转|転送)\s*[:：]", re.IGNORECASE
)


def is_forward(subject: str) -> bool:
    """Whether the subject says the message is a forward (Fwd:, FW:, WG:, TR:, 转发:…): its
    quoted-looking content is what the sender wants us to read, so nothing is folded."""
    return bool(_FORWARD_SUBJECT.match(subject or ""))


def split_reply(text: str) -> tuple[str, str]:
    """(new, quoted): what the sender wrote now, and the history and signature folded away.

    Line ends are normalised to "\\n" and blank lines at either end of each half trimmed;
    no content line is changed, dropped or reordered."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    cut = _cut(lines)
    if cut is None:
        return _join(lines), ""
    new, quoted = _join(lines[:cut]), _join(lines[cut:])
    if not new.strip():
        return _join(lines), ""
    return new, quoted


def _join(lines: list[str]) -> str:
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return "\n".join(lines[start:end])


def _cut(lines: list[str]) -> int | None:
    """The index of the first folded line, or None."""
    trailing = _trailing_quote_start(lines)
    limit = len(lines) if trailing is None else trailing
    for index in range(limit):
        line = lines[index]
        if _FORWARD_LINE.match(line):
            return None
        if _SIGNATURE.match(line) or _SENT_FROM.match(line) or _ORIGINAL.match(line):
            return index
        if _is_attribution(lines, index):
            return index
        if _is_header_block(lines, index):
            return _with_rule_above(lines, index)
    if trailing is None:
        return None
    return _with_attribution_above(lines, trailing)


def _is_attribution(lines: list[str], index: int) -> bool:
    line = lines[index].strip()
    if not line or len(line) > 300:
        return False
    candidates = [line]
    if index + 1 < len(lines) and 0 < len(lines[index + 1].strip()) <= 120:
        # Gmail wraps a long attribution: "On Mon, 3 Jun 2024 at 10:15, Alice <\nalice@x> wrote:"
        candidates.append(line + " " + lines[index + 1].strip())
    for candidate in candidates:
        if any(pattern.match(candidate) for pattern in _ATTRIBUTION):
            return True
    if _WROTE.match(line):
        following = _next_content(lines, index + 1)
        return following is not None and bool(_QUOTE.match(lines[following]))
    return False


def _is_header_block(lines: list[str], index: int) -> bool:
    """An Outlook-style "From: …" line followed by at least two more header fields."""
    if not _HEADER_START.match(lines[index]):
        return False
    fields = 0
    for line in lines[index + 1 : index + 8]:
        if _HEADER_FIELD.match(line):
            fields += 1
    return fields >= 2


def _with_rule_above(lines: list[str], index: int) -> int:
    """Take the rule line Outlook draws above its header block (or an "Original" line)."""
    above = index - 1
    while above >= 0 and not lines[above].strip():
        above -= 1
    if above >= 0 and (_RULE.match(lines[above]) or _ORIGINAL.match(lines[above])):
        return above
    return index


def _with_attribution_above(lines: list[str], index: int) -> int:
    above = index - 1
    while above >= 0 and not lines[above].strip():
        above -= 1
    if above >= 0 and _WROTE.match(lines[above].strip()):
        return above
    if above >= 1 and _is_attribution(lines, above - 1):
        return above - 1
    return index


def _next_content(lines: list[str], start: int) -> int | None:
    for index in range(start, min(len(lines), start + 3)):
        if lines[index].strip():
            return index
    return None


def _trailing_quote_start(lines: list[str]) -> int | None:
    """Where the last run of ">" lines starts when nothing but blank lines follows it."""
    end = len(lines)
    while end > 0 and not lines[end - 1].strip():
        end -= 1
    start = end
    while start > 0 and (not lines[start - 1].strip() or _QUOTE.match(lines[start - 1])):
        start -= 1
    while start < end and not lines[start].strip():
        start += 1
    return start if start < end else None
