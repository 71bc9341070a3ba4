"""Links between tickets: add and remove, by the team of both tickets.

Kinds are said from the ticket in hand (`ticket_id`): "related"; "parent" (`other` is its
parent); "child" (`other` is its child). They are stored as collaboration.models says: a
related pair once, smaller id as source; a parent link from the child to its parent.

Both services lock the two ticket rows, smaller id first (`SELECT ... FOR UPDATE`), and decide
under those locks: workflow.services.ticket_complete checks a parent's open children under
the parent's row lock, so a child added while its parent is being completed waits for the
completion (or the completion sees the child). Adding a parent link also takes a
transaction advisory lock (PARENT_LINKS_LOCK) first: two parent links on four different
tickets could otherwise close a cycle together (X->Y and Z->W stand; Y->Z and W->X added at
once), which no pair of row locks would see.

Every change leaves a record on both tickets (link_added / link_removed, the kind as seen
from that ticket: the child's record says "parent", the parent's "child")."""

from datetime import datetime

from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _
from psycopg import sql

from collaboration.models import LinkKind, TicketLink
from config.errors import ConflictError, Forbidden, InvalidArgument
from ticketing import access
from ticketing.models import Ticket
from ticketing.transitions import record

# How the API says a link, from the ticket in hand.
RELATED, PARENT, CHILD = "related", "parent", "child"
KINDS = (RELATED, PARENT, CHILD)
INVERSE = {RELATED: RELATED, PARENT: CHILD, CHILD: PARENT}

# pg_advisory_xact_lock key serialising parent links (the cycle check), taken before any
# ticket row lock.
PARENT_LINKS_LOCK = 26_004

# Whether `child` is `parent` itself or one of its ancestors, walking parent links upwards
# from `parent`: one probe per generation of link_one_parent_key (the parent links' partial
# unique index on source; tests/collaboration/test_link_plans.py EXPLAINs it).
# UNION, not UNION ALL: a cycle already in the table (which the constraints cannot rule
# out) ends the walk instead of looping. Locks nothing: it runs under PARENT_LINKS_LOCK,
# which every parent link's addition holds, so the chain cannot change while it is read.
ANCESTORS_SQL = """
WITH RECURSIVE ancestors (id) AS (
    SELECT %(parent)s::bigint
    UNION
    SELECT link.target_id
    FROM {links} AS link
    JOIN ancestors ON link.source_id = ancestors.id
    WHERE link.kind = %(kind)s
)
SELECT EXISTS (SELECT 1 FROM ancestors WHERE id = %(child)s::bigint)
"""


def _ancestors_sql() -> str:
    links = sql.Identifier(TicketLink._meta.db_table)
    return sql.SQL(ANCESTORS_SQL.strip()).format(links=links).as_string()


def would_cycle(*, child_id: int, parent_id: int) -> bool:
    """Whether making `parent_id` the parent of `child_id` closes a cycle: the child is the
    parent or one of its ancestors (ANCESTORS_SQL)."""
    with connection.cursor() as cursor:
        cursor.execute(
            _ancestors_sql(), {"parent": parent_id, "child": child_id, "kind": LinkKind.PARENT}
        )
        return bool(cursor.fetchone()[0])


def stored_as(ticket_id: int, other_id: int, kind: str) -> tuple[int, int, str]:
    """(source_id, target_id, stored kind) of a link said from `ticket_id`'s side."""
    if kind == PARENT:
        return ticket_id, other_id, LinkKind.PARENT
    if kind == CHILD:
        return other_id, ticket_id, LinkKind.PARENT
    return min(ticket_id, other_id), max(ticket_id, other_id), LinkKind.RELATED


def kind_from(link: TicketLink, ticket_id: int) -> str:
    """The API's kind of a stored link, from `ticket_id`'s side."""
    if link.kind == LinkKind.RELATED:
        return RELATED
    return PARENT if link.source_id == ticket_id else CHILD


def _lock_pair(first_id: int, second_id: int) -> dict[int, Ticket]:
    """Lock both ticket rows, smaller id first (LockRows runs above the sort), and return
    them by id. The caller holds the transaction."""
    rows = Ticket.objects.select_for_update().filter(pk__in=(first_id, second_id)).order_by("pk")
    return {ticket.pk: ticket for ticket in rows}


def _require_team_of_both(user, ticket: Ticket, other: Ticket) -> None:
    audience = access.audience_for(user)
    for each in (ticket, other):
        if not access.can_work_on(user, each, audience):
            raise Forbidden(
                _("Only the team of both tickets may link them: you do not work on %(code)s.")
                % {"code": each.bill_code}
            )


def _visible_other(user, other_id: int) -> None:
    if not access.visible_tickets(user).filter(pk=other_id).exists():
        raise InvalidArgument("ticket", _("No such ticket, or you may not see it."))


