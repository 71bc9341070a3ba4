"""Claim a key, answer from a record, purge old records.

A request with a key runs in one transaction that first claims the key: an INSERT ... ON
CONFLICT on (caller, key). PostgreSQL makes a second request with the same key wait on the
unique index until the first's transaction ends; if it committed, the second finds the record
and answers from it; if it rolled back (a refusal, a crash), the second claims the key
itself. So two concurrent requests with one key create exactly one thing. Only a success is
remembered: a refused request (400, 403, 404, 409) rolls its claim back with everything else,
and may be retried with the same key."""

import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import orjson
from django.db import connection
from django.utils import timezone

from .models import IdempotencyRecord

HEADER = "Idempotency-Key"
MAX_KEY_LENGTH = 255
TTL = timedelta(hours=24)

# Take the key for this caller, or, when a record of it is older than TTL, take it over (the
# sweep may not have purged it yet). No row back: another request holds or held the key.
CLAIM_SQL = """
INSERT INTO idempotency_idempotencyrecord AS record
    (user_id, key, fingerprint, created, status_code, body)
VALUES (%(user_id)s, %(key)s, %(fingerprint)s, %(now)s, NULL, NULL)
ON CONFLICT (user_id, key) DO UPDATE
    SET fingerprint = EXCLUDED.fingerprint, created = EXCLUDED.created,
        status_code = NULL, body = NULL
    WHERE record.created <= %(expired_before)s
RETURNING record.id
"""


@dataclass(frozen=True)
class Answer:
    status_code: int
    body: object


def fingerprint(*, method: str, route: str, body: object) -> str:
    canonical = orjson.dumps(
        {"method": method, "route": route, "body": body},
        option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS,
        default=str,
    )
    return hashlib.sha256(canonical).hexdigest()


def idempotency_claim(
    *, user_id: int, key: str, fingerprint: str, now: datetime | None = None
) -> int | IdempotencyRecord:
    """Must run inside transaction.atomic. The new claim's id, or the committed record that
    holds the key (waiting, if need be, for the transaction of the request that holds it)."""
    now = now or timezone.now()
    params: dict[str, Any] = {
        "user_id": user_id,
        "key": key,
        "fingerprint": fingerprint,
        "now": now,
        "expired_before": now - TTL,
    }
    with connection.cursor() as cursor:
        cursor.execute(CLAIM_SQL, params)
        row = cursor.fetchone()
    if row is not None:
        return row[0]
    return IdempotencyRecord.objects.get(user_id=user_id, key=key)


def idempotency_record(*, claim_id: int, answer: Answer) -> None:
    """The answer for the claim, in the transaction that created what it describes."""
    IdempotencyRecord.objects.filter(pk=claim_id).update(
        status_code=answer.status_code, body=answer.body
    )


def idempotency_purge(*, now: datetime | None = None, batch: int = 10_000) -> int:
    """Delete the records older than TTL, a batch at a time. Returns how many."""
    now = now or timezone.now()
    purged = 0
    while True:
        ids = list(
            IdempotencyRecord.objects.filter(created__lte=now - TTL).values_list("pk", flat=True)[
                :batch
            ]
        )
        if not ids:
            return purged
        purged += IdempotencyRecord.objects.filter(pk__in=ids).delete()[0]
