"""The ticket workflow: submit, approve, reject, cancel, accept, decline, reply, complete,
reopen, close, transfer. Each service is keyword-only, owns its transaction and applies
transitions of the state machine through `transitions.apply_transition` (compare-and-set +
the audit record); routing decides who gets a ticket (routing.route), sla starts and stops
its clocks."""

import logging
from datetime import datetime

from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone
from django.utils.translation import gettext as _

from attachments.services import attach
from collaboration.models import LinkKind
from config.db import prepared_cursor
from config.errors import ConflictError, InvalidArgument
from handler_groups.models import HandlerGroup
from routing import presence
from routing.offers import decline_offer, offer_answered
from routing.route import lock_group, route
from satisfaction.services import survey_ask
from sla.services import sla_finalize, sla_reopen, sla_resume, sla_start_clocks
from ticketing import categories, lifecycle, notify
from ticketing import fields as custom_fields
from ticketing.lifecycle import IllegalTransition
from ticketing.models import (
    Priority,
    ProcessStatus,
    ReplyType,
    Ticket,
    TicketReply,
    TicketStatus,
)
from ticketing.transitions import apply_transition, apply_transition_along, record
from workflow.mentions import mentioned_in

logger = logging.getLogger(__name__)


def _bill_code(now: datetime) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT nextval('ticket_bill_code_seq')")
        (number,) = cursor.fetchone()
    return f"TK{now:%Y%m%d}{number:06d}"


def ticket_submit(
    *,
    creator,
    title: str,
    content: str,
    priority: int,
    category: str = "",
    handler_group_id: int | None = None,
    attachment_ids: list[int] | None = None,
    fields: dict | None = None,
    now: datetime | None = None,
) -> Ticket:
    """A new ticket, with the creator's uploads (attachment_ids) attached to it.

    `category` must name an active category (400 "category"); without a handler group the
    ticket goes to the category's, if it has an enabled one. `fields` are validated whole
    against the category's custom fields (400 "fields.<key>", required ones included); None
    (a ticket opened by the system, e.g. from mail) skips the required check and stores
    none."""
    now = now or timezone.now()
    chosen = categories.category_for_submit(category)
    if handler_group_id is None and chosen is not None and chosen.handler_group_id:
        own = HandlerGroup.objects.filter(pk=chosen.handler_group_id).first()
        if own is not None and own.is_enabled:
            handler_group_id = own.pk
    values = (
        custom_fields.validate(chosen.name if chosen else "", fields, partial=False)
        if fields is not None
        else {}
    )
    if handler_group_id is not None:
        group = HandlerGroup.objects.filter(pk=handler_group_id).first()
        if group is None:
            raise InvalidArgument("handler_group_id", _("No handler group with this id."))
        if not group.is_enabled:
            raise InvalidArgument("handler_group_id", _("This handler group is disabled."))
    with transaction.atomic():
        ticket = Ticket.objects.create(
            bill_code=_bill_code(now),
            title=title,
            content=content,
            priority=priority,
            category=chosen.name if chosen else "",
            creator=creator,
            handler_group_id=handler_group_id,
            submitted_time=now,
            fields=values,
        )
        record(
            ticket_id=ticket.pk,
            action="submit",
            actor_id=creator.pk,
            now=now,
            to_status=TicketStatus.SUBMITTED,
            detail={"field": "ticket_status"},
        )
        attach(user=creator, ticket=ticket, attachment_ids=attachment_ids or [], now=now)
    return ticket


APPROVAL_INPUTS_SQL = """
SELECT handler_group_id, submitted_time, priority, category, process_status,
       ARRAY(SELECT user_id FROM oa_ticket_watcher
             WHERE ticket_id = oa_ticket_bill.id ORDER BY id) AS watcher_ids
FROM oa_ticket_bill WHERE id = %s
"""
"""What an approval's SLA clocks start from (ticket_approve), and who watches the ticket (told
of the approval: no statement of its own). Locks nothing: the approval's compare-and-set
that follows takes the ticket's row and re-checks its status; these fields do not change
while a ticket awaits approval."""


