from typing import ClassVar

from django.utils.translation import gettext_noop

from .base import PickContext
from .registry import register


@register(3, gettext_noop("online priority"))
class OnlinePriority:
    """The eligible member who has been online longest gets the ticket (quick response over
    balance). Members with no presence record (groups that do not require presence) come
    after those online; among equals, the member assigned longest ago goes first (so a
    group where nobody heartbeats does not hand everything to its first member)."""

    code: ClassVar[int]  # set by @register
    label: ClassVar[str]
    auto_assigns: ClassVar[bool] = True

    def pick(self, ctx: PickContext) -> int | None:
        if not ctx.eligible_ids:
            return None
        order = {member_id: i for i, member_id in enumerate(ctx.eligible_ids)}

        def key(member_id: int) -> tuple[bool, float, bool, float, int]:
            row = ctx.rows[member_id]
            since, last = row.online_since, row.last_assigned
            return (
                since is None,
                since.timestamp() if since else 0,
                last is not None,
                last.timestamp() if last else 0,
                order[member_id],
            )

        return min(ctx.eligible_ids, key=key)
