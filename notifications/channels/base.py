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
    # One delivery per event (a room: webhooks) rather than per recipient (a person: email).
    per_event: ClassVar[bool]

    def targets(self, notifications: "list[Notification]") -> dict[int, list[str]]:
        """Where each notification goes on this channel (addresses, webhook ids), by
        notification id, for a whole batch at once."""
        ...

    def deliver(self, delivery: "OutboxDelivery") -> None:
        """Perform one delivery; raise Permanent/TransientDeliveryError on failure."""
        ...
