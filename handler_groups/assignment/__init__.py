"""Assignment strategies. Each strategy is a small class in its own module, registered under
the source system's integer code; the approval service only ever calls `pick_handler`."""

from . import least_load, longest_idle, manual, online_priority, round_robin  # noqa: F401
from .service import pick_handler

__all__ = ["pick_handler"]
