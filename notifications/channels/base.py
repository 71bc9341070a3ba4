from typing import TYPE_CHECKING, ClassVar, Protocol

if TYPE_CHECKING:
    from notifications.models import Notification, OutboxDelivery


class PermanentDeliveryError(Exception):
    """Retrying cannot help (e.g. the receiver answered 4xx): mark the delivery failed."""


class TransientDeliveryError(Exception):
    """Worth retrying later (timeouts, 5xx, connection errors)."""


class Channel(Protocol):
    code: ClassVar[str]
    # External channels get an outbox row per target; in_app is the inbox row itself.
    external: ClassVar[bool]

    def targets(self, notification: "Notification") -> list[str]:
        """Where this notification goes on this channel (addresses, webhook ids)."""
        ...

    def deliver(self, delivery: "OutboxDelivery") -> None:
        """Perform one delivery; raise Permanent/TransientDeliveryError on failure."""
        ...
