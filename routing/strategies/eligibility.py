"""The one eligibility rule for routing, as a pure function over member rows: every strategy
gets its candidates from here (round robin, least load, online priority, longest idle)."""

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from accounts.preferences import Reader

# Why a member is not eligible (a routing decision stores one per member; None: eligible).
INACTIVE = "inactive"
MISSED = "missed_this_ticket"
DECLINED = "declined_this_ticket"
OFFLINE = "offline"
AT_CAPACITY = "at_capacity"
HOLDING_OFFER = "holding_offer"
OVER_DAILY_CAP = "over_daily_cap"


@dataclass(frozen=True)
class MemberRow:
    """What routing knows about one member of one group at one moment."""

    user_id: int
    is_active: bool
    presence: str  # offline | available | busy | wrap_up
    online_since: datetime | None
    idle_since: datetime | None
    active: int  # tickets pending process or processing (ACTIVE_STATUSES)
    open_offers: int  # unaccepted auto-assigned tickets in this group
    assigned_today: int  # in this group (the daily cap is per group)
    last_assigned: datetime | None
    max_active: int | None  # None: no limit
    username: str = ""
    reader: "Reader | None" = None  # how to write to them (accounts.preferences)


@dataclass(frozen=True)
class GroupPolicy:
    requires_presence: bool
    offers_enabled: bool
    daily_cap: int | None


def ineligibility(
    rows: list[MemberRow],
    policy: GroupPolicy,
    exclude: Mapping[int, str] | Collection[int] = frozenset(),
) -> dict[int, str | None]:
    """The one eligibility rule: each member's reason for not being given a ticket now, None
    for the eligible, in member order. Not eligible: an inactive account, excluded from this
    ticket (`exclude` maps user id → MISSED or DECLINED; a plain set means MISSED), not
    available when the group requires presence, at max_active, holding an unanswered offer in
    this group (when the group makes offers). The daily cap is soft: members over it are
    eligible only when nobody under it is (OVER_DAILY_CAP otherwise)."""
    reasons: dict[int, str | None] = {}
    for row in rows:
        if not row.is_active:
            reason = INACTIVE
        elif row.user_id in exclude:
            reason = exclude[row.user_id] if isinstance(exclude, Mapping) else MISSED
        elif policy.requires_presence and row.presence != "available":
            reason = OFFLINE
        elif row.max_active is not None and row.active >= row.max_active:
            reason = AT_CAPACITY
        elif policy.offers_enabled and row.open_offers > 0:
            reason = HOLDING_OFFER
        else:
            reason = None
        reasons[row.user_id] = reason
    if policy.daily_cap is not None:
        cap = policy.daily_cap
        over = [r.user_id for r in rows if reasons[r.user_id] is None and r.assigned_today >= cap]
        if len(over) < sum(1 for reason in reasons.values() if reason is None):
            for user_id in over:
                reasons[user_id] = OVER_DAILY_CAP
    return reasons


def eligible_ids(
    rows: list[MemberRow],
    policy: GroupPolicy,
    exclude: Mapping[int, str] | Collection[int] = frozenset(),
) -> list[int]:
    """Members who may be given a ticket now, in member order (`ineligibility` decides)."""
    return [
        user_id for user_id, reason in ineligibility(rows, policy, exclude).items() if not reason
    ]
