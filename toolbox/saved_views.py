"""Saved views: a named set of the pool's filters and a sort, personal or shared with a group,
shown as a tab beside My work with its live count.

A view lists from the caller's whole pool (`workflow.selectors.pool_for(view="all")`: their
groups' approved tickets, every approved one for staff) narrowed by its filters, so a group's
view shows each member what of it their own scope holds. Its filters are the pool's, checked
by the same rules (`clean_filters`: 400 naming `filters.<name>`):

    status    a list of ticket statuses (any of them)
    priority  one priority (1-4)
    group     a handler group's id
    category  a category's name
    tag       one tag
    fields    {key: value}: custom fields, each read by its type (ticketing.fields)
    handler   "me", "none" (nobody yet) or a person's id
    sla       response_due_1h | resolve_due_1h | breached | paused (workflow.selectors)
    q         search text (each word in the title, bill code or applicant)

Who: the team (handlers and staff) keeps views. A personal view is its owner's; a group's is
seen by the group's members and leader (and staff) and edited by its leader and staff
(toolbox.scopes, the one rule for canned responses, macros and views); there is no global
view. A view the caller may not use is a 404, one they use but may not edit a 403.

Counts: `view_counts` counts every view in ONE statement, each count capped at
EXACT_COUNT_LIMIT + 1 rows (config.pagination): a tab shows "more than 1,000" beyond it."""

from datetime import datetime

from django.conf import settings
from django.db import connection, transaction
from django.db.models import QuerySet
from django.utils.translation import gettext as _
from psycopg import sql
from rest_framework import serializers

from config.errors import Forbidden, InvalidArgument
from config.pagination import RowCount
from handler_groups.models import HandlerGroup
from ticketing import fields as ticket_fields
from ticketing import tags as ticket_tags
from ticketing.access import audience_for
from ticketing.models import Priority, Ticket, TicketStatus
from workflow.selectors import (
    HANDLER_ME,
    HANDLER_NONE,
    POOL_SORTS,
    SLA_STATES,
    filter_tickets,
    pool_all_for,
    pool_for,
)

from .models import SavedView, Scope
from .scopes import check_scope, may_edit, usable

VIEW_SCOPES = (Scope.PERSONAL, Scope.GROUP)
FILTER_NAMES = (
    "status",
    "priority",
    "group",
    "category",
    "tag",
    "fields",
    "handler",
    "sla",
    "q",
)


class ViewFilters(serializers.Serializer):
    """The shape of a view's filters (the pool's query, as JSON)."""

    status = serializers.ListField(
        child=serializers.ChoiceField(choices=TicketStatus.choices),
        required=False,
        max_length=len(TicketStatus.choices),
    )
    priority = serializers.ChoiceField(choices=Priority.choices, required=False)
    group = serializers.IntegerField(min_value=1, required=False)
    category = serializers.CharField(max_length=50, required=False)
    tag = serializers.CharField(max_length=50, required=False)
    # DRF's metaclass takes declared fields off the class: this does not hide `.fields`.
    fields = serializers.DictField(  # type: ignore[assignment]
        child=serializers.JSONField(), required=False, help_text="{key: value}"
    )
    handler = serializers.JSONField(required=False, help_text='"me", "none" or a person\'s id')
    sla = serializers.ChoiceField(choices=SLA_STATES, required=False)
    q = serializers.CharField(max_length=200, required=False)


def _first_error(errors) -> str:
    while isinstance(errors, dict | list):
        errors = next(iter(errors.values())) if isinstance(errors, dict) else errors[0]
    return str(errors)


def _handler(value) -> int | str:
    if value in (HANDLER_ME, HANDLER_NONE):
        return value
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise InvalidArgument("filters.handler", _('Give "me", "none" or a person\'s id.'))
    text = str(value)
    if not text.isascii() or not text.isdigit() or int(text) < 1:
        raise InvalidArgument("filters.handler", _('Give "me", "none" or a person\'s id.'))
    return int(text)


