from collections.abc import Callable
from typing import TypeVar

from handler_groups.strategies import declare

from .base import Strategy

_strategies: dict[int, Strategy] = {}

S = TypeVar("S", bound=Strategy)


def register(code: int, label: str) -> Callable[[type[S]], type[S]]:
    """Class decorator: sets the class's `code` and `label` and registers one instance. A class
    that does not have Strategy's shape (its `pick`, its class attributes) fails type checks."""

    def decorator(cls: type[S]) -> type[S]:
        if code in _strategies:
            raise ValueError(f"assignment strategy code {code} registered twice")
        cls.code = code
        cls.label = label
        _strategies[code] = cls()
        declare(code, label)  # HandlerGroup.assign_strategy's choices
        return cls

    return decorator


def get_strategy(code: int) -> Strategy:
    try:
        return _strategies[code]
    except KeyError:
        raise LookupError(f"no assignment strategy with code {code}") from None


def strategy_choices() -> list[tuple[int, str]]:
    """Choices for HandlerGroup.assign_strategy, derived from what is registered."""
    return sorted((code, strategy.label) for code, strategy in _strategies.items())