def ticket_approve(*, ticket_id: int, approver, now: datetime | None = None) -> Ticket:
    """Approve, start the SLA clocks and route the ticket, in one transaction: what the
    clocks start from; the approval (a compare-and-set on the ticket with its audit record
    and the clocks' rows); the group's lock; the member figures; one compare-and-set that
    assigns (or puts in the pool) with its audit record, the cursor, the decision, the
    assignment event and the fold of the member's load rows; the agent's notice (its inbox
    row and deliveries). The group lock is held from the lock to the commit
    (docs/adr/0001-one-statement-assignment.md)."""
    now = now or timezone.now()
    with transaction.atomic():
        # What the SLA clocks start from (fields an approving ticket cannot change under us),
        # so that the deadlines and escalation instants are computed before any lock.
        with prepared_cursor() as cursor:
            cursor.execute(APPROVAL_INPUTS_SQL, [ticket_id])
            row = cursor.fetchone()
        if row is None:
            raise Ticket.DoesNotExist("Ticket matching query does not exist.")
        group_id, submitted_time, priority, category, process_status, watchers = row
        if process_status not in lifecycle.APPROVE.sources:
            raise IllegalTransition(lifecycle.APPROVE, process_status)
        submitted = Ticket(
            pk=ticket_id,
            handler_group_id=group_id,
            submitted_time=submitted_time,
            priority=priority,
            category=category,
        )
        clocks = sla_start_clocks(ticket=submitted, now=now)
        # Approved, with its SLA rows, under the ticket's lock only: a stale approval stops
        # here (IllegalTransition), before the strategy (longest idle's Redis pick) runs.
        approved, _ = apply_transition_along(
            ticket_id=ticket_id,
            transition=lifecycle.APPROVE,
            actor_id=approver.pk,
            now=now,
            values={"approved_time": now, **clocks.fields},
            along=clocks.along,
        )
        # The group lock serialises every routing decision of the group: held only for the
        # member figures → pick → the assignment's compare-and-set → commit.
        ticket = route(
            ticket=approved,
            group=lock_group(approved.handler_group_id),
            actor_id=approver.pk,
            now=now,
        )
        notify.status_changed(ticket, "approve", approver.pk, now.isoformat(), watchers=watchers)
    return ticket


def ticket_reject(*, ticket_id: int, approver, reason: str, now: datetime | None = None) -> Ticket:
    now = now or timezone.now()
    with transaction.atomic():
        ticket = apply_transition(
            ticket_id=ticket_id,
            transition=lifecycle.REJECT,
            actor_id=approver.pk,
            now=now,
            detail={"reason": reason},
        )
        notify.rejected(ticket, reason)
        notify.status_changed(ticket, "reject", approver.pk, now.isoformat())
        return ticket


def ticket_cancel(*, ticket_id: int, user, now: datetime | None = None) -> Ticket:
    now = now or timezone.now()
    with transaction.atomic():
        ticket = apply_transition(
            ticket_id=ticket_id, transition=lifecycle.CANCEL, actor_id=user.pk, now=now
        )
        notify.status_changed(ticket, "cancel", user.pk, now.isoformat())
        return ticket


