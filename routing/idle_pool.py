"""The live routing state in Redis: per group, the pool of idle agents (a sorted set scored
by idle-since), the agents' presence states and the agents holding an unanswered offer.

Every key of a group carries the hash tag {g<id>}, so the pick script (which touches only one
group's keys) also runs on Redis Cluster. PostgreSQL stays the system of record: the
reconciliation job rebuilds these keys from it, and every caller treats a Redis failure as
"no pick" (the ticket waits in the pool) rather than an error. While Redis is down the calls
are skipped for a moment after each failure and the outage is logged once per process
(config/outage.py); the failures are counted in assignment_redis_errors_total.

Write order (so a crash between two writes never leaves an agent routable while not
available): making an agent routable writes its state first, then adds it to the pool; taking
it out removes it from the pool first, then writes the state."""

import logging
from collections.abc import Iterable

import redis
from django.conf import settings
from prometheus_client import Counter
from redis.backoff import NoBackoff
from redis.commands.core import Script
from redis.retry import Retry

from config.outage import (
    REDIS_COMMAND_TIMEOUT_SECONDS,
    REDIS_CONNECT_TIMEOUT_SECONDS,
    ROUTING_REDIS,
)

logger = logging.getLogger(__name__)

REDIS_ERRORS = Counter("assignment_redis_errors_total", "Redis failures in routing", ["op"])

# KEYS: idle zset, state hash, offered set. ARGV[1]: "1" to restrict to ARGV[2..] (eligible
# user ids), "0" for anyone. Walk the pool from the longest idle; take the first candidate that
# is eligible, still available and holds no offer; remove it from the pool and mark it
# offered — all in one atomic step, so two concurrent picks never return the same agent.
PICK_SCRIPT = """
local restrict = ARGV[1] == '1'
local eligible = {}
for i = 2, #ARGV do eligible[ARGV[i]] = true end
local members = redis.call('ZRANGE', KEYS[1], 0, -1)
for _, uid in ipairs(members) do
  if (not restrict or eligible[uid])
     and redis.call('HGET', KEYS[2], uid) == 'available'
     and redis.call('SISMEMBER', KEYS[3], uid) == 0 then
    redis.call('ZREM', KEYS[1], uid)
    redis.call('SADD', KEYS[3], uid)
    return uid
  end
end
return false
"""

_client: redis.Redis | None = None
_client_url: str | None = None
_pick: Script | None = None


def client() -> redis.Redis:
    global _client, _client_url, _pick
    url = getattr(settings, "ASSIGNMENT_REDIS_URL", None) or settings.REDIS_URL
    if _client is None or _client_url != url:
        _client = redis.Redis.from_url(
            url,
            socket_timeout=REDIS_COMMAND_TIMEOUT_SECONDS,
            socket_connect_timeout=REDIS_CONNECT_TIMEOUT_SECONDS,
            # One immediate retry heals a pooled connection a restarted Redis closed; redis-py's
            # default (three, with backoff of seconds) would hold a request while Redis is down.
            retry=Retry(NoBackoff(), 1),
            decode_responses=True,
        )
        _client_url = url
        _pick = _client.register_script(PICK_SCRIPT)  # EVALSHA, loading once if missing
    return _client


# A group is named by its pk, or by a scratch key (str) in insight's simulator.
GroupKey = int | str


def _keys(group_id: GroupKey) -> tuple[str, str, str]:
    tag = f"td:{{g{group_id}}}"
    return f"{tag}:idle", f"{tag}:state", f"{tag}:offered"


def pick(group_id: GroupKey, eligible_ids: Iterable[int] | None) -> int | None:
    """Atomically take the longest-idle eligible agent out of the group's pool and mark them
    offered. None when nobody qualifies or Redis is unreachable."""
    if not ROUTING_REDIS.available():
        REDIS_ERRORS.labels("pick").inc()
        return None
    try:
        client()
        restrict = eligible_ids is not None
        args = ["1" if restrict else "0", *(str(i) for i in (eligible_ids or []))]
        assert _pick is not None  # registered by client()
        uid = _pick(keys=list(_keys(group_id)), args=args)
    except redis.RedisError as exc:
        REDIS_ERRORS.labels("pick").inc()
        ROUTING_REDIS.failed(exc)
        return None
    ROUTING_REDIS.recovered()
    return int(uid) if uid else None


