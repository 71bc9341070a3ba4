"""Delivery: the worker side of the outbox. Each attempt claims one due row (compare-and-set
with a lease), performs it through its channel and records the outcome; transient failures
retry with exponential backoff and jitter, permanent ones (4xx) fail at once and run the
failure hooks; a sweep re-enqueues deliveries whose task was lost."""

import logging
import random
from datetime import datetime, timedelta

from celery import current_app
from django.db import transaction
from django.utils import timezone
from prometheus_client import Counter

from . import sending
from .channels import PermanentDeliveryError, get_channel
from .models import DeliveryStatus, OutboxDelivery
from .sending import DELIVER_TASK

logger = logging.getLogger(__name__)

MAX_ATTEMPTS = 6
BACKOFF_BASE_SECONDS = 30
BACKOFF_CAP_SECONDS = 3600


def backoff_seconds(attempts: int, rng: random.Random | None = None) -> float:
    """Exponential backoff with full jitter: uniform in [base·2^(n-1) / 2, base·2^(n-1)]."""
    ceiling = min(BACKOFF_CAP_SECONDS, BACKOFF_BASE_SECONDS * 2 ** max(attempts - 1, 0))
    return (rng or random).uniform(ceiling / 2, ceiling)


# A delivery in flight when its worker died is sent again once its lease has run out and the
# outbox sweep (every OUTBOX_SWEEP_SECONDS, a migration's schedule) has seen it: within
# LEASE + OUTBOX_SWEEP_SECONDS = 45 s. No attempt outlives its lease: each send has a timeout
# of channels.base.SEND_TIMEOUT_SECONDS at most (webhooks' own setting is capped to it,
# EMAIL_TIMEOUT defaults to it) and the task a time limit just inside the lease (tasks.py), so
# a slow attempt is never doubled by the sweep (tests/notifications/test_delivery_lease.py).
LEASE = timedelta(seconds=30)
ATTEMPT_TIME_LIMIT_SECONDS = 25
OUTBOX_SWEEP_SECONDS = 15
# A pending delivery due this long ago has lost its message (or waits behind slow receivers:
# a second message is harmless). Lost deliveries go again within SWEEP_GRACE plus one sweep.
SWEEP_GRACE = timedelta(seconds=60)

# outcome: sent, failed (permanently), retried (a transient failure, tried again later).
ATTEMPTS = Counter(
    "notifications_deliveries_total", "E-mail and webhook delivery attempts", ["channel", "outcome"]
)


def delivery_attempt(*, delivery_id: int, now: datetime | None = None) -> str:
    """Claim one due delivery (compare-and-set: pending and due → sending with a lease),
    perform it, and record the outcome. Returns the resulting status, or "skipped" when the
    delivery was not claimable (already sent, failed, leased by another worker, not due)."""
    now = now or timezone.now()
    # A countdown task may fire a moment early: allow a little slack.
    claimed = OutboxDelivery.objects.filter(
        pk=delivery_id,
        status=DeliveryStatus.PENDING,
        next_attempt_at__lte=now + timedelta(seconds=2),
    ).update(status=DeliveryStatus.SENDING, lease_until=now + LEASE)
    if not claimed:
        return "skipped"
    delivery = OutboxDelivery.objects.select_related("notification__recipient").get(pk=delivery_id)
    attempts = delivery.attempts + 1
    try:
        get_channel(delivery.channel).deliver(delivery)
    except PermanentDeliveryError as exc:
        return _finish(delivery, attempts, DeliveryStatus.FAILED, str(exc), now)
    except Exception as exc:  # transient: timeouts, 5xx, anything unexpected
        error = f"{type(exc).__name__}: {exc}"
        if attempts >= MAX_ATTEMPTS:
            return _finish(delivery, attempts, DeliveryStatus.FAILED, error, now)
        retry_at = now + timedelta(seconds=backoff_seconds(attempts))
        OutboxDelivery.objects.filter(pk=delivery.pk).update(
            status=DeliveryStatus.PENDING,
            attempts=attempts,
            last_error=error[:2000],
            next_attempt_at=retry_at,
            lease_until=None,
        )
        ATTEMPTS.labels(delivery.channel, "retried").inc()
        logger.warning(
            "delivery failed, will retry",
            extra={"delivery_id": delivery.pk, "attempts": attempts, "error": error[:300]},
        )
        _schedule(delivery.pk, retry_at, now)
        _run_failure_hooks(delivery)
        return DeliveryStatus.PENDING
    return _finish(delivery, attempts, DeliveryStatus.SENT, "", now)


_failure_hooks: dict[str, list] = {}


def on_delivery_failure(template_code: str):
    """Register `hook(notification)` to run whenever a delivery attempt of this template
    fails, retried or not (an offer that could not be pushed is reclaimed at once)."""

    def decorator(hook):
        _failure_hooks.setdefault(template_code, []).append(hook)
        return hook

    return decorator


def _finish(delivery, attempts, status, error, now) -> str:
    OutboxDelivery.objects.filter(pk=delivery.pk).update(
        status=status,
        attempts=attempts,
        last_error=error[:2000],
        lease_until=None,
        sent_at=now if status == DeliveryStatus.SENT else None,
    )
    ATTEMPTS.labels(delivery.channel, "sent" if status == DeliveryStatus.SENT else "failed").inc()
    if status == DeliveryStatus.FAILED:
        logger.error(
            "delivery failed permanently",
            extra={"delivery_id": delivery.pk, "channel": delivery.channel, "error": error[:300]},
        )
        _run_failure_hooks(delivery)
    return status


def _run_failure_hooks(delivery) -> None:
    for hook in _failure_hooks.get(delivery.notification.template_code, []):
        try:
            hook(delivery.notification)
        except Exception:
            logger.exception("delivery failure hook failed", extra={"delivery_id": delivery.pk})


def _schedule(delivery_id: int, at: datetime, now: datetime) -> None:
    try:
        current_app.send_task(
            DELIVER_TASK, args=(delivery_id,), countdown=max((at - now).total_seconds(), 0)
        )
    except Exception:
        logger.exception("could not schedule retry", extra={"delivery_id": delivery_id})


def outbox_sweep(*, now: datetime | None = None, grace: timedelta = SWEEP_GRACE) -> int:
    """Re-enqueue deliveries whose task was lost: due for longer than `grace` but still
    pending (the broker lost the message, e.g. Redis came back empty), or leased by a worker
    that died (lease expired). Returns how many. A delivery still waiting its turn in the
    queue may be enqueued twice; the claim lets one of them through."""
    now = now or timezone.now()
    with transaction.atomic():
        abandoned = list(
            OutboxDelivery.objects.select_for_update(skip_locked=True)
            .filter(status=DeliveryStatus.SENDING, lease_until__lt=now)
            .values_list("pk", flat=True)[:1000]
        )
        OutboxDelivery.objects.filter(pk__in=abandoned).update(
            status=DeliveryStatus.PENDING, lease_until=None, next_attempt_at=now
        )
    overdue = list(
        OutboxDelivery.objects.filter(
            status=DeliveryStatus.PENDING, next_attempt_at__lte=now - grace
        ).values_list("pk", flat=True)[:1000]
    )
    ids = sorted(set(abandoned) | set(overdue))
    sending.enqueue_deliveries(ids)
    return len(ids)
