from django.contrib.auth import get_user_model
from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from .membership import member_regex
from .models import AssignmentEvent, HandlerGroup


def groups_of_member(user_id: int) -> QuerySet[HandlerGroup]:
    return HandlerGroup.objects.filter(member_user_ids__regex=member_regex(user_id))


def group_ids_for_user(user) -> list[int]:
    """Groups the user works in: as a member or as the leader."""
    if not user.is_authenticated:
        return []
    return list(
        HandlerGroup.objects.filter(
            Q(member_user_ids__regex=member_regex(user.pk)) | Q(leader_id=user.pk)
        ).values_list("pk", flat=True)
    )


def is_member(user, group: HandlerGroup) -> bool:
    return user.is_authenticated and user.pk in group.member_ids


def leads(user, group: HandlerGroup | None) -> bool:
    return group is not None and user.is_authenticated and group.leader_id == user.pk


def presence_rows(user_ids: list[int], now) -> list[dict]:
    """Presence of these users with their active ticket count and today's assignments."""
    from ticketing.models import ACTIVE_STATUSES

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
