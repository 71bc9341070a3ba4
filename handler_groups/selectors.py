from django.db.models import Q, QuerySet

from .membership import member_regex
from .models import HandlerGroup


def groups_of_member(user_id: int) -> QuerySet[HandlerGroup]:
    return HandlerGroup.objects.filter(member_user_ids__regex=member_regex(user_id))


def group_ids_for_user(user) -> list[int]:
    """Groups the user works in: as a member or as the leader."""
    if not user.is_authenticated:
        return []
    return list(
        HandlerGroup.objects.filter(
            Q(member_user_ids__regex=member_regex(user.pk)) | Q(leader_id=user.pk)
        ).values_list("pk", flat=True)
    )


def is_member(user, group: HandlerGroup) -> bool:
    return user.is_authenticated and user.pk in group.member_ids


def leads(user, group: HandlerGroup | None) -> bool:
    return group is not None and user.is_authenticated and group.leader_id == user.pk
