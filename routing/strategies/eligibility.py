"""The one eligibility rule for routing, as a pure function over member rows: every strategy
gets its candidates from here (round robin, least load, online priority, longest idle)."""

from dataclasses import dataclass
from datetime import datetime


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


@dataclass(frozen=True)
class GroupPolicy:
    requires_presence: bool
    offers_enabled: bool
    daily_cap: int | None


def eligible_ids(
    rows: list[MemberRow], policy: GroupPolicy, exclude: frozenset[int] = frozenset()
) -> list[int]:
    """Members who may be given a ticket now, in member order: an active account, available
    (when the group requires presence), under max_active, not holding an unanswered offer in
    this group (when the group makes offers), not excluded (e.g. missed this ticket). The
    daily cap is soft: members over it are eligible only when nobody under it is."""

    def routable(row: MemberRow) -> bool:
        return (
            row.is_active
            and row.user_id not in exclude
            and (not policy.requires_presence or row.presence == "available")
            and (row.max_active is None or row.active < row.max_active)
            and not (policy.offers_enabled and row.open_offers > 0)
        )

    candidates = [row for row in rows if routable(row)]
    if policy.daily_cap is not None:
        under_cap = [row for row in candidates if row.assigned_today < policy.daily_cap]
        if under_cap:
            candidates = under_cap
    return [row.user_id for row in candidates]
