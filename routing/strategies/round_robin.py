from typing import ClassVar

from django.utils.translation import gettext_noop

from .base import PickContext
from .registry import register


@register(1, gettext_noop("round robin"))
class RoundRobin:
    """Walk the member list from the member after the last one assigned, skipping members who
    are not eligible; the cursor moves to the member actually chosen (in memory: routing
    writes it in the assignment's own statement). The caller holds the group row lock, so
    concurrent approvals see each other's cursor moves."""

    code: ClassVar[int]  # set by @register
    label: ClassVar[str]
    auto_assigns: ClassVar[bool] = True

    def pick(self, ctx: PickContext) -> int | None:
        members = ctx.member_ids
        if not members or not ctx.eligible_ids:
            return None
        eligible = set(ctx.eligible_ids)
        start = (ctx.group.last_assign_index + 1) % len(members)
        for step in range(len(members)):
            index = (start + step) % len(members)
            if members[index] in eligible:
                ctx.group.last_assign_index = index
                return members[index]
        return None

    def came_before(self, member_ids: list[int], cursor: int) -> int | None:
        """The member whose turn it last was (the cursor, before this pick moved it): the
        walk starts after them. None before the group's first pick, or when the member list
        has shrunk under the cursor."""
        if 0 <= cursor < len(member_ids):
            return member_ids[cursor]
        return None
