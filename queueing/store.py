"""Redis I/O of the ranking: RR levels and jump lists, shared with the systems that write them.

Plain keys, exactly so named (no framework prefixes or versions), in the Redis at
settings.QUEUEING_REDIS_URL:
- `<prefix><uid>`: a JSON object whose rr_1p5 is "R1".."R9", written by other systems;
- `<prefix>jump_uids_<uid>`: a JSON array of the uids (as strings) that have jumped ahead of
  the customer, appended to by the ranking, expiring QUEUEING_JUMP_TTL_SECONDS after the last
  append.
with <prefix> = settings.QUEUEING_KEY_PREFIX ("lechat_"). One request costs two round trips
whatever its size: one MGET of the RR levels and the jump lists (`read_queue`), one EVALSHA.

Concurrent requests: a request computes its swaps and be_jump increments from the jump lists as
it read them (its snapshot). The append is a check-and-append in one Lua script, atomic in
Redis, so two requests recording jumps on the same customer at once never lose each other's
uids and never store one twice. Both may count the same new jumper (each reports its own
be_jump += 1 from its own snapshot); the stored list holds it once.

The append costs Redis little when the lists are as the request read them: the request sends
each list's new text whole (Redis only checks the list is still absent, or still the text that
was read, and sets it), and the merge, which parses in Lua, runs only for a list that changed
in between, or whose text or new uids are not plain (see `_append_arguments`).
"""

import functools
import itertools
import re
import threading
from collections.abc import Mapping
from typing import cast

import hiredis
import orjson
import redis
from django.conf import settings
from redis.backoff import NoBackoff
from redis.commands.core import Script
from redis.retry import Retry

from . import ranking

# A Redis that is down must cost a request little: the ranking then answers degraded.
CONNECT_TIMEOUT_SECONDS = 0.5
COMMAND_TIMEOUT_SECONDS = 2.0

# KEYS: jump list keys, in three groups by how the request read them: first the lists there
# were none of, then the plain lists (see _PLAIN_LIST), then the others and those not read.
# ARGV[1]: expiry in seconds; ARGV[2], ARGV[3]: the sizes of the first two groups; then per key a
# JSON array of the uids to append, preceded for a plain list by its text as read. A list still
# as read gets the uids in one SET: the array itself (a plain array then: the uids as cjson
# writes them), or the text read with the array's items added before its closing bracket. Any
# other list is merged: the uids it does not hold yet are appended, keeping the stored text as it
# is (other systems' formatting and items survive); an unreadable value is replaced, as the
# ranking reads it as an empty list. Every list written gets the expiry, and so does a list that
# gets nothing new. Returns {uids appended by merges, uids sent for the lists that were not as
# read} (the caller knows how many it sent in all). One argument per key (two for a plain list)
# and one Redis call per list still as read (two for a plain list): both are what costs.
_APPEND_JUMPS_LUA = """
local ttl = ARGV[1]
local absent = tonumber(ARGV[2])
local plain = tonumber(ARGV[3])

local function merge(key, wanted)
  local stored = redis.call('GET', key)
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
  for _, uid in ipairs(wanted) do
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
    redis.call('SET', key, value, 'EX', ttl)
  elseif stored then
    redis.call('EXPIRE', key, ttl)
  end
  return #new
end

local merged = 0
local changed = 0
local function merge_changed(key, array)
  local wanted = cjson.decode(array)
  changed = changed + #wanted
  merged = merged + merge(key, wanted)
end

local a = 4
for k = 1, absent do
  if not redis.call('SET', KEYS[k], ARGV[a], 'NX', 'EX', ttl) then
    merge_changed(KEYS[k], ARGV[a])
  end
  a = a + 1
end
for k = absent + 1, absent + plain do
  local text = ARGV[a]
  local array = ARGV[a + 1]
  if redis.call('GET', KEYS[k]) == text then
    local comma = (text == '[]') and '' or ','
    redis.call('SET', KEYS[k], string.sub(text, 1, -2) .. comma .. string.sub(array, 2), 'EX', ttl)
  else
    merge_changed(KEYS[k], array)
  end
  a = a + 2
end
for k = absent + plain + 1, #KEYS do
  merged = merged + merge(KEYS[k], cjson.decode(ARGV[a]))
  a = a + 1
end
return {merged, changed}
"""

