"""The names of the assignment strategies a group can be set to, by the source system's codes
(0 manual, 1 round robin, 2 least load, 3 online priority, 4 longest idle). Routing registers
each implementation here as it loads (routing/strategies/registry.py), so the choices of
`HandlerGroup.assign_strategy` are derived from what exists without handler_groups importing
routing."""

from typing import TYPE_CHECKING

from django.utils.translation import gettext_lazy

if TYPE_CHECKING:
    from django_stubs_ext import StrPromise

_labels: dict[int, str] = {}


def declare(code: int, label: str) -> None:
    if _labels.get(code, label) != label:
        raise ValueError(f"assignment strategy code {code} declared twice")
    _labels[code] = label


def strategy_choices() -> list[tuple[int, "StrPromise"]]:
    """Each label in the active language (registered as English, marked with gettext_noop)."""
    return [(code, gettext_lazy(label)) for code, label in sorted(_labels.items())]
