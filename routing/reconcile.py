"""Reconciliation: make a group's Redis routing state (routing/idle_pool.py) exactly what
PostgreSQL, the system of record, says (beat every 5 min; `manage.py reconcile_presence`; on
demand when a longest-idle pick finds the pool drifted; and every group at once when Redis
has come back empty — `ensure_rebuilt`, from the presence sweep every 15 s)."""

import logging
from datetime import datetime

from django.utils import timezone

from config.redis_state import ROUTING_REBUILT_KEY
from handler_groups.models import GroupStatus, HandlerGroup

from . import idle_pool
from .models import PresenceState
from .strategies.candidates import member_rows

logger = logging.getLogger(__name__)


def reconcile_group(*, group: HandlerGroup, now: datetime) -> None:
    """Make the group's Redis keys exactly what PostgreSQL says: available agents in the pool
    (scored by idle-since), everyone else out, offers as the open tickets say."""
    rows = member_rows(group=group, member_ids=group.member_ids, now=now)
    states, idle, offered = {}, {}, set()
    for row in rows:
        if not row.is_active:
            continue
        state = row.presence if group.requires_presence else PresenceState.AVAILABLE
        states[row.user_id] = state
        if state == PresenceState.AVAILABLE:
            since = row.idle_since if group.requires_presence else row.last_assigned
            if row.last_assigned and (since is None or row.last_assigned > since):
                since = row.last_assigned
            idle[row.user_id] = since.timestamp() if since else 0.0
        if group.offer_timeout_seconds and row.open_offers:
            offered.add(row.user_id)
    idle_pool.replace_group(group.pk, states=states, idle=idle, offered=offered)


def reconcile(*, now: datetime | None = None) -> int:
    """Every enabled group; returns how many groups were repaired (Redis must be up). Marks
    the state rebuilt first: a flush from here on removes the mark, and the next
    `ensure_rebuilt` rebuilds again."""
    now = now or timezone.now()
    idle_pool.client().set(ROUTING_REBUILT_KEY, now.isoformat())
    return _reconcile_all(now)


def _reconcile_all(now: datetime) -> int:
    groups = list(HandlerGroup.objects.filter(status=GroupStatus.ENABLED))
    for group in groups:
        reconcile_group(group=group, now=now)
    return len(groups)


def ensure_rebuilt(*, now: datetime | None = None) -> int | None:
    """Rebuild every group from PostgreSQL if Redis has lost the routing state (its marker,
    config/redis_state.py, is gone); None when the state is there. One caller wins the marker
    (SET NX) and rebuilds; a failed rebuild drops it again for the next caller."""
    now = now or timezone.now()
    client = idle_pool.client()
    if not client.set(ROUTING_REBUILT_KEY, now.isoformat(), nx=True):
        return None
    try:
        rebuilt = _reconcile_all(now)
    except BaseException:
        client.delete(ROUTING_REBUILT_KEY)
        raise
    logger.warning(
        "routing state rebuilt from PostgreSQL: Redis had lost it", extra={"groups": rebuilt}
    )
    return rebuilt
