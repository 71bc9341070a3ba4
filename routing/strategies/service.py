import logging
import time
from datetime import datetime

from prometheus_client import Histogram

from handler_groups.models import HandlerGroup

from .base import PickContext
from .candidates import member_rows, policy_of
from .eligibility import eligible_ids
from .registry import get_strategy

logger = logging.getLogger(__name__)

PICK_SECONDS = Histogram(
    "assignment_pick_seconds",
    "Latency of one routing decision",
    ["strategy"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1),
)


def pick_handler(
    *,
    group: HandlerGroup,
    ticket_id: int | None,
    now: datetime,
    exclude: frozenset[int] = frozenset(),
) -> tuple[int | None, float]:
    """Choose the member who gets a ticket of `group` by the group's strategy, or None (the
    ticket stays in the pool), and how long the pick took in milliseconds. The caller must
    hold the group row lock (`select_for_update`) inside `transaction.atomic`."""
    started = time.perf_counter()
    if not group.is_enabled:
        return None, 0.0
    strategy = get_strategy(group.assign_strategy)
    if not strategy.auto_assigns:
        return None, 0.0
    member_ids = group.member_ids
    rows = member_rows(group=group, member_ids=member_ids, now=now)
    ctx = PickContext(
        group=group,
        member_ids=member_ids,
        eligible_ids=eligible_ids(rows, policy_of(group), exclude),
        ticket_id=ticket_id,
        now=now,
        rows={row.user_id: row for row in rows},
    )
    chosen = strategy.pick(ctx)
    elapsed = time.perf_counter() - started
    PICK_SECONDS.labels(strategy.label).observe(elapsed)
    return chosen, elapsed * 1000
