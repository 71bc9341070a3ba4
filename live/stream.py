"""The fan-out: one reader per process follows the stream (XREAD BLOCK) and hands each event
to the local connections that want it; a connection that resumes (Last-Event-ID, or the id its
page was rendered at) is first replayed what it missed (XRANGE), or told to `reset` when that
is older than the stream keeps.

Which events a connection may hear is decided per event by `Listener.wants`, from the rights
its user had when it connected (ticketing.access): a team event never reaches a page that
does not see the ticket's internals — its id included, since nothing of it is written.

May import: live.events, live.viewers, ticketing.access, ticketing.models, config."""

import asyncio
import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any

import redis
import redis.asyncio as aredis

from config.outage import REDIS_CONNECT_TIMEOUT_SECONDS
from ticketing.access import Audience
from ticketing.models import Ticket

from . import viewers
from .events import LIVE_REDIS, PUBLIC, STREAM_KEY, redis_url

logger = logging.getLogger(__name__)

# How long one XREAD waits for news before asking again, and how long the reader waits
# after a Redis error before trying again (the pages keep working meanwhile).
BLOCK_MS = 5_000
RETRY_SECONDS = 1.0
# Events a slow connection may have waiting; past it, it is told to reset and reload.
QUEUE_SIZE = 1_000

TICKET_PAGE = "ticket"
LIST_PAGES = ("pool", "approvals", "my-tickets")
PAGES = (TICKET_PAGE, *LIST_PAGES)


def parse_id(stream_id: str) -> tuple[int, int] | None:
    """A stream id ("1700000000000-3") as a comparable pair; None when it is not one."""
    ms, _, seq = stream_id.partition("-")
    try:
        return int(ms), int(seq or 0)
    except ValueError:
        return None


def _team_ticket(payload: dict[str, Any]) -> Ticket:
    """The event's ticket as access.Audience reads it (its handler and group), unsaved."""
    return Ticket(handler_id=payload.get("handler_id"), handler_group_id=payload.get("group_id"))


@dataclass(eq=False)  # (kept in a set: hashed by identity)
class Listener:
    """One open page: who it is and what it shows, fixed when it connected."""

    audience: Audience
    page: str
    ticket_id: int | None = None
    insider: bool = False  # sees the ticket's internals (a ticket page)
    approver: bool = False
    queue: asyncio.Queue = field(default_factory=lambda: asyncio.Queue(QUEUE_SIZE))
    overflowed: bool = False
    ending: bool = False  # the server is shutting down: the stream ends, the browser reconnects

    def end(self) -> None:
        """Ask the stream to end now (it may be waiting on an empty queue: wake it)."""
        self.ending = True
        try:
            self.queue.put_nowait(None)
        except asyncio.QueueFull:
            pass  # (it is awake anyway, with entries to read)

    def wants(self, payload: dict[str, Any]) -> bool:
        public = payload.get("audience") == PUBLIC
        if self.page == TICKET_PAGE:
            if payload.get("ticket_id") != self.ticket_id:
                return False
            # A team event also needs the ticket to be the viewer's still (it may have been
            # transferred away from their group since the page connected).
            return public or (self.insider and self.audience.sees_internals(_team_ticket(payload)))
        if self.page == "my-tickets":
            return public and payload.get("creator_id") == self.audience.user_id
        if self.page == "approvals":
            return public and self.approver
        # My work and the pool tabs: tickets whose internals the viewer sees.
        return self.audience.sees_internals(_team_ticket(payload))

    def message(self, payload: dict[str, Any]) -> dict[str, Any]:
        """What the page is told: which ticket, and for the team how it changed."""
        told = {"kind": payload.get("kind"), "ticket_id": payload.get("ticket_id")}
        if payload.get("audience") != PUBLIC:
            told["action"] = payload.get("action")
        return told

    def offer(self, entry_id: str, payload: dict[str, Any]) -> None:
        if not self.wants(payload):
            return
        try:
            self.queue.put_nowait((entry_id, self.message(payload)))
        except asyncio.QueueFull:
            self.overflowed = True


# The process's connections to the live Redis: the reader's blocking XREAD holds one; the
# ticket pages' viewer entries share the rest, waiting for a free one (not failing) when
# hundreds of consoles connect at once.
POOL_SIZE = 32
POOL_WAIT_SECONDS = 5.0
# A read waits longer than XREAD's own block (redis-py's default, 5 s, equals it: an idle
# stream would read as a dead Redis every 5 s).
READ_TIMEOUT_SECONDS = BLOCK_MS / 1000 + 5


def async_client() -> aredis.Redis:
    pool = aredis.BlockingConnectionPool.from_url(
        redis_url(),
        max_connections=POOL_SIZE,
        timeout=POOL_WAIT_SECONDS,
        socket_connect_timeout=REDIS_CONNECT_TIMEOUT_SECONDS,
        socket_timeout=READ_TIMEOUT_SECONDS,
        decode_responses=True,
    )
    return aredis.Redis(connection_pool=pool)


