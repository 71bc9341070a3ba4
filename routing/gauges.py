"""Routing's live figures for /metrics, computed at scrape time (config/metrics.py): each
group's pool (tickets waiting, oldest wait) and its members by presence state."""

from collections import Counter

from django.utils import timezone

from config.metrics import gauge, scrape_gauges
from handler_groups.models import GroupStatus, HandlerGroup

from .models import AgentPresence, PresenceState
from .presence import presence_timeout
from .selectors import waiting_by_group

NO_GROUP = "none"  # the label of the pool of tickets routed to no group


@scrape_gauges
def pool_gauges():
    now = timezone.now()
    names = dict(HandlerGroup.objects.values_list("pk", "name"))
    waiting = gauge("routing_tickets_waiting", "Approved tickets waiting in a pool", ["group"])
    oldest = gauge(
        "routing_oldest_waiting_seconds",
        "Age of the longest-waiting ticket in a pool (0 when none waits)",
        ["group"],
    )
    rows = waiting_by_group()
    for group_id in [*sorted(names), None]:
        row = rows.get(group_id)
        label = names[group_id] if group_id is not None else NO_GROUP
        waiting.add_metric([label], row["n"] if row else 0)
        age = (now - row["since"]).total_seconds() if row and row["since"] else 0
        oldest.add_metric([label], max(age, 0))
    return [waiting, oldest]


@scrape_gauges
def agent_gauges():
    """Members of enabled groups by presence: available means routable now (a fresh
    heartbeat); a stale heartbeat counts as offline before the sweep says so."""
    fresh_after = timezone.now() - presence_timeout()
    groups = list(HandlerGroup.objects.filter(status=GroupStatus.ENABLED))
    members = {m for g in groups for m in g.member_ids}
    state_of = {}
    for user_id, state, heartbeat in AgentPresence.objects.filter(user_id__in=members).values_list(
        "user_id", "state", "last_heartbeat"
    ):
        stale = state != PresenceState.OFFLINE and (heartbeat is None or heartbeat < fresh_after)
        state_of[user_id] = PresenceState.OFFLINE if stale else state
    available = gauge(
        "routing_agents_available", "Group members available for routing now", ["group"]
    )
    by_state = gauge("routing_agents", "Group members by presence state", ["group", "state"])
    for group in groups:
        counts = Counter(state_of.get(m, PresenceState.OFFLINE) for m in group.member_ids)
        available.add_metric([group.name], counts[PresenceState.AVAILABLE])
        for state in PresenceState:
            by_state.add_metric([group.name, state.value], counts[state])
    return [available, by_state]
