"""Publishing ticket events to the one Redis stream the consoles follow (live/stream.py).

An event says only which ticket changed, how, and who may hear of it; the pages re-read what
they show through their ordinary views (which apply the access rules), so an event never
carries content. It is added after the transaction commits (a rolled-back change is never
announced) and a dead Redis costs one connect timeout per PROBE_SECONDS, never a failed write
(config/outage.py).

May import: config."""

import json
import logging
from typing import Any

import redis
from django.conf import settings
from django.db import transaction
from redis.backoff import NoBackoff
from redis.retry import Retry

from config.outage import REDIS_CONNECT_TIMEOUT_SECONDS, Outage

logger = logging.getLogger(__name__)

STREAM_KEY = "td:live"
# About this many events are kept for resuming (`MAXLEN ~`); a console that was away longer
# reloads its regions instead (the `reset` event).
STREAM_MAXLEN = 10_000

PUBLIC = "public"  # the applicant's and approvers' pages may hear of it
TEAM = "team"  # only staff-side viewers of the ticket (access.Audience.sees_internals)

LIVE_REDIS = Outage(
    "redis (live pages)",
    "changes are not pushed to open pages; they show them on the next load",
)

# A live Redis that answers slowly (a busy host) is waited for this long: an event skipped
# because Redis was declared down is a change the open pages never show until the next one,
# and the skipping lasts PROBE_SECONDS. A dead host still costs only the connect timeout.
LIVE_COMMAND_TIMEOUT_SECONDS = 2.0

_client: redis.Redis | None = None
_client_url: str | None = None


def redis_url() -> str:
    return getattr(settings, "LIVE_REDIS_URL", None) or settings.REDIS_URL


def client() -> redis.Redis:
    global _client, _client_url
    url = redis_url()
    if _client is None or _client_url != url:
        _client = redis.Redis.from_url(
            url,
            socket_timeout=LIVE_COMMAND_TIMEOUT_SECONDS,
            socket_connect_timeout=REDIS_CONNECT_TIMEOUT_SECONDS,
            retry=Retry(NoBackoff(), 1),
            decode_responses=True,
        )
        _client_url = url
    return _client


def event(
    *,
    kind: str,
    ticket_id: int,
    audience: str,
    creator_id: int | None = None,
    handler_id: int | None = None,
    group_id: int | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """The stream entry: the ticket's people and group let list pages decide whether it is in
    their scope without a query per event."""
    return {
        "kind": kind,
        "ticket_id": ticket_id,
        "audience": audience,
        "creator_id": creator_id,
        "handler_id": handler_id,
        "group_id": group_id,
        **extra,
    }


def publish_now(payload: dict[str, Any]) -> str | None:
    """XADD the event; its stream id, or None when Redis is not answering."""
    if not LIVE_REDIS.available():
        return None
    try:
        entry_id = client().xadd(
            STREAM_KEY,
            {"e": json.dumps(payload, separators=(",", ":"))},
            maxlen=STREAM_MAXLEN,
            approximate=True,
        )
    except redis.RedisError as exc:
        LIVE_REDIS.failed(exc)
        return None
    LIVE_REDIS.recovered()
    return str(entry_id)


def publish(**fields: Any) -> None:
    """Announce a change once the current transaction commits (at once outside one)."""
    payload = event(**fields)
    transaction.on_commit(lambda: publish_now(payload))


def latest_id() -> str | None:
    """The stream's newest id ("0-0" when empty; None when Redis is not answering): a page
    rendered now resumes from it, so nothing that happens between its render and its
    connection is missed (without one, its stream starts with a reset)."""
    if not LIVE_REDIS.available():
        return None
    try:
        entries = client().xrevrange(STREAM_KEY, count=1)
    except redis.RedisError as exc:
        LIVE_REDIS.failed(exc)
        return None
    LIVE_REDIS.recovered()
    return str(entries[0][0]) if entries else "0-0"
