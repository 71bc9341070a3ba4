"""The beat lease and the slot claims: who sends periodic tasks, and that each schedule slot
of each task is sent at most once, even across a change of sender.

Every statement reads PostgreSQL's clock (`clock_timestamp()`), not the calling node's, so
nodes whose clocks disagree still agree on when a lease ran out; tests pass `now` instead."""

from dataclasses import dataclass
from datetime import datetime

from django.db import connection
from psycopg import sql

from .models import BeatLease, BeatSlot

# The lease lasts LEASE_SECONDS past each renewal; its holder renews every RENEW_SECONDS (so
# two renewals can fail before it lapses); the others ask every STANDBY_POLL_SECONDS. A
# holder killed just after renewing is replaced after at most LEASE_SECONDS +
# STANDBY_POLL_SECONDS (+ a schedule read): within 10 s.
LEASE_SECONDS = 6.0
RENEW_SECONDS = 2.0
STANDBY_POLL_SECONDS = 1.0
LEASE_NAME = "beat"

# Take the lease if it is free, expired or already ours; renew it if ours. A new holder gets
# token + 1. One row, one statement: two beats asking at once cannot both get it (the upsert
# locks the row; the second evaluates the WHERE against the first's committed version).
ACQUIRE_SQL = """
WITH clock AS (SELECT COALESCE(%(now)s::timestamptz, clock_timestamp()) AS now)
INSERT INTO {lease} AS lease (name, holder, token, expires_at, renewed_at)
SELECT %(name)s, %(holder)s, 1, clock.now + make_interval(secs => %(ttl)s), clock.now
FROM clock
ON CONFLICT (name) DO UPDATE SET
    token = CASE WHEN lease.holder = EXCLUDED.holder THEN lease.token ELSE lease.token + 1 END,
    holder = EXCLUDED.holder,
    expires_at = EXCLUDED.expires_at,
    renewed_at = EXCLUDED.renewed_at
WHERE lease.holder = EXCLUDED.holder OR lease.expires_at <= EXCLUDED.renewed_at
RETURNING lease.token
"""

# A clean stop (SIGTERM) hands over at once instead of after the lease runs out.
RELEASE_SQL = """
UPDATE {lease} SET expires_at = LEAST(expires_at, clock_timestamp())
WHERE name = %(name)s AND holder = %(holder)s
"""

# Claim `slot` of a periodic task for the holder of a live lease with this token. It succeeds
# only for a slot later than the last one claimed, by a token at least as new: a slot goes at
# most once, and a deposed leader (older token) claims nothing after its successor has. The
# row lock on the task's claim serialises two claimers; the loser sees the winner's slot.
CLAIM_SQL = """
WITH clock AS (SELECT COALESCE(%(now)s::timestamptz, clock_timestamp()) AS now),
fence AS (
    SELECT lease.token FROM {lease} AS lease, clock
    WHERE lease.name = %(lease_name)s AND lease.holder = %(holder)s
      AND lease.token = %(token)s AND lease.expires_at > clock.now
)
INSERT INTO {slot} AS slot (task_name, slot_start, token, holder, claimed_at)
SELECT %(task_name)s, %(slot_start)s, fence.token, %(holder)s, clock.now FROM fence, clock
ON CONFLICT (task_name) DO UPDATE SET
    slot_start = EXCLUDED.slot_start,
    token = EXCLUDED.token,
    holder = EXCLUDED.holder,
    claimed_at = EXCLUDED.claimed_at
WHERE slot.slot_start < EXCLUDED.slot_start AND slot.token <= EXCLUDED.token
RETURNING slot.slot_start
"""


def _statement(text: str) -> str:
    return (
        sql.SQL(text.strip())
        .format(
            lease=sql.Identifier(BeatLease._meta.db_table),
            slot=sql.Identifier(BeatSlot._meta.db_table),
        )
        .as_string()
    )


@dataclass(frozen=True)
class Holder:
    """One beat process: its identity (host, pid, a random part) and the lease it asks for."""

    identity: str
    lease_name: str = LEASE_NAME


def lease_acquire(
    *, holder: Holder, ttl_seconds: float = LEASE_SECONDS, now: datetime | None = None
) -> int | None:
    """Take or renew the lease; the fencing token while held, None while another's is live.
    Autocommit: the lease must be visible to the other beats as soon as it is taken."""
    with connection.cursor() as cursor:
        cursor.execute(
            _statement(ACQUIRE_SQL),
            {"now": now, "name": holder.lease_name, "holder": holder.identity, "ttl": ttl_seconds},
        )
        row = cursor.fetchone()
    return None if row is None else int(row[0])


def lease_release(*, holder: Holder) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            _statement(RELEASE_SQL), {"name": holder.lease_name, "holder": holder.identity}
        )


def slot_claim(
    *,
    holder: Holder,
    token: int,
    task_name: str,
    slot_start: datetime,
    now: datetime | None = None,
) -> bool:
    """True when this holder may send `task_name` for `slot_start` (and nobody else ever will)."""
    with connection.cursor() as cursor:
        cursor.execute(
            _statement(CLAIM_SQL),
            {
                "now": now,
                "lease_name": holder.lease_name,
                "holder": holder.identity,
                "token": token,
                "task_name": task_name,
                "slot_start": slot_start,
            },
        )
        return cursor.fetchone() is not None
