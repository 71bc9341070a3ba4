"""A ticket's links as one viewer may see them: parent, children, related, and where a merge
took it or what was merged into it (read-only entries, with no link id).

The ticket's team (those who see its internals) sees every link: they are the team's
business, as the 409 that lists a parent's open children shows. Everyone else (the
applicant, watchers, approvers outside the team) sees only the links to tickets they may
see themselves (ticketing.access.visible_tickets)."""

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Q

from collaboration.models import LinkKind, TicketLink
from ticketing import access
from ticketing.models import ProcessStatus, Ticket, TicketStatus

MERGED_INTO, MERGED_FROM = "merged_into", "merged_from"
# The order the card and the API list them in.
ORDER = ("parent", "child", "related", MERGED_INTO, MERGED_FROM)
# What an entry reads of the other ticket: its summary, and who works on it (whether the
# viewer may remove the link: Audience.sees_internals).
SUMMARY_FIELDS = (
    "id",
    "bill_code",
    "title",
    "ticket_status",
    "process_status",
    "handler_id",
    "handler_group_id",
)


@dataclass(frozen=True)
class LinkEntry:
    """One link from the ticket's side: `id` None for a merge (not removable here)."""

    id: int | None
    kind: str
    ticket: Ticket
    created: datetime | None

    @property
    def done(self) -> bool:
        """The linked ticket is finished: completed or closed, rejected or cancelled (what
        no longer stops a parent's completion: workflow.services.open_children)."""
        return self.ticket.ticket_status in (
            TicketStatus.COMPLETED,
            TicketStatus.CLOSED,
        ) or self.ticket.process_status in (ProcessStatus.REJECTED, ProcessStatus.CANCELLED)


def status_label(ticket: Ticket) -> str:
    """Where a ticket stands in one word: its approval state until approved, then its
    handling state (as the ticket page's header chip says it)."""
    if ticket.process_status != ProcessStatus.APPROVED:
        return str(ticket.get_process_status_display())
    return str(ticket.get_ticket_status_display())


def links_of(user, ticket: Ticket, audience: access.Audience | None = None) -> list[LinkEntry]:
    """The ticket's links the user may see, in ORDER, each kind oldest first. Three queries:
    the link rows with both tickets (link_source_target_key, link_target_idx), the tickets
    merged into it (ticket_merged_into_idx), and, outside the team, which of the other
    tickets the user may see."""
    audience = audience or access.audience_for(user)
    links = (
        TicketLink.objects.filter(Q(source_id=ticket.pk) | Q(target_id=ticket.pk))
        .select_related("source", "target")
        .only(
            "id",
            "kind",
            "created",
            "source_id",
            "target_id",
            *(f"source__{name}" for name in SUMMARY_FIELDS),
            *(f"target__{name}" for name in SUMMARY_FIELDS),
        )
        .order_by("id")
    )
    entries = []
    for link in links:
        if link.kind == LinkKind.RELATED:
            kind, other = "related", link.target if link.source_id == ticket.pk else link.source
        elif link.source_id == ticket.pk:
            kind, other = "parent", link.target
        else:
            kind, other = "child", link.source
        entries.append(LinkEntry(id=link.pk, kind=kind, ticket=other, created=link.created))
    if ticket.merged_into_id is not None:
        into = Ticket.objects.only(*SUMMARY_FIELDS).filter(pk=ticket.merged_into_id).first()
        if into is not None:
            entries.append(LinkEntry(None, MERGED_INTO, into, ticket.closed_time))
    merged = Ticket.objects.filter(merged_into_id=ticket.pk).only(*SUMMARY_FIELDS, "closed_time")
    entries.extend(LinkEntry(None, MERGED_FROM, t, t.closed_time) for t in merged.order_by("id"))
    if not audience.sees_internals(ticket):
        ids = {entry.ticket.pk for entry in entries}
        seen = set(access.visible_tickets(user).filter(pk__in=ids).values_list("pk", flat=True))
        entries = [entry for entry in entries if entry.ticket.pk in seen]
    entries.sort(key=lambda entry: ORDER.index(entry.kind))  # (stable: oldest first in each)
    return entries


def children_done(entries: list[LinkEntry]) -> tuple[int, int]:
    """(finished children, all children) of the entries: "2 of 3 children done"."""
    children = [entry for entry in entries if entry.kind == "child"]
    return sum(entry.done for entry in children), len(children)


def ticket_by_reference(user, text: str) -> int | None:
    """The id of the ticket the user may see that `text` names, by bill code (any case:
    codes are upper case, and an exact match uses their unique index) or by id (digits, or
    "#123"); None if it names none."""
    text = text.strip()
    visible = access.visible_tickets(user)
    found = visible.filter(bill_code=text.upper()).values_list("pk", flat=True).first()
    if found is not None:
        return found
    digits = text.removeprefix("#")
    if digits.isascii() and digits.isdigit() and len(digits) < 19:
        return visible.filter(pk=int(digits)).values_list("pk", flat=True).first()
    return None
