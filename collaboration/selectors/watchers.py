"""Reads about watchers: a ticket's watchers, and who may add or remove which of them.

The rules (the API and the console both ask these, never re-deriving them):
- the ticket's team (ticketing.access.can_work_on) adds anyone active and removes anyone;
- its applicant copies colleagues in (source "cc") and removes those they copied in;
- anyone who may see the ticket adds and removes themselves (source "self");
- everyone else is refused (a 403; a ticket they may not see is a 404 before this)."""

from django.db.models import QuerySet

from collaboration.models import Watcher, WatcherSource
from ticketing import access
from ticketing.models import Ticket


def watchers_of(ticket: Ticket) -> QuerySet[Watcher]:
    """The ticket's watchers with their users (one query), in the order they were added."""
    return Watcher.objects.filter(ticket=ticket).select_related("user").order_by("id")


def source_for(actor, ticket: Ticket, user_id: int, audience=None) -> str | None:
    """How `actor` would add `user_id` as a watcher of `ticket` (a WatcherSource), or None
    when they may not: themselves ("self"), anyone as the team ("team"), a colleague as the
    applicant ("cc"). The caller may see the ticket."""
    if user_id == actor.pk:
        return WatcherSource.SELF
    if access.can_work_on(actor, ticket, audience):
        return WatcherSource.TEAM
    if ticket.creator_id == actor.pk:
        return WatcherSource.CC
    return None


def may_add_others(actor, ticket: Ticket, audience=None) -> bool:
    """Whether the add-a-person form is for this viewer (the team, or the applicant)."""
    return ticket.creator_id == actor.pk or access.can_work_on(actor, ticket, audience)


def may_remove(actor, ticket: Ticket, watcher: Watcher, audience=None) -> bool:
    """Themselves; anyone, for the team; those they copied in, for the applicant."""
    if watcher.user_id == actor.pk:
        return True
    if access.can_work_on(actor, ticket, audience):
        return True
    return (
        ticket.creator_id == actor.pk
        and watcher.source == WatcherSource.CC
        and watcher.added_by_id == actor.pk
    )