def _field_value(key: str, value) -> str:
    """A field filter's value as the pool's query carries it (text, read by the type)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | str):
        return str(value)
    raise InvalidArgument(f"filters.fields.{key}", _("Give one value to match."))


def clean_filters(raw) -> dict:
    """A view's filters checked as the pool checks its query: 400 naming `filters.<name>`
    (`filters.fields.<key>` for a custom field). Empty values are dropped."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise InvalidArgument("filters", _("Give the filters as an object."))
    unknown = sorted(set(raw) - set(FILTER_NAMES))
    if unknown:
        raise InvalidArgument(f"filters.{unknown[0]}", _("Not a filter of the pool."))
    given = {name: value for name, value in raw.items() if value not in (None, "", [], {})}
    shape = ViewFilters(data=given)
    if not shape.is_valid():
        name = next(iter(shape.errors))
        raise InvalidArgument(f"filters.{name}", _first_error(shape.errors[name]))
    cleaned = dict(shape.validated_data)
    if "status" in cleaned:
        cleaned["status"] = sorted(set(cleaned["status"]))
    if "priority" in cleaned:
        cleaned["priority"] = int(cleaned["priority"])
    if "group" in cleaned and not HandlerGroup.objects.filter(pk=cleaned["group"]).exists():
        raise InvalidArgument("filters.group", _("No handler group with this id."))
    if "tag" in cleaned:
        cleaned["tag"] = ticket_tags.normalize_tag(cleaned["tag"])
    if "handler" in cleaned:
        cleaned["handler"] = _handler(cleaned["handler"])
    if "fields" in cleaned:
        values = {key: _field_value(key, value) for key, value in cleaned["fields"].items()}
        try:  # the pool's own reading of each value by its field's type
            ticket_fields.filter_fields(Ticket.objects.none(), values)
        except InvalidArgument as error:
            key = error.field.split(".", 1)[-1]
            raise InvalidArgument(f"filters.fields.{key}", error.message) from None
        cleaned["fields"] = values
    return cleaned


def clean_sort(sort: str | None) -> str:
    if not sort:
        return ""
    if sort not in POOL_SORTS:
        raise InvalidArgument(
            "sort", _("Choose one of %(sorts)s.") % {"sorts": ", ".join(POOL_SORTS)}
        )
    return sort


def pool_arguments(filters: dict) -> dict:
    """A view's filters as `workflow.selectors.pool_for`'s keywords."""
    arguments: dict = {}
    if filters.get("status"):
        arguments["statuses"] = list(filters["status"])
    if filters.get("priority") is not None:
        arguments["priority"] = filters["priority"]
    if filters.get("group") is not None:
        arguments["handler_group"] = filters["group"]
    for name in ("category", "tag", "handler", "sla", "q"):
        if filters.get(name) not in (None, ""):
            arguments[name] = filters[name]
    if filters.get("fields"):
        arguments["fields"] = dict(filters["fields"])
    return arguments


# --- reads ------------------------------------------------------------------------------


def views_for(user) -> QuerySet[SavedView]:
    """The views this person may use: their own and their groups' (staff: every group's)."""
    return usable(SavedView.objects.all(), user).order_by("order", "name", "id")


def view_for(user, view_id: int) -> SavedView:
    """The view if this person may use it; SavedView.DoesNotExist (a 404) otherwise."""
    return views_for(user).get(pk=view_id)


def view_tickets(
    user, view: SavedView, *, now: datetime | None = None, sort: bool = True
) -> QuerySet[Ticket]:
    """The view's tickets as the pool lists them for this person (their scope, its filters,
    its sort: newest first when it has none)."""
    return pool_for(
        user,
        view="all",
        sort=(view.sort or None) if sort else None,
        now=now,
        **pool_arguments(view.filters or {}),
    )


def view_count_limit() -> int:
    """How far a view's tab counts exactly (SAVED_VIEW_COUNT_LIMIT, 100): beyond it the tab
    says "more than 100". Lower than the lists' EXACT_COUNT_LIMIT because every pool page
    counts all the caller's views: a view matching a few tickets in twenty (a priority over a
    group's whole history) reads twenty rows per ticket counted."""
    return int(getattr(settings, "SAVED_VIEW_COUNT_LIMIT", 100))


COUNT_STATEMENT = "SELECT {counts}"
COUNT_ONE = "(SELECT count(*) FROM ({rows}) AS {alias})"


def count_statement(
    user, views: list[SavedView], *, now: datetime | None = None, limit: int | None = None
) -> tuple[sql.Composed | None, list, list[int]]:
    """The one statement `view_counts` runs: a SELECT of one capped count subquery per view,
    each reading at most `limit` + 1 ticket ids through the indexes its filters name (the
    pool's, the tags', the SLA scan's). Takes no lock. With the parameters and the ids of
    the views it counts, in its columns' order (a view whose filters no longer hold, e.g. a
    field since removed, is left out)."""
    limit = view_count_limit() if limit is None else limit
    base = pool_all_for(user)  # the caller's scope, read once for every view
    parts: list[sql.Composable] = []
    params: list = []
    counted: list[int] = []
    for view in views:
        try:
            qs = filter_tickets(base, user, now=now, **pool_arguments(view.filters or {}))
        except InvalidArgument:
            continue
        rows, row_params = qs.order_by().values("pk")[: limit + 1].query.sql_with_params()
        parts.append(
            sql.SQL(COUNT_ONE).format(rows=sql.SQL(rows), alias=sql.Identifier(f"v{view.pk}"))
        )
        params.extend(row_params)
        counted.append(view.pk)
    if not counted:
        return None, [], []
    return sql.SQL(COUNT_STATEMENT).format(counts=sql.SQL(", ").join(parts)), params, counted


