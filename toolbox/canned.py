"""Canned responses: texts the team keeps to insert in a reply, with placeholders filled in
for the ticket (toolbox.placeholders). Who may use and edit one is its scope's business
(toolbox.scopes); this module lists, saves and renders them.

- Not usable by the caller: DoesNotExist (a 404; its existence is not told).
- Usable but not editable: Forbidden (a 403).
- Rendering for a ticket: the caller must see the ticket (404), be on its team (403) and
  may use the response (404 otherwise: another group's response is not told either)."""

from django.conf import settings
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils.translation import gettext as _

from config.errors import Forbidden, InvalidArgument
from handler_groups.models import HandlerGroup
from ticketing import access
from ticketing.models import Ticket

from .models import CannedResponse, Scope, Scoped
from .placeholders import check_placeholders, render_text
from .scopes import check_scope, may_edit, usable

Q_MAX_LENGTH = 100


def require_team(user) -> None:
    """Only the support team (handlers, staff) keeps canned responses and macros."""
    if not access.audience_for(user).is_handler:
        raise Forbidden(_("Only the support team keeps canned responses and macros."))


def usable_item(model: type[Scoped], user, item_id: int) -> Scoped:
    """The item if `user` may use it; model.DoesNotExist (404) otherwise."""
    return usable(model._default_manager.select_related("group"), user).get(pk=item_id)


def editable_item(model: type[Scoped], user, item_id: int) -> Scoped:
    """The item if `user` may edit it: 404 when they may not use it, 403 when they may use
    but not edit it."""
    item = usable_item(model, user, item_id)
    if not may_edit(user, item):
        raise Forbidden(
            _("You may use this but not change it: ask its owner, the group's leader or staff.")
        )
    return item


def resolve_group(group_id: int | None) -> HandlerGroup | None:
    if group_id is None:
        return None
    group = HandlerGroup.objects.filter(pk=group_id).first()
    if group is None:
        raise InvalidArgument("group_id", _("No handler group with this id."))
    return group


def check_language(language: str) -> str:
    language = (language or "").strip().lower()
    if language and language not in dict(settings.LANGUAGES):
        raise InvalidArgument(
            "language",
            _("Not a language of the console: use one of %(codes)s, or none.")
            % {"codes": ", ".join(code for code, _name in settings.LANGUAGES)},
        )
    return language


def scope_fields(user, *, scope: str, group_id: int | None) -> dict:
    """The scope, owner and group a new or changed item gets, after check_scope."""
    group = resolve_group(group_id) if scope == Scope.GROUP or group_id is not None else None
    check_scope(user, scope=scope, group=group)
    return {"scope": scope, "group": group}


# Selectors


def canned_for(user, *, q: str = "", language: str = "") -> QuerySet[CannedResponse]:
    """What `user` may use, by name; `q` matches the name or the body (any case), `language`
    keeps those written in it and those for any language."""
    qs = usable(CannedResponse.objects.select_related("group", "owner"), user)
    q = (q or "").strip()
    if q:
        qs = qs.filter(Q(name__icontains=q) | Q(body__icontains=q))
    if language:
        qs = qs.filter(Q(language=language) | Q(language=""))
    return qs.order_by("name", "id")


# Services


def canned_create(
    *, user, name: str, body: str, scope: str, group_id: int | None = None, language: str = ""
) -> CannedResponse:
    require_team(user)
    check_placeholders(body, "body")
    fields = scope_fields(user, scope=scope, group_id=group_id)
    return CannedResponse.objects.create(
        name=name, body=body, language=check_language(language), owner=user, **fields
    )


def canned_update(*, user, canned_id: int, changes: dict) -> CannedResponse:
    """Change what `changes` names (name, body, language, scope, group_id); a new scope or
    group is checked as a new item's would be (and the caller must still edit it after)."""
    with transaction.atomic():
        item = editable_item(CannedResponse, user, canned_id)
        item = CannedResponse.objects.select_for_update().get(pk=item.pk)
        if "body" in changes:
            check_placeholders(changes["body"], "body")
            item.body = changes["body"]
        if "name" in changes:
            item.name = changes["name"]
        if "language" in changes:
            item.language = check_language(changes["language"])
        if "scope" in changes or "group_id" in changes:
            scope = changes.get("scope", item.scope)
            group_id = changes["group_id"] if "group_id" in changes else item.group_id
            if scope != Scope.GROUP and "group_id" not in changes:
                group_id = None
            fields = scope_fields(user, scope=scope, group_id=group_id)
            item.scope, item.group = fields["scope"], fields["group"]
            if item.scope == Scope.PERSONAL:
                item.owner = user
        item.save()
        return item


def canned_delete(*, user, canned_id: int) -> None:
    editable_item(CannedResponse, user, canned_id).delete()


def canned_render(*, user, ticket: Ticket, canned_id: int) -> tuple[CannedResponse, str]:
    """The response's text filled in for `ticket` (nothing is sent). The caller has checked
    that `user` sees the ticket; here: its team only (403), and a response they may use
    (404)."""
    if not access.can_work_on(user, ticket):
        raise Forbidden(_("Only the ticket's team may use canned responses on it."))
    item = usable_item(CannedResponse, user, canned_id)
    assert isinstance(item, CannedResponse)
    ticket = Ticket.objects.select_related("creator", "handler_group").get(pk=ticket.pk)
    return item, render_text(item.body, ticket=ticket, agent=user)
