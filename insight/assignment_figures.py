"""Assignment metrics per group and day, from AssignmentEvent rows; declines from the tickets'
"decline" audit records (a decline is that record: see offers.decline_offer)."""

import statistics
from datetime import date, datetime, time, timedelta

from django.db.models import Count, Q
from django.utils import timezone

from handler_groups.models import HandlerGroup
from routing.models import AssignmentEvent
from ticketing import lifecycle
from ticketing.models import TicketRecord


def _percentile(values: list[float], p: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    k = (len(ordered) - 1) * p
    lo = int(k)
    hi = min(lo + 1, len(ordered) - 1)
    return round(ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo), 3)


def assignment_figures(*, group: HandlerGroup, day: date) -> dict:
    start = timezone.make_aware(datetime.combine(day, time.min))
    events = AssignmentEvent.objects.filter(
        group=group, created__gte=start, created__lt=start + timedelta(days=1)
    )
    per_agent = {
        row["user_id"]: row
        for row in events.filter(user__isnull=False)
        .values("user_id", "user__username")
        .annotate(
            assigned=Count("pk", filter=Q(kind=AssignmentEvent.Kind.ASSIGNED)),
            missed=Count("pk", filter=Q(kind=AssignmentEvent.Kind.MISSED)),
        )
    }
    declined = dict(
        TicketRecord.objects.filter(
            action=lifecycle.DECLINE.name,
            detail__group_id=group.pk,
            actor__isnull=False,
            created__gte=start,
            created__lt=start + timedelta(days=1),
        )
        .values("actor_id")
        .annotate(n=Count("pk"))
        .values_list("actor_id", "n")
    )
    from django.contrib.auth import get_user_model

    names = dict(
        get_user_model().objects.filter(pk__in=group.member_ids).values_list("pk", "username")
    )
    agents = []
    for member_id in group.member_ids:
        row = per_agent.pop(member_id, None)
        agents.append(
            {
                "user_id": member_id,
                "username": names.get(member_id),
                "assigned": row["assigned"] if row else 0,
                "missed": row["missed"] if row else 0,
                "declined": declined.pop(member_id, 0),
            }
        )
    for row in per_agent.values():  # former members who got tickets that day
        agents.append(
            {
                "user_id": row["user_id"],
                "username": row["user__username"],
                "assigned": row["assigned"],
                "missed": row["missed"],
                "declined": declined.pop(row["user_id"], 0),
            }
        )
    if declined:  # former members who only declined that day
        former = get_user_model().objects.filter(pk__in=declined).values_list("pk", "username")
        for user_id, username in former.order_by("pk"):
            agents.append(
                {
                    "user_id": user_id,
                    "username": username,
                    "assigned": 0,
                    "missed": 0,
                    "declined": declined[user_id],
                }
            )
    counts = [a["assigned"] for a in agents]
    latencies = [
        ms
        for ms in events.filter(
            kind=AssignmentEvent.Kind.ASSIGNED, pick_ms__isnull=False
        ).values_list("pick_ms", flat=True)
        if ms is not None  # (the filter's: for the type checker)
    ]
    return {
        "group": group.pk,
        "date": day.isoformat(),
        "agents": agents,
        "assigned": sum(counts),
        "missed": sum(a["missed"] for a in agents),
        "declined": sum(a["declined"] for a in agents),
        "overflowed": events.filter(kind=AssignmentEvent.Kind.OVERFLOWED).count(),
        "reclaimed_then_assigned": events.filter(
            kind=AssignmentEvent.Kind.ASSIGNED, reclaimed=True
        ).count(),
        "stddev_assigned": round(statistics.pstdev(counts), 4) if counts else None,
        "pick_ms_p50": _percentile(latencies, 0.5),
        "pick_ms_p95": _percentile(latencies, 0.95),
    }
