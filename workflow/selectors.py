"""Reads: the ticket pool (the same selectors serve the API and the console)."""

from datetime import datetime, timedelta

from django.db.models import Case, F, IntegerField, Q, QuerySet, Value, When
from django.utils import timezone

from config.pagination import RowCount, count_rows
from ticketing import fields as ticket_fields
from ticketing import search, tags
from ticketing.access import Audience, is_approver, pool_scope, visible_tickets
from ticketing.models import (
    OPEN_STATUSES,
    ProcessStatus,
    ReplyType,
    Ticket,
    TicketRecord,
    TicketReply,
    TicketStatus,
)

MY_HANDLING_DEFAULT = (
    TicketStatus.PENDING_PROCESS,
    TicketStatus.PROCESSING,
    TicketStatus.COMPLETED,
)


def pool_pending_for(user) -> QuerySet[Ticket]:
    return Ticket.objects.filter(pool_scope(user), ticket_status=TicketStatus.PENDING_ASSIGN)


def pool_my_handling_for(user, *, ticket_status: int | None = None) -> QuerySet[Ticket]:
    qs = Ticket.objects.filter(handler=user)
    if ticket_status is None:
        return qs.filter(ticket_status__in=MY_HANDLING_DEFAULT)
    return qs.filter(ticket_status=ticket_status)


def pool_all_for(user) -> QuerySet[Ticket]:
    return Ticket.objects.filter(pool_scope(user))


# The agent's "My work": what is handed to them and not yet accepted, then what they are
# working on, then what waits on the applicant (its resolve clock paused).
MY_WORK_DEFAULT = (TicketStatus.PENDING_PROCESS, TicketStatus.PROCESSING)
MY_WORK_SECTIONS = ("offered", "in_progress", "paused", "other")


def pool_my_work_for(user, *, ticket_status: int | None = None) -> QuerySet[Ticket]:
    qs = Ticket.objects.filter(handler=user)
    if ticket_status is None:
        return qs.filter(ticket_status__in=MY_WORK_DEFAULT)
    return qs.filter(ticket_status=ticket_status)


def with_work_section(qs: QuerySet[Ticket]) -> QuerySet[Ticket]:
    """`work_section`: 0 offered or assigned and not accepted, 1 in progress, 2 paused (waiting
    on the applicant), 3 anything else (a status the agent filtered for)."""
    return qs.annotate(
        work_section=Case(
            When(ticket_status=TicketStatus.PENDING_PROCESS, then=Value(0)),
            When(ticket_status=TicketStatus.PROCESSING, sla_paused=False, then=Value(1)),
            When(ticket_status=TicketStatus.PROCESSING, sla_paused=True, then=Value(2)),
            default=Value(3),
            output_field=IntegerField(),
        )
    )


def with_sla_due(qs: QuerySet[Ticket]) -> QuerySet[Ticket]:
    """`sla_due`: the deadline of the clock the SLA badge shows (response until first
    accepted, then resolve); None when no clock runs (closed, completed, paused, no rule)."""
    return qs.annotate(
        sla_due=Case(
            When(~Q(process_status=ProcessStatus.APPROVED), then=Value(None)),
            When(~Q(ticket_status__in=OPEN_STATUSES), then=Value(None)),
            When(
                responded_time__isnull=True,
                response_deadline__isnull=False,
                then=F("response_deadline"),
            ),
            When(sla_paused=True, then=Value(None)),
            default=F("resolve_deadline"),
        )
    )


def search_tickets(qs: QuerySet[Ticket], q: str | None) -> QuerySet[Ticket]:
    """Tickets whose title, bill code or applicant's username contains each word of `q` (any
    case), found through the search index (ticketing/search.py)."""
    return search.search(qs, q, people=("creator",))


# sort: sla = most urgent deadline first (no clock last), priority = urgent first,
# age = oldest first, -age = newest first. None: newest first by id (the pool index).
POOL_SORTS = ("sla", "priority", "age", "-age")


