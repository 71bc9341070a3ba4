from django.db import transaction

from .models import HandlerGroup


def handler_group_save(
    *,
    group: HandlerGroup | None = None,
    name: str,
    member_ids: list[int],
    assign_strategy: int,
    status: int,
    leader_id: int | None = None,
) -> HandlerGroup:
    """Create or update a group. Takes the group row lock for an update, so a membership
    change never interleaves with a round-robin pick."""
    with transaction.atomic():
        if group is None:
            group = HandlerGroup()
        else:
            group = HandlerGroup.objects.select_for_update().get(pk=group.pk)
        group.name = name
        group.member_ids = member_ids
        group.assign_strategy = assign_strategy
        group.status = status
        group.leader_id = leader_id
        group.save()
        return group
