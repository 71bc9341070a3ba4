import logging
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from prometheus_client import Histogram

from handler_groups.models import HandlerGroup

from .base import PickContext
from .candidates import member_rows, policy_of
from .eligibility import MemberRow, ineligibility
from .registry import get_strategy

logger = logging.getLogger(__name__)

PICK_SECONDS = Histogram(
    "assignment_pick_seconds",
    "Latency of one routing decision",
    ["strategy"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1),
)


@dataclass(frozen=True)
class Pick:
    """A routing decision: who was chosen (None: the ticket waits in the pool), how long the
    pick took, and what it saw (`members`: one dict per member, in member order; None when
    the group does not route by itself, disabled or manual, so no decision was made)."""

    chosen: int | None
    pick_ms: float
    members: list[dict] | None
    # How to write to the chosen member, when the member figures said (their notice).
    readers: dict = field(default_factory=dict)


def pick_handler(
    *,
    group: HandlerGroup,
    ticket_id: int | None,
    now: datetime,
    exclude: Mapping[int, str] | Collection[int] = frozenset(),
) -> Pick:
    """Choose the member who gets a ticket of `group` by the group's strategy, or None (the
    ticket stays in the pool), and how long the pick took in milliseconds. `exclude`: members
    kept away from this ticket (user id → eligibility.MISSED / DECLINED). The caller must
    hold the group row lock (`select_for_update`) inside `transaction.atomic`. A strategy
    writes nothing to PostgreSQL: round robin moves `group.last_assign_index` in memory,
    and routing (route.py) stores it with the assignment."""
    started = time.perf_counter()
    if not group.is_enabled:
        return Pick(None, 0.0, None)
    strategy = get_strategy(group.assign_strategy)
    if not strategy.auto_assigns:
        return Pick(None, 0.0, None)
    member_ids = group.member_ids
    rows = member_rows(group=group, member_ids=member_ids, now=now)
    reasons = ineligibility(rows, policy_of(group), exclude)
    ctx = PickContext(
        group=group,
        member_ids=member_ids,
        eligible_ids=[user_id for user_id, reason in reasons.items() if not reason],
        ticket_id=ticket_id,
        now=now,
        rows={row.user_id: row for row in rows},
    )
    cursor = group.last_assign_index
    chosen = strategy.pick(ctx)
    elapsed = time.perf_counter() - started
    PICK_SECONDS.labels(strategy.label).observe(elapsed)
    members = [seen(row, reasons[row.user_id], group.requires_presence) for row in rows]
    # A strategy that takes turns says whose turn it last was: the decision records it with
    # that member, and the assignment's record names them (last_turn).
    came_before = getattr(strategy, "came_before", None)
    if came_before is not None and chosen is not None:
        previous = came_before(member_ids, cursor)
        for member in members:
            if member["user_id"] == previous and previous != chosen:
                member["last_turn"] = True
    reader = ctx.rows[chosen].reader if chosen in ctx.rows else None
    return Pick(chosen, elapsed * 1000, members, {chosen: reader} if reader else {})


def last_turn(members: list[dict] | None) -> dict:
    """What an assignment's audit record says of the turn: `after_id`, the member whose turn
    it last was, when the decision recorded one (round robin; `last_turn` in `members`)."""
    for member in members or ():
        if member.get("last_turn"):
            return {"after_id": member["user_id"]}
    return {}


def seen(row: MemberRow, reason: str | None, requires_presence: bool) -> dict:
    """One member as a routing decision records it (JSON), from the figures already fetched.
    `idle_since` is what longest idle ranks by: the later of the presence's idle-since and
    the last assignment (the last assignment alone in groups without presence)."""
    idle = row.idle_since if requires_presence else None
    if row.last_assigned is not None and (idle is None or row.last_assigned > idle):
        idle = row.last_assigned
    return {
        "user_id": row.user_id,
        "username": row.username,
        "state": row.presence,
        "active": row.active,
        "max_active": row.max_active,
        "open_offers": row.open_offers,
        "online_since": row.online_since.isoformat() if row.online_since else None,
        "idle_since": idle.isoformat() if idle else None,
        "assigned_today": row.assigned_today,
        "eligible": reason is None,
        "reason": reason,
    }


def members_seen(
    *,
    group: HandlerGroup,
    now: datetime,
    exclude: Mapping[int, str] | Collection[int] = frozenset(),
) -> list[dict]:
    """What a decision that does not pick records of the group's members (an overflow out of
    the group: why nobody there could take the ticket)."""
    rows = member_rows(group=group, member_ids=group.member_ids, now=now)
    reasons = ineligibility(rows, policy_of(group), exclude)
    return [seen(row, reasons[row.user_id], group.requires_presence) for row in rows]
