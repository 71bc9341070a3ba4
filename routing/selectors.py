"""Reads for routing: agents' presence with their load and today's assignments."""

from django.contrib.auth import get_user_model
from django.db.models import Count, Q
from django.utils import timezone

from ticketing.models import ACTIVE_STATUSES

from .models import AssignmentEvent


def presence_rows(user_ids: list[int], now) -> list[dict]:
    """Presence of these users with their active ticket count and today's assignments."""
    day_start = timezone.localtime(now).replace(hour=0, minute=0, second=0, microsecond=0)
    users = (
        get_user_model()
        .objects.filter(pk__in=user_ids)
        .annotate(
            active_tickets=Count(
                "handled_tickets",
                filter=Q(handled_tickets__ticket_status__in=ACTIVE_STATUSES),
                distinct=True,
            ),
        )
        .values(
            "pk",
            "username",
            "active_tickets",
            "presence__state",
            "presence__state_since",
            "presence__last_heartbeat",
            "presence__online_since",
            "presence__wrap_up_until",
        )
        .order_by("username")
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
            "active_tickets": u["active_tickets"],
            "assignments_today": today.get(u["pk"], 0),
        }
        for u in users
    ]