def ticket_accept(*, ticket_id: int, handler, now: datetime | None = None) -> Ticket:
    """Take the ticket: from the pool (pending assign, anyone allowed to handle it) or as the
    handler it is pending process with. Of several handlers accepting at once exactly one wins; the
    others get IllegalTransition."""
    now = now or timezone.now()
    with transaction.atomic():
        try:
            ticket = apply_transition(
                ticket_id=ticket_id,
                transition=lifecycle.ACCEPT,
                actor_id=handler.pk,
                now=now,
                values={"handler_id": handler.pk, "accepted_time": now, "queued_time": None},
                condition=Q(ticket_status=TicketStatus.PENDING_ASSIGN)
                | Q(ticket_status=TicketStatus.PENDING_PROCESS, handler_id=handler.pk),
            )
            taken_from_pool = ticket.assigned_time is None
            extra = {}
            if ticket.responded_time is None:
                extra["responded_time"] = now
            if taken_from_pool:
                extra["assigned_time"] = now
            if extra:
                Ticket.objects.filter(pk=ticket.pk).update(**extra)
                for field, value in extra.items():
                    setattr(ticket, field, value)
            if taken_from_pool:
                notify.assigned(ticket)  # the handler's inbox confirms what they took
            notify.status_changed(ticket, "accept", handler.pk, now.isoformat())
            if ticket.handler_group_id:
                # An answered offer: the agent is routable again in this group.
                offer_answered(group_id=ticket.handler_group_id, user_id=handler.pk, now=now)
            return ticket
        except IllegalTransition as exc:
            current = Ticket.objects.filter(pk=ticket_id).values("ticket_status", "handler_id")
            row = current.first()
            if row and row["ticket_status"] == TicketStatus.PENDING_PROCESS:
                raise IllegalTransition(lifecycle.ACCEPT, row["ticket_status"]).with_message(
                    _("Cannot accept this ticket: it is assigned to another handler.")
                ) from exc
            raise


DECLINE_REASON_MAX = 500


def ticket_decline(
    *, ticket_id: int, handler, reason: str = "", now: datetime | None = None
) -> Ticket:
    """Turn down a ticket offered or auto-assigned to the caller, before accepting it: back to
    the pool, recorded as the caller's decline (with the reason) and routed again excluding
    everyone who missed or declined it (routing.offers.decline_offer). Someone else's ticket,
    an accepted one or one waiting in the pool: IllegalTransition (409), nothing changed."""
    now = now or timezone.now()
    reason = (reason or "").strip()
    if len(reason) > DECLINE_REASON_MAX:
        raise InvalidArgument(
            "reason",
            _("Ensure this field has no more than %(max)d characters.")
            % {"max": DECLINE_REASON_MAX},
        )
    try:
        return decline_offer(ticket_id=ticket_id, handler_id=handler.pk, reason=reason, now=now)
    except IllegalTransition as exc:
        row = (
            Ticket.objects.filter(pk=ticket_id)
            .values("ticket_status", "handler_id", "accepted_time")
            .first()
        )
        if row is None:
            raise
        if row["accepted_time"] is not None or row["ticket_status"] == TicketStatus.PROCESSING:
            message = _("Cannot decline this ticket: it has been accepted already.")
        elif (
            row["ticket_status"] == TicketStatus.PENDING_PROCESS and row["handler_id"] != handler.pk
        ):
            message = _("Cannot decline this ticket: it is assigned to another handler.")
        elif row["ticket_status"] == TicketStatus.PENDING_ASSIGN:
            message = _(
                "Cannot decline this ticket: it is waiting in the pool, not offered to you."
            )
        else:
            raise
        raise IllegalTransition(lifecycle.DECLINE, row["ticket_status"]).with_message(
            message
        ) from exc


def ticket_reply(
    *,
    ticket_id: int,
    author,
    reply_type: int,
    content: str,
    attachment_ids: list[int] | None = None,
    now: datetime | None = None,
) -> TicketReply:
    """A reply or internal note, with the author's uploads (attachment_ids) attached to it
    (an internal note's files are the team's only)."""
    now = now or timezone.now()
    with transaction.atomic():
        ticket = Ticket.objects.select_for_update().get(pk=ticket_id)
        if ticket.ticket_status == TicketStatus.CLOSED or ticket.process_status in (
            ProcessStatus.REJECTED,
            ProcessStatus.CANCELLED,
        ):
            raise IllegalTransition(lifecycle.CLOSE, None).with_message(
                _("Cannot reply: the ticket is closed.")
            )
        reply = TicketReply.objects.create(
            ticket_id=ticket_id, author=author, reply_type=reply_type, content=content
        )
        files = attach(
            user=author, ticket=ticket, reply=reply, attachment_ids=attachment_ids or [], now=now
        )
        # @username in an internal note tells those of the team it names (workflow/mentions.py).
        mentioned = (
            mentioned_in(ticket=ticket, content=content, author=author)
            if reply_type == ReplyType.INTERNAL
            else []
        )
        counts = {"reply_count": F("reply_count") + 1}
        if reply_type == ReplyType.PUBLIC:
            counts["public_reply_count"] = F("public_reply_count") + 1
        Ticket.objects.filter(pk=ticket_id).update(**counts)
        record(
            ticket_id=ticket_id,
            action="reply",
            actor_id=author.pk,
            now=now,
            detail={
                "reply_id": reply.pk,
                "reply_type": ReplyType(reply_type).name.lower(),
                **({"attachment_ids": [f.pk for f in files]} if files else {}),
                **({"mentioned": mentioned} if mentioned else {}),
            },
        )
        if ticket.sla_paused and author.pk == ticket.creator_id and reply_type == ReplyType.PUBLIC:
            # The applicant answered: the team is no longer waiting on them.
            sla_resume(ticket_id=ticket_id, user=author, now=now)
        notify.replied(ticket, reply, mentioned=mentioned)
        notify.mentioned(ticket, reply, mentioned)
        return reply


