"""Tags: the team's labels on a ticket (Ticket.tags), with Tag keeping each one's count.

A tag is lower-cased, trimmed, its inner runs of white space made one space
(`normalize_tag`), 1 to TAG_MAX_LENGTH characters; a ticket carries at most TAGS_PER_TICKET
of them, in the order they were added. `tags_add` and `tags_remove` change a ticket's tags
under its row lock and keep Tag.ticket_count in the same transaction, with one history
record per change (action "tags", detail {"added": [...]} or {"removed": [...]}); nothing is
recorded when nothing changed. Who may tag is ticketing.access's ("tag": the ticket's team);
the callers (the API, the console, a macro's step) ask it first. A ticket's state does not
matter: a closed ticket may still be labelled for the reports.

A Tag row stays when its count falls to 0 (`tag_suggestions` leaves it out): deleting it
would race with another ticket's insert of the same name for nothing.

Filters: `filter_tag` (the pool, search) is `tags @> ARRAY[tag]`, served by ticket_tags_idx
(GIN); the SLA report says the same in its SQL."""

from collections.abc import Iterable
from datetime import datetime

from django.db import connection, transaction
from django.db.models import Case, IntegerField, QuerySet, Value, When
from django.utils import timezone
from django.utils.translation import gettext as _

from config.errors import InvalidArgument

from .models import Tag, Ticket
from .transitions import record

TAG_MAX_LENGTH = 50
TAGS_PER_TICKET = 20
SUGGESTIONS = 20


def normalize_tag(raw: str) -> str:
    return " ".join(str(raw).split()).lower()


def normalized_tags(raw: Iterable) -> list[str]:
    """The tags asked for, normalised, each once, in the order given. InvalidArgument on
    "tags" for an empty one, one longer than TAG_MAX_LENGTH, or no tag at all."""
    names: list[str] = []
    for value in raw:
        if not isinstance(value, str):
            raise InvalidArgument("tags", _("Each tag must be text."))
        name = normalize_tag(value)
        if not name:
            raise InvalidArgument("tags", _("A tag cannot be empty."))
        if len(name) > TAG_MAX_LENGTH:
            raise InvalidArgument(
                "tags",
                _("A tag has at most %(max)d characters: %(tag)s")
                % {"max": TAG_MAX_LENGTH, "tag": name[:TAG_MAX_LENGTH] + "…"},
            )
        if name not in names:
            names.append(name)
    if not names:
        raise InvalidArgument("tags", _("Give at least one tag."))
    return names


# Count one more ticket for each name, creating the names not seen before. The names come
# sorted, so that two transactions counting overlapping names lock their rows in one order.
# ON CONFLICT makes two first uses of a name at once one row: the second waits for the first
# to commit, then adds its one.
COUNT_ADDED = """
INSERT INTO ticket_tag (name, ticket_count)
SELECT name, 1 FROM unnest(%s::varchar[]) AS added(name) ORDER BY name
ON CONFLICT (name) DO UPDATE SET ticket_count = ticket_tag.ticket_count + 1
"""
# Count one ticket fewer for each name (never below 0: a ticket edited outside these services
# may have carried a tag it was not counted for). Rows locked in name order, as above.
COUNT_REMOVED = """
UPDATE ticket_tag SET ticket_count = GREATEST(ticket_tag.ticket_count - 1, 0)
FROM (SELECT id FROM ticket_tag WHERE name = ANY(%s::varchar[]) ORDER BY name FOR UPDATE) AS
    removed
WHERE ticket_tag.id = removed.id
"""


def tags_add(
    *, ticket_id: int, tags: Iterable[str], actor_id: int | None, now: datetime | None = None
) -> list[str]:
    """Add `tags` (normalised) to the ticket; returns its tags, the new ones last. Tags it
    carries already are left as they are (all of them: nothing written). InvalidArgument on
    "tags" for a bad tag (normalized_tags) or when the ticket would carry more than
    TAGS_PER_TICKET, nothing changed. Ticket.DoesNotExist for no such ticket.

    Takes the ticket's row lock (then the Tag rows', in name order), so two changes of one
    ticket's tags at once apply one after the other; runs in its own transaction or the
    caller's (a macro's run)."""
    names = normalized_tags(tags)
    now = now or timezone.now()
    with transaction.atomic():
        current = _locked_tags(ticket_id)
        added = [name for name in names if name not in current]
        if not added:
            return current
        if len(current) + len(added) > TAGS_PER_TICKET:
            raise InvalidArgument(
                "tags",
                _("A ticket carries at most %(max)d tags; it has %(count)d.")
                % {"max": TAGS_PER_TICKET, "count": len(current)},
            )
        result = [*current, *added]
        Ticket.objects.filter(pk=ticket_id).update(tags=result)
        with connection.cursor() as cursor:
            cursor.execute(COUNT_ADDED, [sorted(added)])
        record(
            ticket_id=ticket_id, action="tags", actor_id=actor_id, now=now, detail={"added": added}
        )
    return result


def tags_remove(
    *,
    ticket_id: int,
    tags: Iterable[str],
    actor_id: int | None,
    now: datetime | None = None,
    require_present: bool = False,
) -> list[str]:
    """Remove `tags` (normalised) from the ticket; returns the tags it keeps. Tags it does not
    carry are ignored (none of them carried: nothing written), unless `require_present`
    (the API's DELETE of one tag): then Tag.DoesNotExist, a 404, nothing changed.
    InvalidArgument on "tags" for a bad tag; Ticket.DoesNotExist for no such ticket.

    Locks as tags_add does."""
    names = normalized_tags(tags)
    now = now or timezone.now()
    with transaction.atomic():
        current = _locked_tags(ticket_id)
        removed = [name for name in names if name in current]
        if require_present and len(removed) < len(names):
            raise Tag.DoesNotExist(_("This ticket does not carry this tag."))
        if not removed:
            return current
        result = [name for name in current if name not in removed]
        Ticket.objects.filter(pk=ticket_id).update(tags=result)
        with connection.cursor() as cursor:
            cursor.execute(COUNT_REMOVED, [removed])
        record(
            ticket_id=ticket_id,
            action="tags",
            actor_id=actor_id,
            now=now,
            detail={"removed": removed},
        )
    return result


def _locked_tags(ticket_id: int) -> list[str]:
    """The ticket's tags, its row locked until the transaction ends (the one lock a change of
    its tags takes first)."""
    row = Ticket.objects.select_for_update().filter(pk=ticket_id).values_list("tags", flat=True)
    return list(row.get() or [])


def tag_suggestions(q: str = "", limit: int = SUGGESTIONS) -> list[Tag]:
    """Tags in use whose name holds `q` (normalised; any when empty): those starting with it
    first, then by how many tickets carry them, then by name; at most `limit`. Reads the
    whole (small: one row per distinct tag) ticket_tag table."""
    needle = normalize_tag(q)
    found = Tag.objects.filter(ticket_count__gt=0)
    if not needle:
        return list(found.order_by("-ticket_count", "name")[:limit])
    return list(
        found.filter(name__contains=needle)
        .annotate(
            starts=Case(
                When(name__startswith=needle, then=Value(0)),
                default=Value(1),
                output_field=IntegerField(),
            )
        )
        .order_by("starts", "-ticket_count", "name")[:limit]
    )


def filter_tag(qs: QuerySet[Ticket], tag: str) -> QuerySet[Ticket]:
    """The tickets carrying `tag` (any case): `tags @> ARRAY[tag]`, ticket_tags_idx."""
    return qs.filter(tags__contains=[normalize_tag(tag)])
