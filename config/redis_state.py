"""Markers of the state Redis keeps and PostgreSQL can rebuild. Redis may come back empty (a
restart without persistence, FLUSHALL, a failover to an empty replica): each rebuilder sets
its marker key when it rebuilds, so a marker that has vanished says the state went with it.
The apps that own the state check their marker (routing/reconcile.py); /readyz reports a
missing one (config/health.py) until it is rebuilt."""

import redis

# Set by routing/reconcile.py when it has rebuilt every group's presence and idle pool.
ROUTING_REBUILT_KEY = "td:routing:rebuilt"

MARKERS = {"routing": ROUTING_REBUILT_KEY}


def missing(client: redis.Redis) -> list[str]:
    """The states (MARKERS' names) whose marker is not in Redis."""
    return [name for name, key in MARKERS.items() if not client.exists(key)]
