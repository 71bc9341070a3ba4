from django.db import transaction
from django.utils.translation import gettext as _

from config.errors import InvalidArgument

from .membership import remap_cursor
from .models import HandlerGroup

# Routing settings a group may carry besides its name, members, strategy, status and leader:
# the one list the service, the API serializer and the admin form and fieldsets derive from.
ROUTING_FIELDS = (
    "requires_presence",
    "max_active",
    "daily_cap",
    "wrap_up_seconds",
    "warmup_seconds",
    "offer_timeout_seconds",
    "overflow_group_id",
    "overflow_after_seconds",
    "target_answer_seconds",
)
# Those that are counts or durations: whole numbers, bounded the same way everywhere.
ROUTING_NUMBERS = tuple(
    f for f in ROUTING_FIELDS if f not in ("requires_presence", "overflow_group_id")
)


def routing_form_fields() -> tuple[str, ...]:
    """ROUTING_FIELDS as model form fields (the overflow group by its relation's name)."""
    return tuple(f.removesuffix("_id") for f in ROUTING_FIELDS)


def check_overflow(*, group_id: int | None, overflow_group_id: int | None) -> None:
    """A group never overflows into itself (its stuck tickets would "move" to where they
    are, forever). The one rule the service, the API serializer and the admin form apply."""
    if group_id is not None and overflow_group_id == group_id:
        raise InvalidArgument("overflow_group_id", _("A group cannot overflow into itself."))


def handler_group_save(
    *,
    group: HandlerGroup | None = None,
    name: str,
    member_ids: list[int],
    assign_strategy: int,
    status: int,
    leader_id: int | None = None,
    escalation_contact_id: int | None = None,
    **routing,
) -> HandlerGroup:
    """Create or update a group (routing settings by their field names, see ROUTING_FIELDS).
    Takes the group row lock for an update, so a membership change never interleaves with a
    round-robin pick, and keeps the round-robin cursor on the same person when members come
    and go."""
    unknown = set(routing) - set(ROUTING_FIELDS)
    if unknown:
        raise TypeError(f"unknown handler group settings: {sorted(unknown)}")
    if "overflow_group_id" in routing:
        check_overflow(
            group_id=group.pk if group else None, overflow_group_id=routing["overflow_group_id"]
        )
    with transaction.atomic():
        if group is None:
            group = HandlerGroup()
        else:
            group = HandlerGroup.objects.select_for_update().get(pk=group.pk)
            if group.member_ids != list(member_ids):
                group.last_assign_index = remap_cursor(
                    group.member_ids, group.last_assign_index, list(member_ids)
                )
        group.name = name
        group.member_ids = member_ids
        group.assign_strategy = assign_strategy
        group.status = status
        group.leader_id = leader_id
        group.escalation_contact_id = escalation_contact_id
        for field, value in routing.items():
            setattr(group, field, value)
        group.save()
        return group
