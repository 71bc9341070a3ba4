"""Sending: one service, exactly once. `send` writes, in the caller's transaction, one inbox
message per recipient and one outbox row per external delivery; a unique constraint on
(recipient, dedupe_key) makes a replayed event harmless. The deliveries are enqueued after
commit by the task's name (delivery.py performs them).

Each recipient reads the message in their own language and time zone (accounts.preferences
reader_settings): the template's translation for their language when there is one, else its
own wording; a datetime parameter is written in their zone, a lazily translated parameter
(gettext_lazy) in their language. The stored params keep the neutral values (ISO-8601)."""

import hashlib
import json
import logging
import zoneinfo
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from celery import current_app
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone, translation
from django.utils.functional import Promise
from prometheus_client import Counter

from accounts.preferences import reader_settings
from config.memo import ProcessMemo

from .channels import get_channel
from .models import (
    DeliveryStatus,
    Notification,
    NotifyTemplate,
    NotifyTemplateTranslation,
)
from .rendering import TemplateError, render

logger = logging.getLogger(__name__)

DELIVER_TASK = "notifications.deliver"

# Templates are read on every send and changed rarely (config/memo.py).
_templates = ProcessMemo("notification templates").clear_on_change(
    NotifyTemplate, NotifyTemplateTranslation
)

SENT = Counter("notifications_sent_total", "Inbox messages written", ["template"])
DUPLICATES = Counter(
    "notifications_duplicates_total", "Sends ignored as already delivered", ["template"]
)
TEMPLATE_ERRORS = Counter(
    "notifications_template_errors_total",
    "Sends refused: unknown template or missing params",
    ["template"],
)


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
    readers: dict | None = None,
) -> list[Notification]:
    """Notify each recipient (users or user ids; duplicates collapse) once per dedupe_key.
    Returns the messages newly written (empty when all were sent before). Raises
    TemplateError for an unknown template or a missing parameter, writing nothing.
    `readers` (accounts.preferences.Reader by recipient), when the caller has read them
    already; read here otherwise."""
    return send_batch(
        template_code=template_code,
        messages=[Message(recipients, params, dedupe_key, ticket_id)],
        now=now,
        readers=readers,
    )


def send_batch(
    *,
    template_code: str,
    messages: list[Message],
    now: datetime | None = None,
    readers: dict | None = None,
) -> list[Notification]:
    """`send` for many events of one template in a constant number of queries (the SLA
    scanner's path). All messages render before anything is written: one bad message
    refuses the batch."""
    now = now or timezone.now()
    template, wordings = _template(template_code)
    recipients = [_user_id(r) for message in messages for r in message.recipients if r is not None]
    if readers is None or any(r not in readers for r in recipients):
        readers = reader_settings(recipients)
    rows = _rows(template_code, wordings, messages, readers, now)
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
        ids = _outbox_rows(notifications, template.channels, readers, now)
        SENT.labels(template_code).inc(len(notifications))
        if ids:
            transaction.on_commit(lambda: enqueue_deliveries(ids))
    return notifications


def _template(code: str):
    """The template and its wordings (memoised), or TemplateError."""
    loaded = _templates.get(code, lambda: _load_template(code))
    if loaded is None:
        TEMPLATE_ERRORS.labels(code).inc()
        logger.error("unknown notification template", extra={"template": code})
        raise TemplateError(f"unknown notification template {code!r}")
    return loaded


def _rows(
    template_code: str, wordings: dict, messages: list[Message], readers: dict, now: datetime
) -> list[tuple]:
    """The inbox rows of `messages`, each rendered for its reader: (recipient, template,
    title, content, params JSON, dedupe key, ticket, created). TemplateError when a message
    cannot be rendered, whether or not it has anyone to tell."""
    rows = []
    for message in messages:
        rendered: dict[tuple[str, str], tuple[str, str]] = {}
        with translation.override(settings.LANGUAGE_CODE):
            params_json = json.dumps(message.params, default=_neutral)
        for user_id in dict.fromkeys(_user_id(r) for r in message.recipients if r is not None):
            reader = readers[user_id]
            key = (reader.language, reader.zone)
            if key not in rendered:
                rendered[key] = _render_for(
                    template_code, wordings, message, language=reader.language, zone=reader.zone
                )
            title, content = rendered[key]
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
        if not rendered:
            # Nobody to tell: still refuse a message that could not be rendered.
            _render_for(
                template_code,
                wordings,
                message,
                language=settings.LANGUAGE_CODE,
                zone=settings.TIME_ZONE,
            )
    return rows


def _load_template(code: str):
    """The template and its wording per language (its own in LANGUAGE_CODE), or None."""
    template = NotifyTemplate.objects.filter(code=code).first()
    if template is None:
        return None
    wordings = {settings.LANGUAGE_CODE: (template.title, template.content)}
    for translated in NotifyTemplateTranslation.objects.filter(template=template):
        wordings[translated.language] = (translated.title, translated.content)
    return template, wordings


def _render_for(code: str, wordings: dict, message: Message, *, language: str, zone: str):
    """(title, content) of one message for readers of one language and zone."""
    title, content = wordings.get(language) or wordings[settings.LANGUAGE_CODE]
    with translation.override(language):
        params = {name: _localised(value, zone) for name, value in message.params.items()}
        try:
            return render(title, params), render(content, params)
        except TemplateError as exc:
            TEMPLATE_ERRORS.labels(code).inc()
            logger.error(
                "notification template error",
                extra={"template": code, "error": str(exc), "dedupe_key": message.dedupe_key},
            )
            raise TemplateError(f"template {code!r}: {exc}") from exc


