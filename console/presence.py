"""The header's presence switch (the agent's own state, what it offers, how often an open tab
heartbeats); the views that answer it are views/presence.py."""

from django.conf import settings

from routing.models import PresenceState
from routing.selectors import own_presence_state

# What the switch offers (wrap-up is entered by completing a ticket, not chosen).
SWITCH_STATES = (PresenceState.AVAILABLE, PresenceState.BUSY, PresenceState.OFFLINE)


def heartbeat_ms() -> int:
    """A third of PRESENCE_TIMEOUT_SECONDS: two heartbeats may be lost (or throttled in a
    background tab) before the sweep takes the agent offline."""
    timeout = getattr(settings, "PRESENCE_TIMEOUT_SECONDS", 60)
    return max(1000, int(timeout * 1000 / 3))


def switch_context(state: str | None) -> dict | None:
    """The header's switch for an agent in `state` (None: not a member, no switch)."""
    if state is None:
        return None
    return {
        "state": state,
        "label": PresenceState(state).label,
        "choices": [(s.value, s.label) for s in SWITCH_STATES],
        "settable": state in SWITCH_STATES,
        "heartbeat_ms": heartbeat_ms(),
    }


def switch_for(user) -> dict | None:
    """The switch for a signed-in person, None when they have no presence."""
    if not user.is_authenticated:
        return None
    return switch_context(own_presence_state(user.pk))
