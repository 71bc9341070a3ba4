"""What a process knows about a dependency that stopped answering (Redis, the Celery broker),
so the request path degrades instead of failing: callers ask `available()` before a call and
report `failed()` or `recovered()` after it.

After a failure the dependency is skipped for PROBE_SECONDS (a dead host costs one connect
timeout, not one per request); then the next call is let through as a probe, and a success ends
the outage at once, without a restart. The log says so once per outage per process: one
warning when it starts (what is degraded and why), one info line when it ends (how long it
lasted), never a line per request. /readyz asks the dependency itself (config/health.py)."""

import logging
import threading
import time

logger = logging.getLogger(__name__)

PROBE_SECONDS = 2.0
# Connect and command timeouts for every Redis client on the request path: a dead Redis costs
# milliseconds (a refused connection) or at most this (an unreachable host).
REDIS_CONNECT_TIMEOUT_SECONDS = 0.25
REDIS_COMMAND_TIMEOUT_SECONDS = 0.5


class Outage:
    def __init__(self, name: str, consequence: str):
        self.name = name
        self.consequence = consequence  # what keeps working and how, for the log line
        self._lock = threading.Lock()
        self._down_since: float | None = None
        self._probe_at = 0.0

    @property
    def down(self) -> bool:
        return self._down_since is not None

    def available(self) -> bool:
        """False while the last call failed less than PROBE_SECONDS ago: skip the call."""
        return self._down_since is None or time.monotonic() >= self._probe_at

    def failed(self, exc: BaseException) -> None:
        now = time.monotonic()
        with self._lock:
            self._probe_at = now + PROBE_SECONDS
            if self._down_since is not None:
                return
            self._down_since = now
        logger.warning(
            "%s unavailable: %s",
            self.name,
            self.consequence,
            extra={"dependency": self.name, "error": f"{type(exc).__name__}: {exc}"[:300]},
        )

    def reset(self) -> None:
        """Forget the outage without a log line (tests: each starts with Redis known good)."""
        with self._lock:
            self._down_since, self._probe_at = None, 0.0

    def recovered(self) -> None:
        if self._down_since is None:  # the common case: no lock
            return
        with self._lock:
            since, self._down_since = self._down_since, None
        if since is not None:
            logger.info(
                "%s available again after %.1f s",
                self.name,
                time.monotonic() - since,
                extra={"dependency": self.name},
            )


# The per-process outages the request path knows of, by what they degrade.
THROTTLE_REDIS = Outage(
    "redis (throttles)", "throttles count per process until it answers (a local limit)"
)
ROUTING_REDIS = Outage(
    "redis (routing)",
    "no agent is picked from the idle pools; tickets wait in their pools and presence is kept in "
    "PostgreSQL until the reconciliation rebuilds Redis",
)
BROKER = Outage(
    "celery broker",
    "tasks are not queued; the periodic sweeps enqueue the work again (outbox, offers, drains)",
)

KNOWN = (THROTTLE_REDIS, ROUTING_REDIS, BROKER)
