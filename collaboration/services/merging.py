"""Merging duplicates: one ticket (the source) into another (the target), by a leader of both
tickets' groups or staff.

Everything of the source goes to the target and nothing is lost: its replies and notes
(keeping their ids, authors, types and times, each marked `merged_from`), its files, its
watchers, and its own description, which becomes a public reply on the target written by
its applicant at its submission time (with the source's own files). Its applicant watches
the target. The source is closed by the MERGE transition (`merged_into` set), its SLA clocks
finalised as `merged` unless it was completed (then its outcome stays as it was), and both
applicants are told.

Both ticket rows are locked, smaller id first (`SELECT ... FOR UPDATE`), as
collaboration.services.links does, and everything is decided under those locks: two merges
of overlapping pairs cannot deadlock, and of A->B and B->A at once the second finds its
target (or source) merged and is refused."""

import logging
from datetime import datetime

from django.db import transaction
from django.db.models import Count, F, Q, Value
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.translation import gettext as _

from attachments.models import Attachment
from collaboration.models import Watcher, WatcherSource
from collaboration.selectors.merging import may_merge, source_refusal, target_refusal
from config.errors import ConflictError, Forbidden
from notifications.rendering import TemplateError
from notifications.sending import send
from sla.services import sla_finalize
from ticketing import lifecycle, notify
from ticketing.models import ReplyType, Ticket, TicketReply
from ticketing.transitions import apply_transition, record

logger = logging.getLogger(__name__)

TEMPLATE = "ticket-merged"  # notifications/migrations/0010_merge_template.py


def ticket_merge(*, source_id: int, target_id: int, user, now: datetime | None = None) -> Ticket:
    """Merge ticket `source_id` into `target_id` and return the target.

    Refused, changing nothing: Ticket.DoesNotExist for a ticket that does not exist (the API
    checked visibility first: 404); Forbidden unless `user` leads both tickets' groups or is
    staff; ConflictError for a ticket merged into itself, a source that is not approved, or
    is closed or merged already, and a target that is not approved, or is closed or merged
    (selectors.merging). Takes both tickets' row locks, smaller id first, until the
    transaction ends."""
    now = now or timezone.now()
    with transaction.atomic():
        locked = _lock(source_id, target_id)
        source, target = locked[source_id], locked[target_id]
        if not (may_merge(user, source) and may_merge(user, target)):
            raise Forbidden(_("Only a leader of both tickets' groups, or staff, may merge them."))
        if source.pk == target.pk:
            raise ConflictError(_("Cannot merge a ticket into itself."))
        refusal = source_refusal(source) or target_refusal(target)
        if refusal:
            raise ConflictError(refusal)
        watchers_before = list(
            Watcher.objects.filter(ticket_id=source.pk)
            .order_by("id")
            .values_list("user_id", flat=True)
        )
        closed = apply_transition(
            ticket_id=source.pk,
            transition=lifecycle.MERGE,
            actor_id=user.pk,
            now=now,
            values={"closed_time": now, "merged_into_id": target.pk},
            detail={"into_id": target.pk, "into_bill": target.bill_code},
        )
        if closed.completed_time is None:
            # A completed source keeps the outcome its completion wrote.
            sla_finalize(ticket=closed, now=now, merged=True)
        moved = _move_conversation(source, target, now=now)
        added = _move_watchers(source, target, watchers_before, actor=user, now=now)
        record(
            ticket_id=target.pk,
            action="merged_from",
            actor_id=user.pk,
            now=now,
            detail={
                "source_id": source.pk,
                "source_bill": source.bill_code,
                "replies": moved["replies"],
                "attachments": moved["attachments"],
                "watchers": len(added),
            },
        )
        _tell_applicants(source, target, actor=user)
        notify.status_changed(
            closed,
            "merge",
            user.pk,
            now.isoformat(),
            watchers=watchers_before,
        )
        return Ticket.objects.get(pk=target.pk)


