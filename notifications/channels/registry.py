from collections.abc import Callable

from .base import Channel

_channels: dict[str, Channel] = {}


def register(code: str, *, external: bool, per_event: bool = False) -> Callable[[type], type]:
    def decorator(cls: type) -> type:
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