def make_routable(group_ids: Iterable[GroupKey], user_id: int, idle_since: float) -> bool:
    """State first, then the pool."""
    if not ROUTING_REDIS.available():
        REDIS_ERRORS.labels("make_routable").inc()
        return False
    try:
        pipe = client().pipeline(transaction=False)
        for group_id in group_ids:
            idle, state, offered = _keys(group_id)
            pipe.hset(state, user_id, "available")
        pipe.execute()
        pipe = client().pipeline(transaction=False)
        for group_id in group_ids:
            idle, state, offered = _keys(group_id)
            pipe.zadd(idle, {str(user_id): idle_since})
        pipe.execute()
    except redis.RedisError as exc:
        REDIS_ERRORS.labels("make_routable").inc()
        ROUTING_REDIS.failed(exc)
        return False
    ROUTING_REDIS.recovered()
    return True


def make_unroutable(group_ids: Iterable[GroupKey], user_id: int, state: str) -> bool:
    """Pool first, then the state."""
    if not ROUTING_REDIS.available():
        REDIS_ERRORS.labels("make_unroutable").inc()
        return False
    try:
        pipe = client().pipeline(transaction=False)
        for group_id in group_ids:
            idle, _, _ = _keys(group_id)
            pipe.zrem(idle, user_id)
        pipe.execute()
        pipe = client().pipeline(transaction=False)
        for group_id in group_ids:
            _, state_key, _ = _keys(group_id)
            pipe.hset(state_key, user_id, state)
        pipe.execute()
    except redis.RedisError as exc:
        REDIS_ERRORS.labels("make_unroutable").inc()
        ROUTING_REDIS.failed(exc)
        return False
    ROUTING_REDIS.recovered()
    return True


def clear_offer(group_id: int, user_id: int, *, back_to_pool_at: float | None) -> None:
    """The agent answered (or lost) the offer: no longer offered; back in the pool at
    `back_to_pool_at` when still routable (None: stays out, e.g. at capacity)."""
    idle, state, offered = _keys(group_id)
    if not ROUTING_REDIS.available():
        REDIS_ERRORS.labels("clear_offer").inc()
        return
    try:
        c = client()
        c.srem(offered, user_id)
        if back_to_pool_at is not None and c.hget(state, user_id) == "available":
            c.zadd(idle, {str(user_id): back_to_pool_at})
    except redis.RedisError as exc:
        REDIS_ERRORS.labels("clear_offer").inc()
        ROUTING_REDIS.failed(exc)
        return
    ROUTING_REDIS.recovered()


def snapshot(group_id: int) -> dict:
    idle, state, offered = _keys(group_id)
    c = client()
    return {
        # withscores: (member, score) pairs, which the stub's union does not tell apart.
        "idle": [(int(u), s) for u, s in c.zrange(idle, 0, -1, withscores=True)],  # type: ignore[misc]
        "state": {int(u): s for u, s in c.hgetall(state).items()},
        "offered": {int(u) for u in c.smembers(offered)},
    }


def replace_group(
    group_id: int, *, states: dict[int, str], idle: dict[int, float], offered: set[int]
) -> None:
    """Reconciliation: make the group's keys exactly what PostgreSQL says, in one MULTI."""
    idle_key, state_key, offered_key = _keys(group_id)
    pipe = client().pipeline(transaction=True)
    pipe.delete(idle_key, state_key, offered_key)
    if states:
        pipe.hset(state_key, mapping={str(u): s for u, s in states.items()})
    if idle:
        pipe.zadd(idle_key, {str(u): score for u, score in idle.items()})
    if offered:
        pipe.sadd(offered_key, *[str(u) for u in offered])
    pipe.execute()
    # Redis answered a whole rebuild: no need to wait out the probe interval to use it again.
    ROUTING_REDIS.recovered()
