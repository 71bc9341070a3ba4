import hashlib
import hmac
import json
from typing import ClassVar

import requests

from config.memo import ProcessMemo
from notifications.models import Webhook as WebhookModel

from .base import SEND_TIMEOUT_SECONDS, PermanentDeliveryError, TransientDeliveryError
from .registry import register

# Read on every send of a webhook-channel template, changed rarely (config/memo.py).
_enabled_hooks = ProcessMemo("webhooks").clear_on_change(WebhookModel)


def sign(secret: str, body: bytes) -> str:
    """The X-Signature header: sha256=<hex HMAC of the raw body with the webhook's secret>."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def send_timeout(hook: WebhookModel) -> float:
    """The hook's own timeout, capped so that an attempt ends well inside its delivery lease
    (notifications/delivery.py): a slow receiver is retried, not raced by the sweep."""
    return min(hook.timeout_seconds, SEND_TIMEOUT_SECONDS)


@register("webhook", external=True, per_event=True)
class Webhook:
    """JSON POST with a timeout, an Idempotency-Key header and an HMAC signature header."""

    code: ClassVar[str]  # these three: set by @register
    external: ClassVar[bool]
    per_event: ClassVar[bool]

    def targets(self, template_code, readers) -> dict[int, list[str]]:
        hooks = _enabled_hooks.get(
            "enabled", lambda: list(WebhookModel.objects.filter(enabled=True))
        )
        subscribed = [str(h.pk) for h in hooks if h.subscribes_to(template_code)]
        return dict.fromkeys(readers, subscribed) if subscribed else {}

    def deliver(self, delivery) -> None:
        hook = WebhookModel.objects.filter(pk=int(delivery.target), enabled=True).first()
        if hook is None:
            raise PermanentDeliveryError("webhook deleted or disabled")
        notification = delivery.notification
        body = json.dumps(
            {
                "template": notification.template_code,
                "title": notification.title,
                "content": notification.content,
                "params": notification.params,
                "recipient_id": notification.recipient_id,
                "ticket_id": notification.ticket_id,
                "notification_id": notification.pk,
                "created": notification.created.isoformat(),
            },
            separators=(",", ":"),
        ).encode()
        headers = {
            "Content-Type": "application/json",
            "Idempotency-Key": delivery.idempotency_key,
            "X-Signature": sign(hook.secret, body),
        }
        try:
            response = requests.post(
                hook.url, data=body, headers=headers, timeout=send_timeout(hook)
            )
        except requests.RequestException as exc:
            raise TransientDeliveryError(f"{type(exc).__name__}: {exc}") from exc
        if 400 <= response.status_code < 500 and response.status_code not in (408, 429):
            raise PermanentDeliveryError(f"HTTP {response.status_code}: {response.text[:300]}")
        if response.status_code >= 300:
            raise TransientDeliveryError(f"HTTP {response.status_code}: {response.text[:300]}")
