from typing import ClassVar

from .registry import register


@register("in_app", external=False)
class InApp:
    """The inbox row is the delivery: nothing leaves the database."""

    code: ClassVar[str]  # these three: set by @register
    external: ClassVar[bool]
    per_event: ClassVar[bool]

    def targets(self, template_code, readers) -> dict[int, list[str]]:
        return {}

    def deliver(self, delivery) -> None:  # pragma: no cover - never has outbox rows
        raise AssertionError("in_app has no outbox deliveries")
