"""Who is viewing or replying on a ticket: a Redis hash per ticket (user id -> their name,
state and when it was last refreshed). An open ticket page's event stream refreshes its entry
every REFRESH_SECONDS and removes it when it closes; an entry not refreshed for STALE_SECONDS
(a node that died) no longer counts. Only staff-side viewers are registered: the applicant's
page neither shows nor feeds it.

May import: live.events, config."""

import json
import time
from typing import Any

import redis

from .events import LIVE_REDIS, TEAM, client, event, publish_now

VIEWING = "viewing"
REPLYING = "replying"
STATES = (VIEWING, REPLYING)
REFRESH_SECONDS = 10
STALE_SECONDS = 30
# "replying" fades back to "viewing" when the composer has been quiet this long.
REPLYING_SECONDS = 10


def key(ticket_id: int) -> str:
    return f"td:live:viewers:{ticket_id}"


def entry(name: str, state: str, now: float) -> str:
    return json.dumps({"name": name, "state": state, "at": now})


def current(raw: dict, now: float) -> dict[int, dict[str, Any]]:
    """The hash's fresh entries, by user id (a replying entry gone quiet reads as viewing)."""
    fresh = {}
    for user_id, value in raw.items():
        item = json.loads(value)
        if now - item["at"] > STALE_SECONDS:
            continue
        if item["state"] == REPLYING and now - item.get("typed", item["at"]) > REPLYING_SECONDS:
            item["state"] = VIEWING
        fresh[int(user_id)] = item
    return fresh


def viewers_of(ticket_id: int, *, exclude_user_id: int | None = None) -> list[dict[str, Any]]:
    """The others on this ticket now, by name ([] when Redis is not answering)."""
    if not LIVE_REDIS.available():
        return []
    try:
        raw = client().hgetall(key(ticket_id))
    except redis.RedisError as exc:
        LIVE_REDIS.failed(exc)
        return []
    LIVE_REDIS.recovered()
    people = current(raw, time.time())
    return sorted(
        (item for user_id, item in people.items() if user_id != exclude_user_id),
        key=lambda item: item["name"],
    )


def viewers_event(ticket) -> dict[str, Any]:
    return event(
        kind="viewers",
        ticket_id=ticket.pk,
        audience=TEAM,
        creator_id=ticket.creator_id,
        handler_id=ticket.handler_id,
        group_id=ticket.handler_group_id,
    )


def set_state(*, ticket, user_id: int, name: str, state: str) -> bool:
    """The composer's activity (POST .../activity/): record it and, when it changed, tell the
    ticket's team pages. False when Redis is not answering (nothing else depends on it)."""
    if not LIVE_REDIS.available():
        return False
    now = time.time()
    try:
        before = client().hget(key(ticket.pk), str(user_id))
        item = {"name": name, "state": state, "at": now}
        if state == REPLYING:
            item["typed"] = now
        pipe = client().pipeline()
        pipe.hset(key(ticket.pk), str(user_id), json.dumps(item))
        pipe.expire(key(ticket.pk), STALE_SECONDS * 2)
        pipe.execute()
    except redis.RedisError as exc:
        LIVE_REDIS.failed(exc)
        return False
    LIVE_REDIS.recovered()
    shown = current({str(user_id): before}, now) if before else {}
    previous = shown[user_id]["state"] if shown else None
    if previous != state:
        publish_now(viewers_event(ticket))
    return True