class OpenChildren(IllegalTransition):
    """A parent cannot be completed while a child is open: the 409 lists them."""

    def __init__(self, children: list[dict]):
        super().__init__(lifecycle.COMPLETE, TicketStatus.PROCESSING)
        codes = ", ".join(child["bill_code"] for child in children)
        self.with_message(
            _("Cannot complete this ticket: its child tickets %(codes)s are still open.")
            % {"codes": codes}
        )
        self.extra = {"open_children": children}


def open_children(ticket_id: int) -> list[dict]:
    """The ticket's children not yet completed or closed (approved or awaiting approval),
    oldest first: what stops its completion."""
    children = (
        Ticket.objects.filter(
            links_out__target_id=ticket_id,
            links_out__kind=LinkKind.PARENT,
        )
        .exclude(ticket_status__in=(TicketStatus.COMPLETED, TicketStatus.CLOSED))
        .exclude(process_status__in=(ProcessStatus.REJECTED, ProcessStatus.CANCELLED))
        .order_by("id")
        .values("id", "bill_code", "ticket_status", "process_status")
    )
    return [dict(child) for child in children]


def ticket_complete(*, ticket_id: int, handler, now: datetime | None = None) -> Ticket:
    """Complete the ticket (its handler only): the SLA outcome is final and the applicant is
    told and asked how it went (satisfaction). A parent with open children is refused
    (OpenChildren, 409): checked under the ticket's row lock, which adding a child also
    takes (collaboration.services.link_add), so no child slips in between."""
    now = now or timezone.now()
    with transaction.atomic():
        ticket = apply_transition(
            ticket_id=ticket_id,
            transition=lifecycle.COMPLETE,
            actor_id=handler.pk,
            now=now,
            values={"completed_time": now},
            condition=Q(handler_id=handler.pk),
        )
        children = open_children(ticket_id)
        if children:
            raise OpenChildren(children)  # (rolls the completion back)
        sla_finalize(ticket=ticket, now=now)
        presence.ticket_completed(user_id=handler.pk, now=now)
        notify.completed(ticket)
        notify.status_changed(ticket, "complete", handler.pk, now.isoformat())
        survey_ask(ticket=ticket, now=now)
        return ticket


REOPEN_REASON_MAX = 2000