def _localised(value, zone: str):
    """A parameter as one reader reads it: a moment in their zone (named), a translatable
    word in the active language; anything else as it is."""
    if isinstance(value, datetime):
        moment = value.astimezone(zoneinfo.ZoneInfo(zone))
        return f"{moment:%Y-%m-%d %H:%M} {moment.tzname()}"
    if isinstance(value, Promise):
        return str(value)
    return value


def _neutral(value) -> str:
    """Stored params: ISO-8601 for moments, the default language for words."""
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


INSERT_ONCE_SQL = """
INSERT INTO oa_notification
    (recipient_id, template_code, title, content, params, dedupe_key, ticket_id, created)
SELECT r.recipient_id, r.template_code, r.title, r.content, r.params::jsonb, r.dedupe_key,
       r.ticket_id, r.created
FROM unnest(%s::bigint[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[],
            %s::bigint[], %s::timestamptz[])
    AS r (recipient_id, template_code, title, content, params, dedupe_key, ticket_id, created)
ON CONFLICT ON CONSTRAINT notification_once_per_recipient DO NOTHING
RETURNING id, recipient_id, dedupe_key
"""
"""The inbox rows of a send (one array parameter per column, the rows of `_rows`), each
written unless its recipient has it already (recipient, dedupe key): the constraint decides,
not a prior read, so concurrent senders of the same event cannot both write — the second
waits on the first's uncommitted row (the unique index's lock) and then writes nothing.
Returns the rows written."""


def _insert_once(rows: list[tuple]) -> list[tuple[int, int, str]]:
    """INSERT_ONCE_SQL: the rows written, (id, recipient, dedupe key)."""
    with connection.cursor() as cursor:
        cursor.execute(INSERT_ONCE_SQL, [list(column) for column in zip(*rows, strict=True)])
        return cursor.fetchall()


def _deliveries(
    template_code: str, channel_codes, recipients: list[tuple[int, str]], readers
) -> dict[str, tuple[int, str, str, str]]:
    """The external deliveries of a send, by idempotency key: (recipient, dedupe key,
    channel, target) — one per recipient and target (email), or one per event and target for
    channels that speak to a room rather than a person (a webhook posts an SLA timeout
    once, not once per recipient). `recipients`: (recipient, dedupe key) of each inbox row.
    The key names the event, the recipient (per-person channels), the channel and the
    target, so a later send of the same event cannot add a second delivery."""
    found: dict[str, tuple[int, str, str, str]] = {}  # key → recipient, dedupe key, code, target
    for code in channel_codes:
        try:
            channel = get_channel(code)
        except LookupError:
            # Admin refuses unknown codes; a row edited elsewhere must not break the sender.
            TEMPLATE_ERRORS.labels(template_code).inc()
            logger.error("unknown notification channel", extra={"channel": code})
            continue
        if not channel.external:
            continue
        targets = channel.targets(template_code, {r: readers[r] for r, _key in recipients})
        for recipient_id, dedupe_key in recipients:
            scope = dedupe_key if channel.per_event else f"{dedupe_key}:{recipient_id}"
            for target in targets.get(recipient_id, []):
                key = hashlib.sha256(f"{scope}:{code}:{target}".encode()).hexdigest()
                found.setdefault(key, (recipient_id, dedupe_key, code, target))
    return found


OUTBOX_SQL = """
INSERT INTO oa_notify_outbox
    (notification_id, channel, target, status, attempts, next_attempt_at, last_error,
     idempotency_key, created)
SELECT d.notification_id, d.channel, d.target, %s, 0, %s, '', d.idempotency_key, %s
FROM unnest(%s::bigint[], %s::text[], %s::text[], %s::text[])
    AS d (notification_id, channel, target, idempotency_key)
ON CONFLICT DO NOTHING
RETURNING id
"""
"""The external deliveries of the messages a send wrote (one array parameter per column),
each unless a delivery of its idempotency key exists (a conflicting row belongs to an
earlier send of the same event: the unique key decides, as for the inbox rows). Returns the
ids of the rows written, the deliveries to enqueue."""


def _outbox_rows(notifications, channel_codes, readers, now) -> list[int]:
    """The outbox rows of the messages this send wrote (see _deliveries): their ids."""
    by_recipient = {(n.recipient_id, n.dedupe_key): n for n in notifications}
    found = _deliveries(notifications[0].template_code, channel_codes, list(by_recipient), readers)
    if not found:
        return []
    rows = [
        (by_recipient[recipient_id, dedupe_key].pk, code, target, key)
        for key, (recipient_id, dedupe_key, code, target) in found.items()
    ]
    with connection.cursor() as cursor:
        cursor.execute(
            OUTBOX_SQL,
            [
                DeliveryStatus.PENDING.value,
                now,
                now,
                *(list(column) for column in zip(*rows, strict=True)),
            ],
        )
        return [delivery_id for (delivery_id,) in cursor.fetchall()]


def enqueue_deliveries(delivery_ids: list[int]) -> None:
    """Hand each delivery to a worker (by the task's name: tasks.py defines it)."""
    for delivery_id in delivery_ids:
        try:
            current_app.send_task(DELIVER_TASK, args=(delivery_id,))
        except Exception:  # the broker is down: the sweep will pick the row up
            logger.exception("could not enqueue delivery", extra={"delivery_id": delivery_id})


__all__ = [
    "Message",
    "TemplateError",
    "enqueue_deliveries",
    "send",
    "send_batch",
]
