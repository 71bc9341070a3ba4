"""Redis I/O of the ranking: RR levels and jump lists, shared with the systems that write them.

Plain keys, exactly so named (no framework prefixes or versions), in the Redis at
settings.QUEUEING_REDIS_URL:
- `<prefix><uid>`: a JSON object whose rr_1p5 is "R1".."R9", written by other systems;
- `<prefix>jump_uids_<uid>`: a JSON array of the uids (as strings) that have jumped ahead of
  the customer, appended to by the ranking, expiring QUEUEING_JUMP_TTL_SECONDS after the last
  append.
with <prefix> = settings.QUEUEING_KEY_PREFIX ("lechat_"). One request costs three round trips
whatever its size: MGET of the RR levels, MGET of the jump lists step 4 may need, one EVALSHA.

Concurrent requests: a request computes its swaps and be_jump increments from the jump lists as
it read them (its snapshot). The append is a check-and-append in one Lua script, atomic in
Redis, so two requests recording jumps on the same customer at once never lose each other's
uids and never store one twice. Both may count the same new jumper (each reports its own
be_jump += 1 from its own snapshot); the stored list holds it once.
"""

import functools
import json
import threading

import redis
from django.conf import settings
from redis.backoff import NoBackoff
from redis.commands.core import Script
from redis.retry import Retry

from . import ranking

# A Redis that is down must cost a request little: the ranking then answers degraded.
CONNECT_TIMEOUT_SECONDS = 0.5
COMMAND_TIMEOUT_SECONDS = 2.0

# KEYS: jump list keys. ARGV[1]: expiry in seconds. ARGV[2]: a JSON array holding, per key, the
# array of uids to append (one argument rather than one per uid: packing arguments is what costs
# on the client). For each key, appends the uids it does not already hold, keeping the stored text
# as it is (other systems' formatting and items survive), and sets the expiry. An unreadable
# value is replaced, as the ranking reads it as an empty list. Returns how many uids it appended.
_APPEND_JUMPS_LUA = """
local ttl = tonumber(ARGV[1])
local wanted = cjson.decode(ARGV[2])
local appended = 0
for k = 1, #KEYS do
  local stored = redis.call('GET', KEYS[k])
  local present = {}
  local head = nil
  local size = 0
  if stored and string.match(stored, '^%s*%[') then
    local ok, items = pcall(cjson.decode, stored)
    if ok and type(items) == 'table' then
      head = string.match(stored, '^(.*)%]%s*$')
      for _, item in ipairs(items) do
        size = size + 1
        if type(item) == 'string' then
          present[item] = true
        elseif type(item) == 'number' and item == math.floor(item) then
          present[string.format('%.0f', item)] = true
        end
      end
    end
  end
  local new = {}
  for _, uid in ipairs(wanted[k]) do
    if not present[uid] then
      present[uid] = true
      new[#new + 1] = cjson.encode(uid)
    end
  end
  if #new > 0 then
    local body = table.concat(new, ',')
    local value
    if head == nil then
      value = '[' .. body .. ']'
    elseif size == 0 then
      value = head .. body .. ']'
    else
      value = head .. ',' .. body .. ']'
    end
    redis.call('SET', KEYS[k], value, 'EX', ttl)
    appended = appended + #new
  elseif stored then
    redis.call('EXPIRE', KEYS[k], ttl)
  end
end
return appended
"""


class Unavailable(Exception):
    """Redis could not answer (down, unreachable, timed out, or refused the command)."""


def _redis_call(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except redis.RedisError as exc:
            raise Unavailable(f"{type(exc).__name__}: {exc}") from exc

    return wrapper


_lock = threading.Lock()
_clients: dict[str, tuple[redis.Redis, Script]] = {}


def _connection() -> tuple[redis.Redis, Script]:
    """The client for the configured URL (read at call time) and the append script registered
    on it once; EVALSHA with a reload if Redis has forgotten the script."""
    url = settings.QUEUEING_REDIS_URL
    found = _clients.get(url)
    if found is None:
        with _lock:
            found = _clients.get(url)
            if found is None:
                client = redis.Redis.from_url(
                    url,
                    socket_connect_timeout=CONNECT_TIMEOUT_SECONDS,
                    socket_timeout=COMMAND_TIMEOUT_SECONDS,
                    # One retry heals a pooled connection the server closed; no backoff
                    # so an unreachable Redis degrades the request at once.
                    retry=Retry(NoBackoff(), 1),
                )
                found = _clients[url] = (client, client.register_script(_APPEND_JUMPS_LUA))
    return found


def rr_key(uid: str) -> str:
    return f"{settings.QUEUEING_KEY_PREFIX}{uid}"


def jump_list_key(uid: str) -> str:
    return f"{settings.QUEUEING_KEY_PREFIX}jump_uids_{uid}"


@_redis_call
def read_rr_levels(uids: list[str]) -> dict[str, int]:
    """uid -> RR level, in one MGET. Each function here raises Unavailable if Redis cannot
    answer."""
    if not uids:
        return {}
    client, _ = _connection()
    values = client.mget([rr_key(uid) for uid in uids])
    return {uid: ranking.rr_level(value) for uid, value in zip(uids, values, strict=True)}


@_redis_call
def read_jump_lists(uids: list[str]) -> dict[str, list[str]]:
    """uid -> the uids stored as having jumped ahead of it, in one MGET."""
    if not uids:
        return {}
    client, _ = _connection()
    values = client.mget([jump_list_key(uid) for uid in uids])
    return {uid: ranking.jump_list(value) for uid, value in zip(uids, values, strict=True)}


@_redis_call
def append_jumps(appended: dict[str, list[str]]) -> int:
    """Appends to each customer's jump list the uids it does not hold yet and refreshes its
    expiry, atomically, in one EVALSHA. Returns how many uids were appended (fewer than asked
    when a concurrent request appended some first)."""
    if not appended:
        return 0
    client, append_script = _connection()
    keys = [jump_list_key(uid) for uid in appended]
    args = [settings.QUEUEING_JUMP_TTL_SECONDS, json.dumps(list(appended.values()))]
    return int(append_script(keys=keys, args=args, client=client))