class Hub:
    """The process's one reader of the stream and its local listeners."""

    def __init__(self) -> None:
        self.listeners: set[Listener] = set()
        self.ending = False
        self.started = asyncio.Event()
        self.task: asyncio.Task | None = None
        self.redis: Any = async_client()  # (redis-py's async types are loose)

    def start(self) -> None:
        if self.task is None or self.task.done():
            self.task = asyncio.get_running_loop().create_task(self.run())

    async def run(self) -> None:
        last: str | None = None
        while True:
            try:
                if last is None:
                    newest = await self.redis.xrevrange(STREAM_KEY, count=1)
                    last = newest[0][0] if newest else "0-0"
                    self.started.set()
                found = await self.redis.xread({STREAM_KEY: last}, block=BLOCK_MS, count=500)
            except asyncio.CancelledError:
                raise
            except (redis.RedisError, OSError) as exc:
                # redis-py may turn the task's cancellation (its loop closing) into a
                # connection error: never swallow it, or the loop never finishes closing.
                task = asyncio.current_task()
                if task is not None and task.cancelling():
                    raise asyncio.CancelledError from exc
                LIVE_REDIS.failed(exc)
                self.started.set()  # connections go on without it (heartbeats only)
                await asyncio.sleep(RETRY_SECONDS)
                continue
            LIVE_REDIS.recovered()
            for _, entries in found or []:
                for entry_id, fields in entries:
                    last = entry_id
                    self.deliver(entry_id, fields)

    def add(self, listener: Listener) -> None:
        self.listeners.add(listener)
        if self.ending:
            listener.end()

    def end_streams(self) -> None:
        """Every open stream ends, and any that opens from now on ends at once."""
        self.ending = True
        for listener in list(self.listeners):
            listener.end()

    def deliver(self, entry_id: str, fields: dict[str, str]) -> None:
        try:
            payload = json.loads(fields.get("e", "{}"))
        except ValueError:
            return
        for listener in list(self.listeners):
            listener.offer(entry_id, payload)

    async def replay(self, listener: Listener, since: str) -> tuple[list, bool]:
        """What `listener` missed after `since`: (entries it wants, in order; whether it must
        reset instead because `since` is older than the stream keeps or is no id at all)."""
        since_key = parse_id(since)
        if since_key is None:
            return [], True
        try:
            oldest = await self.redis.xrange(STREAM_KEY, count=1)
            # "0-0": the page was rendered while the stream was empty. Otherwise an id older
            # than the oldest kept means entries after it may have been trimmed away.
            if oldest and since_key != (0, 0) and since_key < (parse_id(oldest[0][0]) or (0, 0)):
                return [], True
            entries = await self.redis.xrange(STREAM_KEY, min=f"({since}", count=QUEUE_SIZE)
        except (redis.RedisError, OSError) as exc:
            LIVE_REDIS.failed(exc)
            return [], True
        missed = []
        for entry_id, fields in entries:
            try:
                payload = json.loads(fields.get("e", "{}"))
            except ValueError:
                continue
            if listener.wants(payload):
                missed.append((entry_id, listener.message(payload)))
        return missed, len(entries) >= QUEUE_SIZE


_hubs: dict[asyncio.AbstractEventLoop, Hub] = {}


async def hub() -> Hub:
    loop = asyncio.get_running_loop()
    for gone in [known for known in _hubs if known.is_closed()]:
        del _hubs[gone]
    current = _hubs.get(loop)
    if current is None:
        current = _hubs[loop] = Hub()
    current.start()
    try:
        await asyncio.wait_for(current.started.wait(), timeout=2)
    except TimeoutError:
        pass
    return current


def end_streams() -> None:
    """The web server is shutting down (runtime/worker.py): every open page's stream on the
    running loop ends now rather than holding the worker for its whole graceful timeout;
    browsers reconnect to another worker and resume from their last event id."""
    current = _hubs.get(asyncio.get_running_loop())
    if current is not None:
        current.end_streams()


class Presence:
    """A staff-side ticket page's entry in the ticket's viewers (live/viewers.py)."""

    def __init__(self, client: Any, ticket: Ticket, user_id: int, name: str):
        self.client, self.ticket, self.user_id, self.name = client, ticket, user_id, name
        self.refreshed = 0.0

    async def refresh(self, *, announce: bool = False) -> None:
        now = time.time()
        if not announce and now - self.refreshed < viewers.REFRESH_SECONDS:
            return
        self.refreshed = now
        key = viewers.key(self.ticket.pk)
        try:
            raw = await self.client.hget(key, str(self.user_id))
            item = json.loads(raw) if raw else {"name": self.name, "state": viewers.VIEWING}
            item["at"] = now
            await self.client.hset(key, str(self.user_id), json.dumps(item))
            await self.client.expire(key, viewers.STALE_SECONDS * 2)
            if announce:
                await self.announce()
        except (redis.RedisError, OSError) as exc:
            LIVE_REDIS.failed(exc)

    async def leave(self) -> None:
        try:
            await self.client.hdel(viewers.key(self.ticket.pk), str(self.user_id))
            await self.announce()
        except (redis.RedisError, OSError) as exc:
            LIVE_REDIS.failed(exc)

    async def announce(self) -> None:
        payload = viewers.viewers_event(self.ticket)
        await self.client.xadd(
            STREAM_KEY,
            {"e": json.dumps(payload, separators=(",", ":"))},
            maxlen=10_000,
            approximate=True,
        )
