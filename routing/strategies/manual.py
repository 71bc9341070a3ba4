from typing import ClassVar

from django.utils.translation import gettext_noop

from .base import PickContext
from .registry import register


@register(0, gettext_noop("manual"))
class Manual:
    """Nobody is picked: the ticket waits in the pool until a member accepts it."""

    code: ClassVar[int]  # set by @register
    label: ClassVar[str]
    auto_assigns: ClassVar[bool] = False

    def pick(self, ctx: PickContext) -> int | None:
        return None