def sort_tickets(qs: QuerySet[Ticket], sort: str | None) -> QuerySet[Ticket]:
    if sort is None:
        return qs.order_by("-id")
    if sort not in POOL_SORTS:
        raise ValueError(f"sort must be one of {', '.join(POOL_SORTS)}")
    if sort == "age":
        return qs.order_by("submitted_time", "id")
    if sort == "-age":
        return qs.order_by("-submitted_time", "-id")
    qs = with_sla_due(qs)
    due = F("sla_due").asc(nulls_last=True)
    if sort == "priority":
        return qs.order_by("-priority", due, "submitted_time", "id")
    return qs.order_by(due, "-priority", "submitted_time", "id")


# The SLA states a list can ask for (`sla=`), each among open approved tickets: a response or
# resolve deadline within the hour and not passed yet, a clock that timed out, a paused resolve
# clock (waiting on the applicant).
SLA_STATES = ("response_due_1h", "resolve_due_1h", "breached", "paused")
SLA_DUE_WITHIN = timedelta(hours=1)


def sla_state_condition(state: str, now: datetime) -> Q:
    """`sla=<state>` as a condition on the ticket. The two "due" states match the partial
    indexes the SLA scan reads (ticket_sla_response_idx, ticket_sla_resolve_idx)."""
    running = Q(process_status=ProcessStatus.APPROVED, ticket_status__in=OPEN_STATUSES)
    soon = now + SLA_DUE_WITHIN
    if state == "response_due_1h":
        return running & Q(
            response_timeout=False,
            responded_time__isnull=True,
            response_deadline__gt=now,
            response_deadline__lte=soon,
        )
    if state == "resolve_due_1h":
        return running & Q(
            resolve_timeout=False,
            sla_paused=False,
            resolve_deadline__gt=now,
            resolve_deadline__lte=soon,
        )
    if state == "breached":
        return running & (Q(response_timeout=True) | Q(resolve_timeout=True))
    if state == "paused":
        return running & Q(sla_paused=True)
    raise ValueError(f"sla must be one of {', '.join(SLA_STATES)}")


# handler=: "me" (the caller), "none" (nobody yet) or a person's id.
HANDLER_ME, HANDLER_NONE = "me", "none"


def filter_tickets(
    qs: QuerySet[Ticket],
    user,
    *,
    priority: int | None = None,
    category: str | None = None,
    ticket_status: int | None = None,
    statuses: list[int] | None = None,
    handler_group: int | None = None,
    handler: int | str | None = None,
    sla: str | None = None,
    q: str | None = None,
    tag: str | None = None,
    fields: dict[str, str] | None = None,
    now: datetime | None = None,
) -> QuerySet[Ticket]:
    """`qs` narrowed by the pool's filters (the pool, saved views and the export share them)."""
    if priority is not None:
        qs = qs.filter(priority=priority)
    if category:
        qs = qs.filter(category=category)
    if ticket_status is not None:
        qs = qs.filter(ticket_status=ticket_status)
    if statuses:
        qs = qs.filter(ticket_status__in=statuses)
    if handler_group is not None:
        qs = qs.filter(handler_group_id=handler_group)
    if handler == HANDLER_ME:
        qs = qs.filter(handler_id=user.pk)
    elif handler == HANDLER_NONE:
        qs = qs.filter(handler__isnull=True)
    elif handler is not None:
        qs = qs.filter(handler_id=int(handler))
    if sla:
        qs = qs.filter(sla_state_condition(sla, now or timezone.now()))
    if tag:
        qs = tags.filter_tag(qs, tag)
    if fields:
        qs = ticket_fields.filter_fields(qs, fields)
    return search_tickets(qs, q)


def pool_for(
    user,
    *,
    view: str,
    sort: str | None = None,
    ticket_status: int | None = None,
    **filters,
) -> QuerySet[Ticket]:
    """The agent's lists: pending (their groups' pool), my_handling (theirs in 2, 3, 4),
    mine ("My work": theirs in 2, 3, by section first) and all (their groups'), narrowed by
    `filters` (filter_tickets' keywords: priority, category, statuses, handler_group, handler,
    sla, q, tag, fields, now)."""
    if view == "pending":
        qs = pool_pending_for(user)
    elif view == "my_handling":
        qs = pool_my_handling_for(user, ticket_status=ticket_status)
        ticket_status = None
    elif view == "mine":
        qs = pool_my_work_for(user, ticket_status=ticket_status)
        ticket_status = None
    else:
        qs = pool_all_for(user)
    qs = filter_tickets(qs, user, ticket_status=ticket_status, **filters)
    if view == "mine":
        ordered = sort_tickets(with_work_section(qs), sort or "sla")
        return ordered.order_by("work_section", *ordered.query.order_by)
    return sort_tickets(qs, sort)


