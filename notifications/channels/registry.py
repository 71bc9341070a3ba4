from collections.abc import Callable
from typing import TypeVar

from .base import Channel

_channels: dict[str, Channel] = {}

C = TypeVar("C", bound=Channel)


def register(code: str, *, external: bool, per_event: bool = False) -> Callable[[type[C]], type[C]]:
    """Class decorator: sets the class's `code`, `external` and `per_event` and registers one
    instance. A class without Channel's shape fails type checks."""

    def decorator(cls: type[C]) -> type[C]:
        if code in _channels:
            raise ValueError(f"notification channel {code!r} registered twice")
        cls.code = code
        cls.external = external
        cls.per_event = per_event
        _channels[code] = cls()
        return cls

    return decorator


def get_channel(code: str) -> Channel:
    try:
        return _channels[code]
    except KeyError:
        raise LookupError(f"no notification channel {code!r}") from None


def channel_choices() -> list[tuple[str, str]]:
    return sorted((code, code) for code in _channels)
