from django.db.models import Count, Max, Q

from ticketing.models import ACTIVE_STATUSES

from .base import PickContext
from .registry import register


def active_loads(member_ids: list[int]) -> dict[int, tuple[int, object]]:
    """{user id: (tickets in status 2 or 3, last assigned_time)} for all members, in one
    aggregate query."""
    from django.contrib.auth import get_user_model

    rows = (
        get_user_model()
        .objects.filter(pk__in=member_ids)
        .annotate(
            active=Count(
                "handled_tickets", filter=Q(handled_tickets__ticket_status__in=ACTIVE_STATUSES)
            ),
            last_assigned=Max("handled_tickets__assigned_time"),
        )
        .values_list("pk", "active", "last_assigned")
    )
    return {pk: (active, last) for pk, active, last in rows}


@register(2, "least load")
class LeastLoad:
    """The member with the fewest active tickets; ties go to the member assigned longest ago
    (never assigned counts as longest ago), then to member order."""

    auto_assigns = True

    def pick(self, ctx: PickContext) -> int | None:
        if not ctx.eligible_ids:
            return None
        loads = active_loads(ctx.eligible_ids)
        order = {member_id: i for i, member_id in enumerate(ctx.eligible_ids)}

        def key(member_id: int):
            active, last = loads.get(member_id, (0, None))
            return (active, last is not None, last.timestamp() if last else 0, order[member_id])

        return min(ctx.eligible_ids, key=key)