# Text that cjson (and JSON encoders in general) writes as it is: printable ASCII but '"', '\\'
# and '/', which cjson escapes. A plain list is a JSON array of plain strings as json.dumps or
# cjson write it: its items, and where new ones go, are known without a JSON parser.
_PLAIN_TEXT = re.compile(r"[ !#-.0-\[\]-~]*")
_PLAIN_LIST = re.compile(rb'\[(?:"[ !#-.0-\[\]-~]*"(?:, ?"[ !#-.0-\[\]-~]*")*)?\]')


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


class _PendingCommand:
    """A command sent on a connection of the client's pool, its answer read by `result()`; the
    caller works meanwhile. Its arguments are packed by hiredis in one call, where redis-py
    first copies them one by one (some 3 ms for the 20,000 keys of a 10,000-person queue). A
    connection that fails is given up and the command sent again with the client's own call,
    once, as its Retry would. `close()` gives the connection up if the answer is never read."""

    def __init__(self, client: redis.Redis, *args):
        self._client, self._args = client, args
        try:
            packed = hiredis.pack_command(args)
        except TypeError as exc:  # as redis-py words it
            raise redis.DataError(str(exc)) from exc
        pool = client.connection_pool
        try:
            connection = pool.get_connection()
        except (redis.ConnectionError, redis.TimeoutError):
            self._connection = None  # sent by result()
            return
        try:
            connection.send_packed_command([packed])
        except (redis.ConnectionError, redis.TimeoutError):
            connection.disconnect()
            pool.release(connection)
            self._connection = None  # sent by result()
            return
        except BaseException:
            connection.disconnect()
            pool.release(connection)
            raise
        self._connection = connection

    def result(self):
        connection, self._connection = self._connection, None
        if connection is not None:
            try:
                return connection.read_response()
            except (redis.ConnectionError, redis.TimeoutError):
                connection.disconnect()
            except redis.ResponseError:
                raise  # Redis answered: the connection is fine
            except BaseException:
                connection.disconnect()  # an answer may be left unread on it
                raise
            finally:
                self._client.connection_pool.release(connection)
        return self._client.execute_command(*self._args)

    def close(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.disconnect()
            self._client.connection_pool.release(connection)


# The keys: the prefix of either kind, followed by the uid (read from the settings once a call).


def _rr_key_prefix() -> str:
    return settings.QUEUEING_KEY_PREFIX


def _jump_list_key_prefix() -> str:
    return f"{settings.QUEUEING_KEY_PREFIX}jump_uids_"


@_redis_call
def read_rr_levels(uids: list[str]) -> dict[str, int]:
    """uid -> RR level, in one MGET. Each function here raises Unavailable if Redis cannot
    answer."""
    if not uids:
        return {}
    client, _ = _connection()
    # The client does not decode responses: values are bytes (or None), not text.
    values = cast("list[bytes | None]", client.mget(list(map(_rr_key_prefix().__add__, uids))))
    return dict(zip(uids, _rr_levels(values), strict=True))


def read_queue(uids: list[str]) -> tuple[list[int], dict[str, bytes | None]]:
    """Each uid's RR level (in the order of `uids`) and the text of its jump list (None: no
    list), in one MGET. Step 4 needs the lists of only some (ranking.jump_list_owners), known
    once the levels are; reading them all with the levels costs Redis less than a second round
    trip costs the request. The texts are what `jump_lists` and `append_jumps` take."""
    return start_read_queue(uids).result()


@_redis_call
def start_read_queue(uids: list[str]) -> "PendingRead":
    """`read_queue`, sent to Redis without waiting for its answer: `result()` reads it (and
    raises Unavailable as `read_queue` would); `close()` gives the connection up if it never
    asks. The caller works meanwhile while Redis reads (steps 1 and 2 of the ranking)."""
    return PendingRead(uids)


class PendingRead:
    """`read_queue`'s MGET, sent; `result()` reads its answer once."""

    def __init__(self, uids: list[str]):
        self._uids = uids
        self._command: _PendingCommand | None = None
        if uids:
            client, _ = _connection()
            keys = list(map(_rr_key_prefix().__add__, uids))
            keys += map(_jump_list_key_prefix().__add__, uids)
            self._command = _PendingCommand(client, "MGET", *keys)

    @_redis_call
    def result(self) -> tuple[list[int], dict[str, bytes | None]]:
        command, self._command = self._command, None
        if command is None:
            return [], {}
        values = command.result()
        uids, count = self._uids, len(self._uids)
        return _rr_levels(values[:count]), dict(zip(uids, values[count:], strict=True))

    def close(self) -> None:
        command, self._command = self._command, None
        if command is not None:
            command.close()


def _rr_levels(values: list[bytes | None]) -> list[int]:
    # Most values are one of a few texts: each parsed once.
    level_of = {value: ranking.rr_level(value) for value in set(values)}
    return list(map(level_of.__getitem__, values))


def jump_lists(texts: Mapping[str, bytes | None], uids: list[str]) -> dict[str, list[str]]:
    """uid -> the uids in its jump list, from the texts `read_queue` read."""
    jump_list = ranking.jump_list
    return {uid: [] if (text := texts[uid]) is None else jump_list(text) for uid in uids}


@_redis_call
def read_jump_lists(
    uids: list[str], *, texts: dict[str, bytes | None] | None = None
) -> dict[str, list[str]]:
    """uid -> the uids stored as having jumped ahead of it, in one MGET. Given `texts`, each
    list's stored text (None: no list) is put in it for `append_jumps`."""
    if not uids:
        return {}
    client, _ = _connection()
    keys = list(map(_jump_list_key_prefix().__add__, uids))
    values = cast("list[bytes | None]", client.mget(keys))  # not decoded: bytes
    if texts is not None:
        texts.update(zip(uids, values, strict=True))
    jump_list = ranking.jump_list
    return {
        uid: [] if value is None else jump_list(value)
        for uid, value in zip(uids, values, strict=True)
    }


@_redis_call
def append_jumps(
    appended: dict[str, list[str]],
    *,
    texts: Mapping[str, bytes | None] | None = None,
    ranked: bool = False,
) -> int:
    """Appends to each customer's jump list the uids it does not hold yet and refreshes its
    expiry, atomically, in one EVALSHA. `texts` are the lists' texts as `read_jump_lists` read
    them (the cheap append for those still so stored); `ranked` says `appended` is a ranking's
    own, made from the lists of these texts (`appended_jumps`): each list's uids distinct and
    none of them in its text, which then need not be checked again. Returns how many uids were
    appended (fewer than asked when a concurrent request appended some first)."""
    if not appended:
        return 0
    client, append_script = _connection()
    prefix = _jump_list_key_prefix()
    keys, args, sent = _append_arguments(appended, texts or {}, prefix, ranked=ranked)
    merged, changed = append_script(keys=keys, args=args, client=client)
    return sent - changed + merged


def start_append_jumps(
    appended: dict[str, list[str]],
    *,
    texts: Mapping[str, bytes | None] | None = None,
    ranked: bool = False,
) -> "PendingAppend":
    """`append_jumps`, sent to Redis without waiting for its answer: `result()` reads it (and
    raises Unavailable as `append_jumps` would). The caller works meanwhile while Redis runs the
    script; `close()` gives the connection up if it never asks."""
    return PendingAppend(appended, texts or {}, ranked=ranked)


class PendingAppend:
    """The append script sent on a connection of the client's pool, held until its answer is
    read. A connection that fails before answering is retried once with `append_jumps`'s own
    call (as the client's Retry would); a Redis that has forgotten the script gets it again."""

    def __init__(
        self,
        appended: dict[str, list[str]],
        texts: Mapping[str, bytes | None],
        *,
        ranked: bool = False,
    ):
        self._connection = None
        self._sent = 0
        self._arguments: tuple[list[str], list] | None = None
        if not appended:
            return
        try:
            client, script = self._client, self._script = _connection()
            keys, args, self._sent = _append_arguments(
                appended, texts, _jump_list_key_prefix(), ranked=ranked
            )
            self._arguments = (keys, args)
            connection = client.connection_pool.get_connection()
            try:
                # Packed by hiredis in one call (see _PendingCommand).
                command = ("EVALSHA", script.sha, len(keys), *keys, *args)
                packed = hiredis.pack_command(command)  # type: ignore[arg-type]  # stub: 1-tuple
                connection.send_packed_command([packed])
            except BaseException:
                connection.disconnect()
                client.connection_pool.release(connection)
                raise
            self._connection = connection
        except (redis.ConnectionError, redis.TimeoutError):
            self._connection = None  # sent again by result()
        except redis.RedisError as exc:
            raise Unavailable(f"{type(exc).__name__}: {exc}") from exc

    @_redis_call
    def result(self) -> int:
        """How many uids were appended, as `append_jumps` returns it."""
        if self._arguments is None:
            return 0
        keys, args = self._arguments
        self._arguments = None
        connection, self._connection = self._connection, None
        answer = None
        if connection is not None:
            try:
                answer = connection.read_response()
            except redis.exceptions.NoScriptError:
                pass  # the script call below loads it
            except (redis.ConnectionError, redis.TimeoutError):
                connection.disconnect()
            except BaseException:
                connection.disconnect()
                raise
            finally:
                self._client.connection_pool.release(connection)
        if answer is None:
            answer = self._script(keys=keys, args=args, client=self._client)
        merged, changed = answer
        return self._sent - changed + merged

    def close(self) -> None:
        """Gives the connection up without reading the answer (the script runs all the same)."""
        connection, self._connection = self._connection, None
        self._arguments = None
        if connection is not None:
            connection.disconnect()
            self._client.connection_pool.release(connection)


def _append_arguments(
    appended: dict[str, list[str]],
    texts: Mapping[str, bytes | None],
    prefix: str,
    *,
    ranked: bool = False,
) -> tuple[list[str], list[int | str | bytes], int]:
    """The script's KEYS and ARGV, and how many uids go to lists sent as read. A list is sent
    as read (absent, or its text) only when its append is known without a JSON parser: the
    uids are plain and new to it (none in the text read, none twice: known without looking
    when `ranked`, see append_jumps), and it was absent or a plain list."""
    absent_keys: list[str] = []
    absent_args: list[str] = []
    plain_keys: list[str] = []
    plain_args: list[str | bytes] = []
    other_keys: list[str] = []
    other_args: list[bytes] = []
    sent = 0
    # The usual request's uids are all plain: one check of them all, not one per list.
    all_plain = _PLAIN_TEXT.fullmatch("".join(itertools.chain.from_iterable(appended.values())))
    for uid, uids in appended.items():
        if (
            uids
            and (all_plain or _PLAIN_TEXT.fullmatch("".join(uids)))
            and (ranked or len(uids) == 1 or len(set(uids)) == len(uids))
        ):
            text = texts.get(uid, b"")  # b"": not read
            if text is None:
                absent_keys.append(prefix + uid)
                absent_args.append('["' + '","'.join(uids) + '"]')
                sent += len(uids)
                continue
            if _PLAIN_LIST.fullmatch(text) and (
                ranked or set(ranking.jump_list(text)).isdisjoint(uids)
            ):
                plain_keys.append(prefix + uid)
                plain_args += (text, '["' + '","'.join(uids) + '"]')
                sent += len(uids)
                continue
        other_keys.append(prefix + uid)
        other_args.append(orjson.dumps(uids))
    args = [settings.QUEUEING_JUMP_TTL_SECONDS, len(absent_keys), len(plain_keys)]
    return absent_keys + plain_keys + other_keys, args + absent_args + plain_args + other_args, sent
