"""The one eligibility rule for routing: which members of a group may be given a ticket now.
Every strategy gets its candidates from here."""

from django.contrib.auth import get_user_model

from handler_groups.models import HandlerGroup


def eligible_member_ids(*, group: HandlerGroup, member_ids: list[int]) -> list[int]:
    """Members who can take a ticket, in member order: active user accounts."""
    if not member_ids:
        return []
    active = set(
        get_user_model()
        .objects.filter(pk__in=member_ids, is_active=True)
        .values_list("pk", flat=True)
    )
    return [member_id for member_id in member_ids if member_id in active]
