import logging
from datetime import datetime

from handler_groups.models import HandlerGroup

from .base import PickContext
from .eligibility import eligible_member_ids
from .registry import get_strategy

logger = logging.getLogger(__name__)


def pick_handler(*, group: HandlerGroup, ticket_id: int | None, now: datetime) -> int | None:
    """Choose the member who gets a ticket of `group` by the group's strategy, or None (the
    ticket stays in the pool). The caller must hold the group row lock
    (`select_for_update`) inside `transaction.atomic`."""
    if not group.is_enabled:
        return None
    strategy = get_strategy(group.assign_strategy)
    if not strategy.auto_assigns:
        return None
    member_ids = group.member_ids
    ctx = PickContext(
        group=group,
        member_ids=member_ids,
        eligible_ids=eligible_member_ids(group=group, member_ids=member_ids),
        ticket_id=ticket_id,
        now=now,
    )
    return strategy.pick(ctx)
