"""Sending: one service, exactly once. `send` writes, in the caller's transaction, one inbox
message per recipient and one outbox row per external delivery; a unique constraint on
(recipient, dedupe_key) makes a replayed event harmless."""

import hashlib
import json
import logging
import random
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import connection, transaction
from django.utils import timezone
from prometheus_client import Counter

from .channels import get_channel
from .models import DeliveryStatus, Notification, NotifyTemplate, OutboxDelivery
from .rendering import TemplateError, render

logger = logging.getLogger(__name__)

SENT = Counter("notifications_sent_total", "Inbox messages written", ["template"])
DUPLICATES = Counter(
    "notifications_duplicates_total", "Sends ignored as already delivered", ["template"]
)
TEMPLATE_ERRORS = Counter(
    "notifications_template_errors_total",
    "Sends refused: unknown template or missing params",
    ["template"],
)

MAX_ATTEMPTS = 6
BACKOFF_BASE_SECONDS = 30
BACKOFF_CAP_SECONDS = 3600


def _user_id(recipient) -> int:
    return recipient if isinstance(recipient, int) else recipient.pk


@dataclass(frozen=True)
class Message:
    """One event to notify: who, with which parameters, under which dedupe key."""

    recipients: Iterable
    params: dict[str, object]
    dedupe_key: str
    ticket_id: int | None = None


def send(
    *,
    recipients: Iterable,
    template_code: str,
    params: dict[str, object],
    dedupe_key: str,
    ticket_id: int | None = None,
    now: datetime | None = None,
) -> list[Notification]:
    """Notify each recipient (users or user ids; duplicates collapse) once per dedupe_key.
    Returns the messages newly written (empty when all were sent before). Raises
    TemplateError for an unknown template or a missing parameter, writing nothing."""
    return send_batch(
        template_code=template_code,
        messages=[Message(recipients, params, dedupe_key, ticket_id)],
        now=now,
    )


def send_batch(
    *, template_code: str, messages: list[Message], now: datetime | None = None
) -> list[Notification]:
    """`send` for many events of one template in a constant number of queries (the SLA
    scanner's path). All messages render before anything is written: one bad message
    refuses the batch."""
    now = now or timezone.now()
    template = NotifyTemplate.objects.filter(code=template_code).first()
    if template is None:
        TEMPLATE_ERRORS.labels(template_code).inc()
        logger.error("unknown notification template", extra={"template": template_code})
        raise TemplateError(f"unknown notification template {template_code!r}")
    rows = []
    for message in messages:
        try:
            title = render(template.title, message.params)
            content = render(template.content, message.params)
        except TemplateError as exc:
            TEMPLATE_ERRORS.labels(template_code).inc()
            logger.error(
                "notification template error",
                extra={
                    "template": template_code,
                    "error": str(exc),
                    "dedupe_key": message.dedupe_key,
                },
            )
            raise TemplateError(f"template {template_code!r}: {exc}") from exc
        params_json = json.dumps(message.params, default=str)
        for user_id in dict.fromkeys(_user_id(r) for r in message.recipients if r is not None):
            rows.append(
                (
                    user_id,
                    template_code,
                    title,
                    content,
                    params_json,
                    message.dedupe_key,
                    message.ticket_id,
                    now,
                )
            )
    if not template.enabled:
        logger.info("notification template disabled", extra={"template": template_code})
        return []
    if not rows:
        return []
    # Inside a caller's transaction no savepoint is needed: any error here propagates and
    # rolls the caller back with everything it wrote.
    with transaction.atomic(savepoint=False):
        created = _insert_once(rows)
        DUPLICATES.labels(template_code).inc(len(rows) - len(created))
        if not created:
            return []
        by_key = {(row[0], row[5]): row for row in rows}
        notifications = []
        for notification_id, recipient_id, dedupe_key in created:
            row = by_key[(recipient_id, dedupe_key)]
            notifications.append(
                Notification(
                    pk=notification_id,
                    recipient_id=recipient_id,
                    template_code=template_code,
                    title=row[2],
                    content=row[3],
                    params=json.loads(row[4]),
                    dedupe_key=dedupe_key,
                    ticket_id=row[6],
                    created=now,
                )
            )
        deliveries = _outbox_rows(notifications, template.channels, now)
        SENT.labels(template_code).inc(len(notifications))
        if deliveries:
            ids = [d.pk for d in deliveries]
            transaction.on_commit(lambda: _enqueue(ids))
    return notifications


