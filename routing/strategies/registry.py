from collections.abc import Callable

from handler_groups.strategies import declare

from .base import Strategy

_strategies: dict[int, Strategy] = {}


def register(code: int, label: str) -> Callable[[type], type]:
    def decorator(cls: type) -> type:
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
