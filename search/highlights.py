"""Highlights: for a page of found tickets, short snippets of the text that matched, escaped,
with `<mark>` around the matches — from the title, the content, the replies and notes and the
file names the reader may see. Computed for the page's tickets only (one query for their
matching replies, one for their files, one to stem their words)."""

from __future__ import annotations

from django.utils.html import escape

from ticketing.access import Audience
from ticketing.models import ReplyType, Ticket

from . import selectors
from .text import Piece, Query, Terms, lexemes_of, snippet, spans, stem_lookup, stems_of, tokens


def render(pieces: list[Piece]) -> str:
    """Escaped text with only `<mark>` tags of our own: safe to show as HTML."""
    return "".join(
        f"<mark>{escape(piece.text)}</mark>" if piece.marked else str(escape(piece.text))
        for piece in pieces
    )


def highlights_for(
    audience: Audience, tickets: list[Ticket], query: Query, tsquery: str
) -> dict[int, list[dict]]:
    """{ticket id: [{"field", "snippet", "reply_id"?, "attachment_id"?}]}: title, content,
    then the newest matching replies ("reply") and notes ("note"), then files
    ("attachment"). A note, or a note's file, only for a reader who sees the ticket's
    internals."""
    terms = Terms(stems=stems_of(lexemes_of(tsquery)), han=query.han)
    if terms.is_empty() or not tickets:
        return {}
    replies = selectors.replies_matching(audience, tickets, tsquery)
    files = selectors.files_matching(audience, tickets, tsquery)
    texts: list[str] = []
    for ticket in tickets:
        texts += [ticket.title, ticket.content]
        texts += [reply.content for reply in replies.get(ticket.pk, [])]
        texts += [file.filename for file in files.get(ticket.pk, [])]
    words: set[str] = set()
    if terms.stems:
        for text in texts:
            words |= tokens(text)
    stem = stem_lookup(selectors.stems(words))

    def marked(text: str) -> str | None:
        found = spans(text, terms, stem)
        return render(snippet(text, found)) if found else None

    result: dict[int, list[dict]] = {}
    for ticket in tickets:
        rows = []
        for field, text in (("title", ticket.title), ("content", ticket.content)):
            shown = marked(text)
            if shown:
                rows.append({"field": field, "snippet": shown})
        for reply in replies.get(ticket.pk, []):
            shown = marked(reply.content)
            if shown:
                field = "reply" if reply.reply_type == ReplyType.PUBLIC else "note"
                rows.append({"field": field, "snippet": shown, "reply_id": reply.pk})
        for file in files.get(ticket.pk, []):
            shown = marked(file.filename)
            if shown:
                row = {"field": "attachment", "snippet": shown, "attachment_id": file.pk}
                if file.reply_id is not None:
                    row["reply_id"] = file.reply_id
                rows.append(row)
        result[ticket.pk] = rows
    return result