def ticket_reopen(*, ticket_id: int, user, now: datetime | None = None, reason: str = "") -> Ticket:
    """Take a completed ticket up again (a reply by mail on it, or the Reopen action): back to
    processing with the same handler, completed_time cleared. Who may is the caller's check
    (access "reopen": the team, or the applicant within REOPEN_DAYS); `user` is None when no
    person is named (recorded as the system). A ticket not completed — still open, closed,
    merged, or reopened already by a concurrent caller — is an IllegalTransition (409),
    nothing changed: the compare-and-set also names the completion it reopens, so a ticket
    completed again in between is not reopened on the strength of the earlier one.

    The resolve clock runs on from where it stopped (sla_reopen: the time while completed
    does not count, the outcome is no longer final, the escalation levels are re-timed).
    The handler's load counts the ticket again by itself: the load rows follow the ticket's
    status (triggers on the ticket table, routing/migrations/0009), in this statement, so
    routing sees the handler one ticket fuller at once; their presence stays as it is (a
    wrap-up the completion started runs out on its own). The satisfaction survey asked at
    the completion stays as it is, answered or not: the applicant may still rate the help,
    and the next completion asks no second time (satisfaction.services.survey_ask). The
    applicant, the handler and the watchers are told, except whoever reopened it."""
    now = now or timezone.now()
    reason = (reason or "").strip()
    if len(reason) > REOPEN_REASON_MAX:
        raise InvalidArgument(
            "reason",
            _("Ensure this field has no more than %(max)d characters.")
            % {"max": REOPEN_REASON_MAX},
        )
    actor_id = user.pk if user is not None else None
    with transaction.atomic():
        completed_time = (
            Ticket.objects.filter(pk=ticket_id).values_list("completed_time", flat=True).first()
        )
        ticket = apply_transition(
            ticket_id=ticket_id,
            transition=lifecycle.REOPEN,
            actor_id=actor_id,
            now=now,
            values={"completed_time": None},
            condition=Q(completed_time=completed_time)
            if completed_time is not None
            else Q(completed_time__isnull=True),
            detail={
                "completed_time": completed_time.isoformat() if completed_time else None,
                **({"reason": reason} if reason else {}),
            },
        )
        sla_reopen(ticket=ticket, completed_time=completed_time, now=now, user=user)
        notify.reopened(ticket, user, now.isoformat(), reason=reason)
        return ticket


def ticket_close(*, ticket_id: int, user, now: datetime | None = None) -> Ticket:
    """Close the ticket. A completed ticket's SLA outcome was written at completion and stays
    as it is; a ticket closed unfinished (pending assign, pending process, processing) has
    its clocks finalised at the close, in the same transaction."""
    now = now or timezone.now()
    with transaction.atomic():
        ticket = apply_transition(
            ticket_id=ticket_id,
            transition=lifecycle.CLOSE,
            actor_id=user.pk,
            now=now,
            values={"closed_time": now},
        )
        if ticket.completed_time is None:
            sla_finalize(ticket=ticket, now=now)
        notify.status_changed(ticket, "close", user.pk, now.isoformat())
        return ticket


def ticket_set_priority(
    *, ticket_id: int, priority: int, user, now: datetime | None = None
) -> Ticket:
    """Change an open ticket's priority, recorded in its history ("priority", from and to).
    Its SLA clocks keep the deadlines they got at approval (the rule matched then); a closed,
    rejected or cancelled ticket's priority is part of its record and stays (409)."""
    now = now or timezone.now()
    try:
        priority = Priority(priority)
    except ValueError:
        raise InvalidArgument("priority", _("Not a priority.")) from None
    with transaction.atomic():
        ticket = Ticket.objects.select_for_update().get(pk=ticket_id)
        if ticket.ticket_status == TicketStatus.CLOSED or ticket.process_status in (
            ProcessStatus.REJECTED,
            ProcessStatus.CANCELLED,
        ):
            raise ConflictError(_("A closed ticket's priority cannot change."))
        if ticket.priority == priority:
            return ticket
        old = ticket.priority
        Ticket.objects.filter(pk=ticket_id).update(priority=priority)
        ticket.priority = priority
        record(
            ticket_id=ticket_id,
            action="priority",
            actor_id=user.pk,
            now=now,
            detail={"from": int(old), "to": int(priority)},
        )
    return ticket


