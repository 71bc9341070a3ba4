"""Watchers and CC: adding and removing the people told of a ticket's public story.

Who may do what is collaboration.selectors.watchers' (the API and the console ask it). Each
change writes its history record (watcher_added {"user_id", "source"} / watcher_removed
{"user_id"}, console/history.py words them) in the same transaction; a person added by
someone else is told (ticketing.notify.watching, in their language)."""

from datetime import datetime

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from collaboration.models import Watcher
from collaboration.selectors.watchers import may_remove, source_for
from config.errors import Forbidden, InvalidArgument
from ticketing import notify
from ticketing.models import Ticket
from ticketing.transitions import record


def watcher_add(*, ticket_id: int, user_id: int, actor, now: datetime | None = None):
    """Make `user_id` a watcher of the ticket, as `actor` may (selectors.source_for: themselves,
    anyone for the team, a colleague for the applicant; Forbidden otherwise). Returns
    `(watcher, created)`: someone already watching is returned as they are, nothing written
    (not an error: the outcome asked for holds). InvalidArgument on `user_id` for an unknown
    or inactive person, or the ticket's own applicant.

    Two adds of the same person at once make one row: the (ticket, user) unique key decides,
    and only the one that inserted writes the record and the notice. Locks no row beyond the
    insert's own."""
    now = now or timezone.now()
    ticket = Ticket.objects.select_related("handler_group").get(pk=ticket_id)
    source = source_for(actor, ticket, user_id)
    if source is None:
        raise Forbidden(_("Only the ticket's team and its applicant may add other watchers."))
    person = get_user_model().objects.filter(pk=user_id, is_active=True).first()
    if person is None:
        raise InvalidArgument("user_id", _("No active user with this id."))
    if person.pk == ticket.creator_id:
        raise InvalidArgument("user_id", _("The applicant is told of their own ticket already."))
    with transaction.atomic():
        watcher, created = Watcher.objects.get_or_create(
            ticket_id=ticket.pk,
            user_id=person.pk,
            defaults={"added_by_id": actor.pk, "source": source, "added": now},
        )
        if created:
            record(
                ticket_id=ticket.pk,
                action="watcher_added",
                actor_id=actor.pk,
                now=now,
                detail={"user_id": person.pk, "source": source},
            )
            notify.watching(ticket, user_id=person.pk, actor=actor, watcher_id=watcher.pk)
    watcher.user = person
    return watcher, created


def watcher_remove(*, ticket_id: int, user_id: int, actor, now: datetime | None = None) -> None:
    """`user_id` no longer watches the ticket, as `actor` may (selectors.may_remove:
    themselves; anyone, for the team; those they copied in, for the applicant; Forbidden
    otherwise). Watcher.DoesNotExist (a 404) when they do not watch it. Locks the watcher's
    row, so of two removals at once one removes and records, the other finds nothing."""
    now = now or timezone.now()
    ticket = Ticket.objects.select_related("handler_group").get(pk=ticket_id)
    with transaction.atomic():
        watcher = (
            Watcher.objects.select_for_update().filter(ticket_id=ticket.pk, user_id=user_id).first()
        )
        if watcher is None:
            raise Watcher.DoesNotExist(_("This person does not watch this ticket."))
        if not may_remove(actor, ticket, watcher):
            raise Forbidden(
                _(
                    "Only the ticket's team, the person themselves or who copied them in "
                    "may remove a watcher."
                )
            )
        watcher.delete()
        record(
            ticket_id=ticket.pk,
            action="watcher_removed",
            actor_id=actor.pk,
            now=now,
            detail={"user_id": user_id},
        )
