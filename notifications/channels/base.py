from typing import TYPE_CHECKING, ClassVar, Protocol

if TYPE_CHECKING:
    from collections.abc import Mapping

    from accounts.preferences import Reader
    from notifications.models import OutboxDelivery


# The longest one send may take (a webhook's own timeout is capped to it; EMAIL_TIMEOUT
# defaults to it): shorter than a delivery's lease (notifications/delivery.py).
SEND_TIMEOUT_SECONDS = 10.0


class PermanentDeliveryError(Exception):
    """Retrying cannot help (a webhook's 4xx, an SMTP 5xx): mark the delivery failed."""


class TransientDeliveryError(Exception):
    """Worth retrying later (a webhook's 5xx, an SMTP 4xx, timeouts, connection errors)."""


class Channel(Protocol):
    code: ClassVar[str]
    # External channels get an outbox row per target; in_app is the inbox row itself.
    external: ClassVar[bool]
    # One delivery per event (a room: webhooks) rather than per recipient (a person: email).
    per_event: ClassVar[bool]

    def targets(self, template_code: str, readers: "Mapping[int, Reader]") -> dict[int, list[str]]:
        """Where a message of `template_code` to each of these recipients goes on this
        channel (addresses, webhook ids), by recipient id; `readers` (accounts.preferences)
        carries each recipient's address, so a channel need not read the people again."""
        ...

    def deliver(self, delivery: "OutboxDelivery") -> None:
        """Perform one delivery; raise Permanent/TransientDeliveryError on failure."""
        ...