def view_counts(
    user, views: list[SavedView], *, now: datetime | None = None, limit: int | None = None
) -> dict[int, RowCount | None]:
    """Each view's count, all of them in ONE statement (count_statement), each exact up to
    `limit` (view_count_limit() by default) and `at_least` beyond it ("more than 100").
    None for a view whose filters no longer hold. Besides the statement, a view searching by
    words reads the people those words name (ticketing.search: one small query per word)."""
    limit = view_count_limit() if limit is None else limit
    statement, params, counted = count_statement(user, views, now=now, limit=limit)
    result: dict[int, RowCount | None] = {view.pk: None for view in views}
    if statement is None:
        return result
    with connection.cursor() as cursor:
        cursor.execute(statement.as_string(cursor.connection), params)
        values = cursor.fetchone()
    for view_id, seen in zip(counted, values, strict=True):
        if seen > limit:
            result[view_id] = RowCount(seen, is_estimate=True, at_least=True)
        else:
            result[view_id] = RowCount(seen, is_estimate=False)
    return result


# --- writes -----------------------------------------------------------------------------


def _require_team(user) -> None:
    if not audience_for(user).is_handler:
        raise Forbidden(_("Saved views are for the ticket team."))


def _group(group_id: int | None) -> HandlerGroup | None:
    if group_id is None:
        return None
    try:
        return HandlerGroup.objects.get(pk=group_id)
    except HandlerGroup.DoesNotExist:
        raise InvalidArgument("group_id", _("No handler group with this id.")) from None


def _check_view_scope(user, scope: str, group: HandlerGroup | None) -> None:
    if scope not in VIEW_SCOPES:
        raise InvalidArgument("scope", _("A view is personal or a group's."))
    check_scope(user, scope=scope, group=group)


def view_create(
    *,
    user,
    name: str,
    scope: str = Scope.PERSONAL,
    group_id: int | None = None,
    filters: dict | None = None,
    sort: str | None = None,
    order: int = 0,
) -> SavedView:
    """A new view owned by `user` (400 naming the field for bad filters or scope; 403 for
    a group's view by someone who does not lead the group, or for anyone off the team)."""
    _require_team(user)
    group = _group(group_id)
    _check_view_scope(user, scope, group)
    view = SavedView(
        name=name.strip(),
        scope=scope,
        owner=user,
        group=group,
        filters=clean_filters(filters),
        sort=clean_sort(sort),
        order=order,
    )
    if not view.name:
        raise InvalidArgument("name", _("Give the view a name."))
    view.save()
    return view


def _editable(user, view_id: int) -> SavedView:
    """The view, locked (select_for_update) for its change: 404 if the user may not use it,
    403 if they may use but not edit it."""
    view = usable(SavedView.objects.select_for_update(), user).get(pk=view_id)
    if not may_edit(user, view):
        raise Forbidden(_("Only its owner (a group's: its leader or staff) may change this view."))
    return view


EDITABLE = ("name", "scope", "group_id", "filters", "sort", "order")


def view_update(*, view_id: int, user, changes: dict) -> SavedView:
    """Change the given fields (EDITABLE) of a view; takes the view's row lock. Moving it to
    another scope or group is checked as creating it there would be."""
    with transaction.atomic():
        view = _editable(user, view_id)
        if "name" in changes:
            view.name = str(changes["name"]).strip()
            if not view.name:
                raise InvalidArgument("name", _("Give the view a name."))
        if "scope" in changes or "group_id" in changes:
            scope = changes.get("scope", view.scope)
            group = _group(changes["group_id"]) if "group_id" in changes else view.group
            if scope == Scope.PERSONAL and "group_id" not in changes:
                group = None
            _check_view_scope(user, scope, group)
            view.scope, view.group = scope, group
            if scope == Scope.PERSONAL:
                view.owner = user
        if "filters" in changes:
            view.filters = clean_filters(changes["filters"])
        if "sort" in changes:
            view.sort = clean_sort(changes["sort"])
        if "order" in changes:
            view.order = changes["order"]
        view.save()
        return view


def view_delete(*, view_id: int, user) -> None:
    with transaction.atomic():
        _editable(user, view_id).delete()
