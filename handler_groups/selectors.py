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


# The leader rule, its one home: a supervisor's reads and pages (figures, staffing, SLA
# reports, simulations, the dashboard) are for staff, over every group, and for a group's
# leader, over the groups they lead. `handler_groups.access` refuses by it.


def groups_led_by(user) -> QuerySet[HandlerGroup]:
    """The groups `user` supervises: every group for staff, those they lead for anyone else,
    none for the anonymous."""
    if not user.is_authenticated:
        return HandlerGroup.objects.none()
    if user.is_staff:
        return HandlerGroup.objects.all()
    return HandlerGroup.objects.filter(leader_id=user.pk)


def supervises(user, group: HandlerGroup | None) -> bool:
    """Whether `user` supervises `group`: staff (whatever the group, none included), or its
    leader."""
    return user.is_authenticated and (user.is_staff or leads(user, group))


def supervises_any(user) -> bool:
    """Whether `user` supervises some group: staff, or the leader of at least one."""
    return user.is_authenticated and (user.is_staff or groups_led_by(user).exists())
