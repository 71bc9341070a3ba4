import time
from typing import ClassVar

from django.utils.translation import gettext_noop

from routing import idle_pool, reconcile

from .base import PickContext
from .registry import register


@register(4, gettext_noop("longest idle"))
class LongestIdle:
    """ACD pick: the eligible member idle longest (since their last assignment or the end of
    their wrap-up; a newly online agent's score is pushed back by the warm-up), taken
    atomically from the group's Redis pool by a Lua script. Redis unreachable → None (the
    ticket waits in the pool; reconciliation restores routing later)."""

    code: ClassVar[int]  # set by @register
    label: ClassVar[str]
    auto_assigns: ClassVar[bool] = True

    def pick(self, ctx: PickContext) -> int | None:
        if not ctx.eligible_ids:
            return None
        group = ctx.group
        chosen = idle_pool.pick(group.pk, ctx.eligible_ids)
        if chosen is None:
            # PostgreSQL (the record) finds someone eligible but the Redis pool does not: it
            # has drifted (or, in a group where nobody heartbeats, was never built). Rebuild
            # the group's keys from PostgreSQL and try once more.
            try:
                reconcile.reconcile_group(group=group, now=ctx.now)
            except Exception:  # Redis down: the ticket waits in the pool
                return None
            chosen = idle_pool.pick(group.pk, ctx.eligible_ids)
        if chosen is not None and not group.offer_timeout_seconds:
            # No offers in this group: the agent is idle again from this assignment on. The
            # assignment happens now, under the group lock: an approval that waited for the
            # lock carries an earlier `now`, which would make this agent look idle longer
            # than one picked just before.
            assigned_at = max(ctx.now.timestamp(), time.time())
            idle_pool.clear_offer(group.pk, chosen, back_to_pool_at=assigned_at)
        return chosen
