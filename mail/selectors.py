"""What the console shows of a ticket's mail: which replies came by e-mail, and the whole
message behind each (quoted history and signature, folded away from the reply itself)."""

from __future__ import annotations

from dataclasses import dataclass

from mail.models import Direction, MailMessage, MessageOutcome


@dataclass(frozen=True)
class MailNote:
    address: str
    # The whole text as the sender's client wrote it, quotes included ("" when nothing was
    # folded away, or when the viewer may not read it).
    full_text: str
    # Its HTML as sanitised at intake (mail.parsing: no scripts, styles or remote images;
    # inline images pointing at their files), for the same readers ("" otherwise).
    html: str = ""


def mail_notes(
    *, ticket, replies, viewer_id: int | None, insider: bool
) -> dict[int | None, MailNote]:
    """By reply id (None for the message that opened the ticket): the received e-mail behind
    it. The folded text is shown to the team and to the message's own author only: what a
    person quoted may be a notice meant for them alone. One query on mail_message_ticket_idx."""
    reply_ids = {reply.pk for reply in replies}
    found: dict[int | None, MailNote] = {}
    rows = MailMessage.objects.filter(
        ticket_id=ticket.pk,
        direction=Direction.IN,
        outcome__in=(MessageOutcome.TICKET, MessageOutcome.REPLY),
    ).values_list("reply_id", "outcome", "address", "full_text", "html")
    authors = {reply.pk: reply.author_id for reply in replies}
    for reply_id, outcome, address, full_text, html in rows:
        if outcome == MessageOutcome.REPLY and reply_id not in reply_ids:
            continue  # an internal note the viewer does not see (mail never makes one)
        key = None if outcome == MessageOutcome.TICKET else reply_id
        author = ticket.creator_id if key is None else authors.get(reply_id)
        readable = insider or author == viewer_id
        found[key] = MailNote(
            address=address,
            full_text=full_text if readable else "",
            html=html if readable else "",
        )
    return found
