"""Who may use and who may edit a canned response, a macro or a saved view (its scope), the
one home of that rule for all three.

- personal: its owner uses and edits it.
- group: the group's members and leader use it; its leader and staff edit it.
- global: everyone on the team (any handler) uses it; staff edit it.
"""

from django.db.models import Q, QuerySet
from django.utils.translation import gettext as _

from config.errors import Forbidden, InvalidArgument
from handler_groups.models import HandlerGroup
from handler_groups.selectors import supervises
from ticketing.access import Audience, audience_for

from .models import Scope, Scoped


def usable_scope(audience: Audience, *, include_global: bool = True) -> Q:
    """The rows this person may use, as a condition on a Scoped model."""
    if audience.user_id is None:
        return Q(pk__in=[])
    condition = Q(scope=Scope.PERSONAL, owner_id=audience.user_id)
    if audience.is_staff:
        condition |= Q(scope=Scope.GROUP)
    elif audience.group_ids:
        condition |= Q(scope=Scope.GROUP, group_id__in=audience.group_ids)
    if include_global and audience.is_handler:
        condition |= Q(scope=Scope.GLOBAL)
    return condition


def usable(qs: QuerySet, user) -> QuerySet:
    """`qs` narrowed to what `user` may use."""
    return qs.filter(usable_scope(audience_for(user)))


def may_use(user, item: Scoped, audience: Audience | None = None) -> bool:
    audience = audience or audience_for(user)
    if item.scope == Scope.PERSONAL:
        return item.owner_id == audience.user_id
    if item.scope == Scope.GROUP:
        return audience.is_staff or item.group_id in audience.group_ids
    return audience.is_handler


def may_edit(user, item: Scoped) -> bool:
    if item.scope == Scope.PERSONAL:
        return item.owner_id == user.pk
    if item.scope == Scope.GROUP:
        return supervises(user, item.group)
    return user.is_staff


def check_scope(user, *, scope: str, group: HandlerGroup | None) -> None:
    """Refuse (400 naming the field, or 403) a scope this person may not give: a group
    scope needs the group (and its leader or staff), global needs staff, personal no group."""
    if scope == Scope.GROUP:
        if group is None:
            raise InvalidArgument("group", _("A group's item needs its group."))
        if not supervises(user, group):
            raise Forbidden(_("Only the group's leader or staff may share with the group."))
    elif group is not None:
        raise InvalidArgument("group", _("Only a group's item has a group."))
    if scope == Scope.GLOBAL and not user.is_staff:
        raise Forbidden(_("Only staff may make an item for everyone."))
