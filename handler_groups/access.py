"""Refusals by the leader rule (handler_groups.selectors.groups_led_by and supervises): the one
place an API or page asks "staff, or leader of this group?"."""

from django.utils.translation import gettext as _
from rest_framework.exceptions import NotFound

from config.errors import Forbidden

from .models import HandlerGroup
from .selectors import supervises, supervises_any


def require_leader(user, group: HandlerGroup, refusal: str) -> HandlerGroup:
    """`group`, when `user` supervises it; else Forbidden (403) with `refusal`."""
    if not supervises(user, group):
        raise Forbidden(refusal)
    return group


def require_supervisor(user, refusal: str) -> None:
    """Forbidden (403) with `refusal` unless `user` supervises some group."""
    if not supervises_any(user):
        raise Forbidden(refusal)


def supervised_group(user, group_id: int, refusal: str) -> HandlerGroup:
    """The group a supervisor's read is about: 404 when there is none, 403 (`refusal`) unless
    `user` supervises it."""
    group = HandlerGroup.objects.filter(pk=group_id).first()
    if group is None:
        raise NotFound(_("No handler group with this id."))
    return require_leader(user, group, refusal)
