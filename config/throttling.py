"""DRF throttles whose rates come from settings.THROTTLE_RATES when a request is checked (DRF's
own classes read them once, at import), so deployments and tests can change them. A throttled
request is a 429 {"code": "throttled", "detail": ...} with Retry-After (config/exceptions.py).

The histories live in the default cache's Redis, shared by every web process: DRF's sliding
window (the times of the requests let through in the last period, newest first; a request is
let through while fewer than the rate's number are), kept as a Redis list under the cache's
key for the throttle (with ":requests" after it), and checked and recorded in one round trip
by a Lua script, atomic in Redis (DRF's own reads the history and writes it back: two round
trips, and two concurrent requests could both take the last place). A default cache that is
not Redis gets DRF's own code.

While that Redis does not answer, every throttle falls back to DRF's own code on a cache in
this process's memory: the same rates, counted per process (so a deployment of N web processes
lets up to N times the rate through meanwhile). A local limit rather than none: the login
throttle guards passwords, and a client in a loop stays bounded. A dead Redis costs one short
timeout and is then skipped for a moment (config/outage.py, which logs once per outage)."""

import threading

import redis
from django.conf import settings
from django.core.cache.backends.base import BaseCache
from django.core.cache.backends.locmem import LocMemCache
from redis.backoff import NoBackoff
from redis.commands.core import Script
from redis.retry import Retry
from rest_framework.throttling import AnonRateThrottle, SimpleRateThrottle, UserRateThrottle

from config.outage import (
    REDIS_COMMAND_TIMEOUT_SECONDS,
    REDIS_CONNECT_TIMEOUT_SECONDS,
    THROTTLE_REDIS,
)

REDIS_CACHE = "django.core.cache.backends.redis.RedisCache"

# KEYS[1]: the history, newest first. ARGV: now, the period in seconds, the number of requests
# allowed in it. Drops the times the period has passed; then, if there is room, records now and
# returns {1}; else {0, requests in the period, the oldest of them}.
_THROTTLE_LUA = """
local key = KEYS[1]
local now = tonumber(ARGV[1])
local duration = tonumber(ARGV[2])
local oldest = redis.call('LINDEX', key, -1)
while oldest and tonumber(oldest) <= now - duration do
  redis.call('RPOP', key)
  oldest = redis.call('LINDEX', key, -1)
end
local count = redis.call('LLEN', key)
if count >= tonumber(ARGV[3]) then
  return {0, count, oldest}
end
redis.call('LPUSH', key, ARGV[1])
redis.call('EXPIRE', key, duration)
return {1}
"""

_lock = threading.Lock()
_scripts: dict[str, Script] = {}


def _script() -> Script | None:
    """The throttle script on a client of the default cache's Redis (one per process, shared by
    its threads), or None when the default cache is not Redis."""
    cache = settings.CACHES["default"]
    if cache["BACKEND"] != REDIS_CACHE:
        return None
    location = cache["LOCATION"]
    if isinstance(location, str):  # servers as Django's RedisCache splits them; the first writes
        location = location.replace(";", ",").split(",")
    url = location[0]
    found = _scripts.get(url)
    if found is None:
        with _lock:
            found = _scripts.get(url)
            if found is None:
                # The connection options Django's RedisCache passes to its pool, too.
                options = {
                    name: value
                    for name, value in cache.get("OPTIONS", {}).items()
                    if name not in ("serializer", "pool_class", "parser_class")
                }
                options.setdefault("socket_connect_timeout", REDIS_CONNECT_TIMEOUT_SECONDS)
                options.setdefault("socket_timeout", REDIS_COMMAND_TIMEOUT_SECONDS)
                # One retry heals a pooled connection the server closed (a Redis restart).
                options.setdefault("retry", Retry(NoBackoff(), 1))
                options.setdefault("retry_on_error", [redis.ConnectionError])
                pool = redis.ConnectionPool.from_url(url, **options)
                found = _scripts[url] = redis.Redis(connection_pool=pool).register_script(
                    _THROTTLE_LUA
                )
    return found


# The histories while Redis is down: this process's, bounded (LocMemCache culls the oldest
# third when full).
_LOCAL: BaseCache = LocMemCache("throttle-fallback", {"OPTIONS": {"MAX_ENTRIES": 20_000}})


class _SettingsRate:
    _over: tuple[int, float | None] | None = None  # requests in the period, the oldest's time

    def get_rate(self):
        return settings.THROTTLE_RATES.get(self.scope)

    def allow_request(self, request, view):
        # The rate is looked up per request (DRF caches it on the instance at __init__).
        self.rate = self.get_rate()
        if self.rate is None:
            return True
        self.num_requests, self.duration = self.parse_rate(self.rate)
        script = _script()
        if script is None:
            return super().allow_request(request, view)
        self.key = self.get_cache_key(request, view)
        if self.key is None:
            return True
        if not THROTTLE_REDIS.available():
            return self._locally(request, view)
        self.now = self.timer()
        try:
            answer = script(
                keys=[f"{self.cache.make_key(self.key)}:requests"],
                args=[repr(self.now), self.duration, self.num_requests],
            )
        except redis.RedisError as exc:
            THROTTLE_REDIS.failed(exc)
            return self._locally(request, view)
        THROTTLE_REDIS.recovered()
        if answer[0] == 1:
            return True
        self._over = (answer[1], float(answer[2]) if len(answer) > 2 else None)
        return self.throttle_failure()

    def _locally(self, request, view):
        """DRF's own sliding window, on this process's memory."""
        self.cache = _LOCAL
        self._over = None
        return super().allow_request(request, view)

    def wait(self):
        """DRF's: the rest of the oldest request's period, shared among the places left."""
        if self._over is None:  # DRF's own check ran (or none)
            return super().wait()
        count, oldest = self._over
        remaining = self.duration if oldest is None else self.duration - (self.now - oldest)
        available = self.num_requests - count + 1
        return None if available <= 0 else remaining / available


class AnonThrottle(_SettingsRate, AnonRateThrottle):
    """Anonymous callers, per client address."""


class UserThrottle(_SettingsRate, UserRateThrottle):
    """Authenticated callers, per account (anonymous ones per address)."""


class LoginThrottle(_SettingsRate, SimpleRateThrottle):
    """The token endpoint, per client address: a strict rate of its own."""

    scope = "login"

    def get_cache_key(self, request, view):
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}
