from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, ClassVar, Protocol

from .eligibility import MemberRow

if TYPE_CHECKING:
    from handler_groups.models import HandlerGroup


@dataclass(frozen=True)
class PickContext:
    """What a strategy may look at. `eligible_ids` is already filtered by the eligibility rule
    (eligibility.py), in the group's member order; `member_ids` is the full member list
    (round robin's cursor walks it); `rows` has every member's figures by user id."""

    group: "HandlerGroup"
    member_ids: list[int]
    eligible_ids: list[int]
    ticket_id: int | None
    now: datetime
    rows: dict[int, MemberRow] = field(default_factory=dict)


class Strategy(Protocol):
    code: ClassVar[int]
    label: ClassVar[str]
    auto_assigns: ClassVar[bool]

    def pick(self, ctx: PickContext) -> int | None:
        """Return the chosen member's user id, or None to leave the ticket in the pool.
        Runs inside the approval transaction with the group row locked."""
        ...