def _lock(*ids: int) -> dict[int, Ticket]:
    """The tickets' rows, locked one at a time in id order (each ticket row only, not its
    group's: `of=("self",)`). Ticket.DoesNotExist when one is missing."""
    locked = {}
    for pk in sorted(set(ids)):
        locked[pk] = (
            Ticket.objects.select_for_update(of=("self",))
            .select_related("handler_group")
            .get(pk=pk)
        )
    return locked


def _move_conversation(source: Ticket, target: Ticket, *, now: datetime) -> dict[str, int]:
    """The source's replies and files to the target, its description as a public reply, and
    both tickets' reply counts put right (the source's to zero). A reply moved here before,
    from a ticket merged into the source, keeps naming where it was written."""
    counts = TicketReply.objects.filter(ticket_id=source.pk).aggregate(
        replies=Count("id"), public=Count("id", filter=Q(reply_type=ReplyType.PUBLIC))
    )
    TicketReply.objects.filter(ticket_id=source.pk).update(
        ticket_id=target.pk, merged_from_id=Coalesce(F("merged_from_id"), Value(source.pk))
    )
    description = TicketReply.objects.create(
        ticket_id=target.pk,
        author_id=source.creator_id,
        reply_type=ReplyType.PUBLIC,
        content=f"{source.title}\n\n{source.content}",
        merged_from_id=source.pk,
    )
    # (created is auto_now_add: the description's own time is set after.)
    TicketReply.objects.filter(pk=description.pk).update(created=source.submitted_time)
    own_files = Attachment.objects.filter(ticket_id=source.pk, reply__isnull=True).update(
        ticket_id=target.pk, reply_id=description.pk
    )
    reply_files = Attachment.objects.filter(ticket_id=source.pk).update(ticket_id=target.pk)
    replies, public = counts["replies"] + 1, counts["public"] + 1
    Ticket.objects.filter(pk=target.pk).update(
        reply_count=F("reply_count") + replies,
        public_reply_count=F("public_reply_count") + public,
    )
    Ticket.objects.filter(pk=source.pk).update(reply_count=0, public_reply_count=0)
    return {"replies": replies, "attachments": own_files + reply_files}


def _move_watchers(
    source: Ticket, target: Ticket, watcher_ids: list[int], *, actor, now: datetime
) -> list[int]:
    """The source's watchers, then its applicant, watch the target (source "merge"), each
    once: not those who watch it already, nor its applicant. The source keeps none. Returns
    the users added, each with a watcher_added record on the target."""
    Watcher.objects.filter(ticket_id=source.pk).delete()
    present = set(Watcher.objects.filter(ticket_id=target.pk).values_list("user_id", flat=True))
    present.add(target.creator_id)
    added = []
    for user_id in [*watcher_ids, source.creator_id]:
        if user_id not in present:
            present.add(user_id)
            added.append(user_id)
    Watcher.objects.bulk_create(
        Watcher(
            ticket_id=target.pk,
            user_id=user_id,
            added_by=actor,
            source=WatcherSource.MERGE,
            added=now,
        )
        for user_id in added
    )
    for user_id in added:
        record(
            ticket_id=target.pk,
            action="watcher_added",
            actor_id=actor.pk,
            now=now,
            detail={"user_id": user_id, "source": WatcherSource.MERGE.value},
        )
    return added


def _tell_applicants(source: Ticket, target: Ticket, *, actor) -> None:
    """Both applicants (once, if they are the same person; not the one who merged), in
    their own language, in the caller's transaction (notifications.sending)."""
    recipients = [u for u in dict.fromkeys((source.creator_id, target.creator_id)) if u != actor.pk]
    if not recipients:
        return
    try:
        send(
            recipients=recipients,
            template_code=TEMPLATE,
            params={
                "billCode": target.bill_code,
                "title": target.title,
                "ticketId": target.pk,
                "sourceBill": source.bill_code,
                "sourceTitle": source.title,
                "actor": actor.get_username(),
            },
            dedupe_key=f"ticket:{source.pk}:merged",
            ticket_id=target.pk,
        )
    except TemplateError:  # logged and counted by send: the merge stands
        logger.warning(
            "notification not sent", extra={"ticket_id": target.pk, "template": TEMPLATE}
        )