def link_add(
    *, ticket_id: int, other_id: int, kind: str, user, now: datetime | None = None
) -> TicketLink:
    """Link `other_id` to `ticket_id` as `kind` (said from `ticket_id`'s side), for a caller
    on the team of both (staff, their handlers, their groups' members and leaders).

    Ticket.DoesNotExist (404) for a `ticket_id` the caller may not see; 400 for an unknown
    kind ("kind"), a `ticket` that does not exist, is invisible to them or is the ticket
    itself ("ticket"), a second parent, or a cycle; 403 if they are not on both teams; 409
    for a merged ticket or a pair already linked (in either direction, of any kind).

    Locks: PARENT_LINKS_LOCK (parent and child kinds), then both ticket rows, smaller id
    first (see the module)."""
    now = now or timezone.now()
    if kind not in KINDS:
        raise InvalidArgument("kind", _("Choose related, parent or child."))
    access.visible_tickets(user).get(pk=ticket_id)  # (404 before anything else)
    if other_id == ticket_id:
        raise InvalidArgument("ticket", _("A ticket cannot be linked to itself."))
    _visible_other(user, other_id)
    source_id, target_id, stored_kind = stored_as(ticket_id, other_id, kind)
    with transaction.atomic():
        if stored_kind == LinkKind.PARENT:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_xact_lock(%s)", [PARENT_LINKS_LOCK])
        locked = _lock_pair(ticket_id, other_id)
        if ticket_id not in locked:  # deleted meanwhile
            raise Ticket.DoesNotExist
        if other_id not in locked:
            raise InvalidArgument("ticket", _("No such ticket, or you may not see it."))
        ticket, other = locked[ticket_id], locked[other_id]
        _require_team_of_both(user, ticket, other)
        for each in (ticket, other):
            if each.merged_into_id is not None:
                raise ConflictError(
                    _("%(code)s was merged into another ticket: it cannot be linked.")
                    % {"code": each.bill_code}
                )
        if stored_kind == LinkKind.PARENT and would_cycle(child_id=source_id, parent_id=target_id):
            raise InvalidArgument(
                "kind",
                _("That would make a cycle: %(child)s is already above %(parent)s.")
                % {"child": locked[source_id].bill_code, "parent": locked[target_id].bill_code},
            )
        pair = Q(source_id=ticket_id, target_id=other_id) | Q(
            source_id=other_id, target_id=ticket_id
        )
        if TicketLink.objects.filter(pair).exists():
            raise ConflictError(
                _("%(code)s is already linked to this ticket.") % {"code": other.bill_code}
            )
        if (
            stored_kind == LinkKind.PARENT
            and TicketLink.objects.filter(source_id=source_id, kind=LinkKind.PARENT).exists()
        ):
            raise InvalidArgument(
                "kind" if source_id == ticket_id else "ticket",
                _("A ticket has at most one parent: %(code)s already has one.")
                % {"code": locked[source_id].bill_code},
            )
        link = TicketLink.objects.create(
            source_id=source_id,
            target_id=target_id,
            kind=stored_kind,
            created_by=user,
            created=now,
        )
        _record_both(ticket, other, kind, "link_added", user, now)
        return link


def link_remove(*, ticket_id: int, link_id: int, user, now: datetime | None = None) -> None:
    """Remove a link of `ticket_id`, for a caller on the team of both tickets.

    Ticket.DoesNotExist (404) for a ticket the caller may not see; TicketLink.DoesNotExist
    (404) for a link that is not this ticket's; 403 if they are not on both teams.

    Locks: both ticket rows, smaller id first (see the module), then the link is read again
    under them (a removal at the same moment leaves the second a 404)."""
    now = now or timezone.now()
    access.visible_tickets(user).get(pk=ticket_id)
    mine = Q(source_id=ticket_id) | Q(target_id=ticket_id)
    link = TicketLink.objects.filter(mine).get(pk=link_id)
    other_id = link.target_id if link.source_id == ticket_id else link.source_id
    with transaction.atomic():
        locked = _lock_pair(ticket_id, other_id)
        link = TicketLink.objects.filter(mine).get(pk=link_id)
        ticket, other = locked[ticket_id], locked[other_id]
        _require_team_of_both(user, ticket, other)
        kind = kind_from(link, ticket_id)
        link.delete()
        _record_both(ticket, other, kind, "link_removed", user, now)


def _record_both(ticket: Ticket, other: Ticket, kind: str, action: str, user, now) -> None:
    """The record on each ticket, naming the other and the kind as seen from it."""
    for one, two, seen in ((ticket, other, kind), (other, ticket, INVERSE[kind])):
        record(
            ticket_id=one.pk,
            action=action,
            actor_id=user.pk,
            now=now,
            detail={"ticket_id": two.pk, "bill_code": two.bill_code, "kind": seen},
        )