def ticket_transfer(
    *,
    ticket_id: int,
    user,
    handler_id: int | None = None,
    handler_group_id: int | None = None,
    now: datetime | None = None,
) -> Ticket:
    """Hand the ticket to another handler (pending process: waiting for them to accept) and/or
    another group. To a group without a handler the ticket goes back to the pool and the new
    group's strategy routes it."""
    now = now or timezone.now()
    if handler_id is None and handler_group_id is None:
        raise InvalidArgument("non_field_errors", _("Give handler_id, handler_group_id or both."))
    with transaction.atomic():
        # No such ticket: Ticket.DoesNotExist (a 404), as the other services raise.
        current = Ticket.objects.filter(pk=ticket_id).values("handler_group_id").get()
        target_group_id = handler_group_id or current["handler_group_id"]
        # Lock order: group rows first (by id, so two transfers cannot deadlock), then ticket.
        group_ids = sorted({g for g in (current["handler_group_id"], target_group_id) if g})
        groups = {
            g.pk: g for g in HandlerGroup.objects.select_for_update().filter(pk__in=group_ids)
        }
        target_group = groups.get(target_group_id) if target_group_id else None
        if handler_group_id is not None:
            if target_group is None:
                raise InvalidArgument("handler_group_id", _("No handler group with this id."))
            if not target_group.is_enabled:
                raise InvalidArgument("handler_group_id", _("This handler group is disabled."))
        if handler_id is not None:
            _check_transfer_target(handler_id, target_group)
        detail = {
            "from_group_id": current["handler_group_id"],
            "to_group_id": target_group_id,
            "to_handler_id": handler_id,
        }
        if handler_id is not None:
            ticket = apply_transition(
                ticket_id=ticket_id,
                transition=lifecycle.TRANSFER_TO_HANDLER,
                actor_id=user.pk,
                now=now,
                values={
                    "handler_id": handler_id,
                    "handler_group_id": target_group_id,
                    "assigned_time": now,
                    "accepted_time": None,
                },
                detail=detail,
            )
            notify.assigned(ticket)
            return ticket
        return _to_group_pool(
            ticket_id, target_group, actor_id=user.pk, now=now, detail=detail, trigger="transfer"
        )


def _to_group_pool(
    ticket_id: int, group, *, actor_id, now: datetime, detail: dict, trigger: str
) -> Ticket:
    """Back to a pool, the group's (locked) strategy routing it: a transfer to a group, or an
    escalation level's move (`trigger`: "transfer" or "escalation", the routing decision's)."""
    ticket = apply_transition(
        ticket_id=ticket_id,
        transition=lifecycle.TRANSFER_TO_GROUP,
        actor_id=actor_id,
        now=now,
        values={
            "handler_id": None,
            "handler_group_id": group.pk if group else None,
            "assigned_time": None,
            "accepted_time": None,
            "queued_time": now,
        },
        detail=detail,
    )
    return route(ticket=ticket, group=group, actor_id=actor_id, now=now, trigger=trigger)


def ticket_escalate_to_group(*, ticket_id: int, group_id: int, level: int, now: datetime) -> Ticket:
    """An escalation level moves the ticket to another group (registered with the SLA's
    escalation at start-up): back to a pool, the new group's strategy routes it. The caller
    has just checked that the clock is still unanswered, in the same transaction."""
    with transaction.atomic():
        current = (
            Ticket.objects.filter(pk=ticket_id).values_list("handler_group_id", flat=True).first()
        )
        group_ids = sorted({g for g in (current, group_id) if g})
        groups = {
            g.pk: g for g in HandlerGroup.objects.select_for_update().filter(pk__in=group_ids)
        }
        target = groups.get(group_id)
        if target is None or not target.is_enabled:
            raise InvalidArgument("reassign_group_id", _("The group is missing or disabled."))
        detail = {"from_group_id": current, "to_group_id": group_id, "sla_level": level}
        return _to_group_pool(
            ticket_id, target, actor_id=None, now=now, detail=detail, trigger="escalation"
        )


def _check_transfer_target(handler_id: int, group: HandlerGroup | None) -> None:
    from django.contrib.auth import get_user_model

    if not get_user_model().objects.filter(pk=handler_id, is_active=True).exists():
        raise InvalidArgument("handler_id", _("No active user with this id."))
    if group is not None and handler_id not in group.member_ids:
        raise InvalidArgument(
            "handler_id", _("This user is not a member of the target handler group.")
        )