def _insert_once(rows: list[tuple]) -> list[tuple[int, int, str]]:
    """INSERT … ON CONFLICT DO NOTHING RETURNING id: the constraint decides, not a prior read,
    so concurrent senders of the same event cannot both write."""
    created: list[tuple[int, int, str]] = []
    with connection.cursor() as cursor:
        for offset in range(0, len(rows), 1000):
            chunk = rows[offset : offset + 1000]
            placeholders = ",".join(["(%s,%s,%s,%s,%s::jsonb,%s,%s,%s)"] * len(chunk))
            cursor.execute(
                f"""
                INSERT INTO oa_notification
                    (recipient_id, template_code, title, content, params, dedupe_key,
                     ticket_id, created)
                VALUES {placeholders}
                ON CONFLICT ON CONSTRAINT notification_once_per_recipient DO NOTHING
                RETURNING id, recipient_id, dedupe_key
                """,
                [value for row in chunk for value in row],
            )
            created.extend(cursor.fetchall())
    return created


def _outbox_rows(notifications, channel_codes, now) -> list[OutboxDelivery]:
    """One delivery per recipient and target (email), or per event and target for channels
    that speak to a room rather than a person (a webhook posts an SLA timeout once, not once
    per recipient). The idempotency key is unique, so a later send of the same event cannot
    add a second delivery either."""
    rows: dict[str, OutboxDelivery] = {}
    for code in channel_codes:
        try:
            channel = get_channel(code)
        except LookupError:
            # Admin refuses unknown codes; a row edited elsewhere must not break the sender.
            TEMPLATE_ERRORS.labels(notifications[0].template_code).inc()
            logger.error("unknown notification channel", extra={"channel": code})
            continue
        if not channel.external:
            continue
        targets = channel.targets(notifications)
        for notification in notifications:
            for target in targets.get(notification.pk, []):
                scope = notification.dedupe_key if channel.per_event else notification.pk
                key = hashlib.sha256(f"{scope}:{code}:{target}".encode()).hexdigest()
                rows.setdefault(
                    key,
                    OutboxDelivery(
                        notification=notification,
                        channel=code,
                        target=target,
                        next_attempt_at=now,
                        created=now,
                        idempotency_key=key,
                    ),
                )
    if not rows:
        return []
    OutboxDelivery.objects.bulk_create(rows.values(), ignore_conflicts=True)
    # Those this send wrote (a conflicting row belongs to an earlier send's notification).
    return list(
        OutboxDelivery.objects.filter(
            idempotency_key__in=list(rows), notification__in=[n.pk for n in notifications]
        )
    )


def _enqueue(delivery_ids: list[int]) -> None:
    from .tasks import deliver

    for delivery_id in delivery_ids:
        try:
            deliver.delay(delivery_id)
        except Exception:  # the broker is down: the sweep will pick the row up
            logger.exception("could not enqueue delivery", extra={"delivery_id": delivery_id})


def backoff_seconds(attempts: int, rng: random.Random | None = None) -> float:
    """Exponential backoff with full jitter: uniform in [base·2^(n-1) / 2, base·2^(n-1)]."""
    ceiling = min(BACKOFF_CAP_SECONDS, BACKOFF_BASE_SECONDS * 2 ** max(attempts - 1, 0))
    return (rng or random).uniform(ceiling / 2, ceiling)


LEASE = timedelta(minutes=5)


def delivery_attempt(*, delivery_id: int, now: datetime | None = None) -> str:
    """Claim one due delivery (compare-and-set: pending and due → sending with a lease),
    perform it, and record the outcome. Returns the resulting status, or "skipped" when the
    delivery was not claimable (already sent, failed, leased by another worker, not due)."""
    from .channels import PermanentDeliveryError

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
    from .tasks import deliver

    try:
        deliver.apply_async((delivery_id,), countdown=max((at - now).total_seconds(), 0))
    except Exception:
        logger.exception("could not schedule retry", extra={"delivery_id": delivery_id})


def outbox_sweep(*, now: datetime | None = None, grace: timedelta = timedelta(minutes=2)) -> int:
    """Re-enqueue deliveries whose task was lost: due for longer than `grace` but still
    pending, or leased by a worker that died (lease expired). Returns how many."""
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
    _enqueue(ids)
    return len(ids)


def inbox_mark_read(*, user, notification_id: int, now: datetime | None = None) -> bool:
    """Mark one of the user's messages read. False when it is not theirs (callers 404)."""
    now = now or timezone.now()
    mine = Notification.objects.filter(pk=notification_id, recipient=user)
    if not mine.exists():
        return False
    mine.filter(read_at__isnull=True).update(read_at=now)
    return True


def inbox_mark_all_read(*, user, now: datetime | None = None) -> int:
    now = now or timezone.now()
    return Notification.objects.filter(recipient=user, read_at__isnull=True).update(read_at=now)


__all__ = ["Message", "TemplateError", "send", "send_batch", "delivery_attempt", "outbox_sweep"]