def pool_counts_for(user) -> dict[str, RowCount]:
    """The agent's tab counts: mine (My work), pending and all, each exact up to
    EXACT_COUNT_LIMIT tickets and estimated beyond (counting a group's years of history would
    read all of it on every page)."""
    scope = pool_scope(user)
    return {
        "mine": count_rows(pool_my_work_for(user)),
        "pending": count_rows(pool_pending_for(user)),
        "all": count_rows(Ticket.objects.filter(scope)),
    }


def my_submitted_tickets(user) -> QuerySet[Ticket]:
    return Ticket.objects.filter(creator=user).order_by("-id")


def ticket_for(user, ticket_id: int) -> Ticket:
    """The ticket if the user may see it; Ticket.DoesNotExist (a 404) otherwise."""
    return visible_tickets(user).select_related("handler_group").get(pk=ticket_id)


def awaiting_approval_for(user) -> QuerySet[Ticket]:
    """Submitted tickets waiting for an approver, oldest first; empty for non-approvers."""
    if not is_approver(user):
        return Ticket.objects.none()
    return Ticket.objects.filter(process_status=ProcessStatus.APPROVING).order_by(
        "submitted_time", "id"
    )


# The applicant's public story of their ticket: these steps, with only these details.
PUBLIC_RECORD_DETAIL = {
    "submit": ("field",),
    "approve": ("field",),
    "reject": ("field", "reason"),
    "cancel": ("field",),
    "reply": ("reply_id", "reply_type", "attachment_ids"),
    "attachment_removed": ("attachment_id", "filename", "reply_id"),
    "complete": ("field",),
    "reopen": ("field", "reason"),
    "close": ("field",),
    # Working together (collaboration/): who follows it, and where a duplicate went.
    "watcher_added": ("user_id", "source"),
    "watcher_removed": ("user_id",),
    "merge": ("field", "into_id", "into_bill"),
    "merged_from": ("source_id", "source_bill"),
}
PUBLIC_REPLY_LABEL = ReplyType.PUBLIC.name.lower()  # as records store it (services.py)


def records_for(audience: Audience, ticket: Ticket) -> list[TicketRecord]:
    """The ticket's audit trail as this viewer may read it: all of it for staff-side viewers;
    for anyone else the public story — submitted, approved or rejected, cancelled, public
    replies, public files removed, completed, reopened, closed — with no internal note,
    routing step, SLA event or handler id (the actor is kept only when it is the applicant or
    the author of a public reply)."""
    records = ticket.records.select_related("actor").order_by("id")
    if audience.sees_internals(ticket):
        return list(records)
    public = []
    for record in records.filter(action__in=PUBLIC_RECORD_DETAIL):
        detail = record.detail or {}
        if record.action == "reply" and detail.get("reply_type") != PUBLIC_REPLY_LABEL:
            continue
        if record.action == "attachment_removed" and detail.get("audience") != "public":
            continue  # an internal note's file
        kept = PUBLIC_RECORD_DETAIL[record.action]
        record.detail = {key: detail[key] for key in kept if key in detail}
        if record.action != "reply" and record.actor_id != ticket.creator_id:
            record.actor_id, record.actor = None, None
        public.append(record)
    return public


def replies_for(audience: Audience, ticket: Ticket) -> QuerySet[TicketReply]:
    """Every reply for staff-side viewers; public ones for everyone else. In time order: the
    replies of a duplicate merged into the ticket keep their own ids and times
    (collaboration.services.merging), so the id is no longer the order (the reply written
    last still has the greatest id, wherever its time puts it). `merged_from`: where a moved
    reply came from."""
    replies = ticket.replies.select_related("author", "merged_from").order_by("created", "id")
    if audience.sees_internals(ticket):
        return replies
    return replies.filter(reply_type=ReplyType.PUBLIC)
