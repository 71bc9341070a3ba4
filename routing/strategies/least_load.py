from typing import ClassVar

from django.utils.translation import gettext_noop

from .base import PickContext
from .registry import register


@register(2, gettext_noop("least load"))
class LeastLoad:
    """The eligible member with the fewest active tickets (pending process or processing);
    ties go to the member assigned longest ago (never assigned counts as longest ago), then
    member order.
    The loads come from the one member query (candidates.py), not a COUNT per member."""

    code: ClassVar[int]  # set by @register
    label: ClassVar[str]
    auto_assigns: ClassVar[bool] = True

    def pick(self, ctx: PickContext) -> int | None:
        if not ctx.eligible_ids:
            return None
        order = {member_id: i for i, member_id in enumerate(ctx.eligible_ids)}

        def key(member_id: int) -> tuple[int, bool, float, int]:
            row = ctx.rows[member_id]
            last = row.last_assigned
            return (row.active, last is not None, last.timestamp() if last else 0, order[member_id])

        return min(ctx.eligible_ids, key=key)
