"""Member rows for routing in one query: account, presence, load, offers, today's count,
last assignment and capacity of every member of a group."""

from datetime import datetime

from django.contrib.auth import get_user_model
from django.db.models import Count, IntegerField, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from handler_groups.models import HandlerGroup, MemberCapacity
from ticketing.models import ACTIVE_STATUSES, Ticket, TicketStatus

from .eligibility import GroupPolicy, MemberRow


def _count(queryset) -> Subquery:
    return Coalesce(
        Subquery(
            queryset.order_by().values("handler").annotate(n=Count("pk")).values("n")[:1],
            output_field=IntegerField(),
        ),
        0,
    )


def member_rows(*, group: HandlerGroup, member_ids: list[int], now: datetime) -> list[MemberRow]:
    """Rows in member order (members without an account are left out). Each figure is an
    index-driven subquery per member, so the cost does not grow with a member's history."""
    if not member_ids:
        return []
    day_start = timezone.localtime(now).replace(hour=0, minute=0, second=0, microsecond=0)
    mine = Ticket.objects.filter(handler=OuterRef("pk"))
    users = (
        get_user_model()
        .objects.filter(pk__in=member_ids)
        .annotate(
            active=_count(mine.filter(ticket_status__in=ACTIVE_STATUSES)),
            open_offers=_count(
                mine.filter(
                    ticket_status=TicketStatus.PENDING_PROCESS,
                    accepted_time__isnull=True,
                    handler_group=group,
                )
            ),
            assigned_today=_count(mine.filter(assigned_time__gte=day_start)),
            last_assigned=Subquery(
                mine.filter(assigned_time__isnull=False)
                .order_by("-assigned_time")
                .values("assigned_time")[:1]
            ),
            own_cap=Subquery(
                MemberCapacity.objects.filter(group=group, user=OuterRef("pk")).values(
                    "max_active"
                )[:1]
            ),
        )
        .values(
            "pk",
            "is_active",
            "presence__state",
            "presence__online_since",
            "presence__idle_since",
            "active",
            "open_offers",
            "assigned_today",
            "last_assigned",
            "own_cap",
        )
    )
    by_id = {row["pk"]: row for row in users}
    rows = []
    for member_id in member_ids:
        row = by_id.get(member_id)
        if row is None:
            continue
        rows.append(
            MemberRow(
                user_id=member_id,
                is_active=row["is_active"],
                presence=row["presence__state"] or "offline",
                online_since=row["presence__online_since"],
                idle_since=row["presence__idle_since"],
                active=row["active"],
                open_offers=row["open_offers"],
                assigned_today=row["assigned_today"],
                last_assigned=row["last_assigned"],
                max_active=row["own_cap"]
                if row["own_cap"] is not None
                else group.max_active_per_member,
            )
        )
    return rows


def policy_of(group: HandlerGroup) -> GroupPolicy:
    return GroupPolicy(
        requires_presence=group.requires_presence,
        offers_enabled=bool(group.offer_timeout_seconds),
        daily_cap=group.daily_cap_per_member,
    )
