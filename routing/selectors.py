"""Reads for routing: agents' presence with their load and today's assignments; what waits in
each group's pool."""

from django.contrib.auth import get_user_model
from django.db.models import Count, Min
from django.db.models.functions import Coalesce
from django.utils import timezone

from handler_groups.selectors import groups_of_member
from ticketing.models import ACTIVE_STATUSES, ProcessStatus, Ticket, TicketStatus

from .models import AgentPresence, AssignmentEvent, PresenceState


def own_presence_state(user_id: int) -> str | None:
    """The agent's own presence state (offline without a row yet); None for someone who is
    no member of a handler group and so has no presence. Two primary-key-sized queries."""
    if not groups_of_member(user_id).exists():
        return None
    state = AgentPresence.objects.filter(pk=user_id).values_list("state", flat=True).first()
    return state or PresenceState.OFFLINE


def presence_rows(user_ids: list[int], now) -> list[dict]:
    """Presence of these users with their active ticket count and today's assignments."""
    day_start = timezone.localtime(now).replace(hour=0, minute=0, second=0, microsecond=0)
    users = (
        get_user_model()
        .objects.filter(pk__in=user_ids)
        .values(
            "pk",
            "username",
            "presence__state",
            "presence__state_since",
            "presence__last_heartbeat",
            "presence__online_since",
            "presence__wrap_up_until",
        )
        .order_by("username")
    )
    # The active tickets alone, through ticket_handler_idx (handler, ticket_status): a join
    # of the users to all their handled tickets would read every agent's whole history.
    active = dict(
        Ticket.objects.filter(handler_id__in=user_ids, ticket_status__in=ACTIVE_STATUSES)
        .values("handler_id")
        .annotate(n=Count("pk"))
        .values_list("handler_id", "n")
    )
    today = dict(
        AssignmentEvent.objects.filter(
            user_id__in=user_ids, kind=AssignmentEvent.Kind.ASSIGNED, created__gte=day_start
        )
        .values("user_id")
        .annotate(n=Count("pk"))
        .values_list("user_id", "n")
    )
    return [
        {
            "user_id": u["pk"],
            "username": u["username"],
            "state": u["presence__state"] or "offline",
            "since": u["presence__state_since"],
            "last_heartbeat": u["presence__last_heartbeat"],
            "online_since": u["presence__online_since"],
            "wrap_up_until": u["presence__wrap_up_until"],
            "active_tickets": active.get(u["pk"], 0),
            "assignments_today": today.get(u["pk"], 0),
        }
        for u in users
    ]


def waiting_by_group(group_ids: list[int] | None = None) -> dict[int | None, dict]:
    """Approved tickets waiting in a pool, per group (None: the no-group pool): `n` and
    `since`, the oldest one's queued (or approved) time. All groups when `group_ids` is None."""
    tickets = Ticket.objects.filter(
        process_status=ProcessStatus.APPROVED, ticket_status=TicketStatus.PENDING_ASSIGN
    )
    if group_ids is not None:
        tickets = tickets.filter(handler_group_id__in=group_ids)
    return {
        row["handler_group_id"]: row
        for row in tickets.values("handler_group_id").annotate(
            n=Count("pk"), since=Min(Coalesce("queued_time", "approved_time"))
        )
    }
