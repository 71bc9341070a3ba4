"""Lists that stay fast on a large table: counts that read at most a bounded number of rows
(beyond it, the planner's estimate, flagged as one), pages by number whose existence is decided
by their rows rather than by a count, and keyset cursors that start each page at the last row
of the one before (an index condition), so a deep page reads no more than the first.

`EXACT_COUNT_LIMIT` (setting, default 1,000): a count reads at most this many rows + 1."""

import base64
import binascii
import json
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Any

from django.conf import settings
from django.contrib.humanize.templatetags.humanize import intword
from django.core.exceptions import FieldDoesNotExist
from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.paginator import EmptyPage, Page, PageNotAnInteger, Paginator
from django.db import connections
from django.db.models import BooleanField, F, Func, QuerySet, Value
from django.utils.formats import number_format
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import PageNumberPagination
from rest_framework.response import Response
from rest_framework.utils.urls import remove_query_param, replace_query_param

DEFAULT_EXACT_COUNT_LIMIT = 1_000


def exact_count_limit() -> int:
    return int(getattr(settings, "EXACT_COUNT_LIMIT", DEFAULT_EXACT_COUNT_LIMIT))


@dataclass(frozen=True)
class RowCount:
    value: int
    is_estimate: bool
    # The planner expected no more than were seen: all that is known is "more than the limit".
    at_least: bool = False


def planner_estimate(queryset: QuerySet) -> int:
    """The number of rows PostgreSQL's planner expects the query to return (EXPLAIN, nothing
    read): right in magnitude on an analysed table, cheap at any size. Estimated on the
    primary keys alone: the joins a list reads its rows with (select_related: a ticket's
    survey, its group) change no count, but their tables' statistics could sway the guess."""
    sql, params = queryset.order_by().values("pk").query.sql_with_params()
    with connections[queryset.db].cursor() as cursor:
        cursor.execute("EXPLAIN (FORMAT JSON) " + sql, params)
        plan = cursor.fetchone()[0]
    if isinstance(plan, str):
        plan = json.loads(plan)
    return int(plan[0]["Plan"]["Plan Rows"])


def count_rows(queryset: QuerySet, *, limit: int | None = None) -> RowCount:
    """Exact when at most `limit` rows match (reading at most limit + 1 of them); otherwise
    the planner's estimate, never less than what was seen, and said to be one."""
    limit = exact_count_limit() if limit is None else limit
    seen = queryset.order_by().values("pk")[: limit + 1].count()
    if seen <= limit:
        return RowCount(seen, is_estimate=False)
    estimate = planner_estimate(queryset)
    if estimate <= seen:
        return RowCount(seen, is_estimate=True, at_least=True)
    return RowCount(estimate, is_estimate=True)


def significant(value: int, digits: int = 2) -> int:
    """`value` rounded to `digits` significant digits (12,345 -> 12,000)."""
    if value <= 0:
        return value
    step = 10 ** max(len(str(value)) - digits, 0)
    return round(value / step) * step


def count_text(counted: RowCount) -> str:
    """The count as a person reads it: the number when exact; "about 1.2 million" or "about
    12,000" when estimated; "more than 1,000" when the estimate says no more than was seen."""
    if not counted.is_estimate:
        return str(counted.value)
    if counted.at_least:
        limit = number_format(counted.value - 1, force_grouping=True)
        return gettext("more than %(count)s") % {"count": limit}
    rounded = significant(counted.value)
    if rounded >= 1_000_000:
        amount = intword(rounded)
    else:
        amount = number_format(rounded, force_grouping=True)
    return gettext("about %(count)s") % {"count": amount}


class EstimatedPage(Page):
    def __init__(self, object_list, number, paginator, *, more: bool | None = None):
        super().__init__(object_list, number, paginator)
        self._more = more

    def has_next(self) -> bool:
        if self._more is None:
            return super().has_next()
        return self._more


class EstimatedPaginator(Paginator):
    """Django's paginator with `count_rows` for its count. While the count is exact it
    behaves as Django's; once it is an estimate, a page exists when it has rows (page 1
    always), and whether another follows is read from one row more than the page holds."""

    @cached_property
    def counted(self) -> RowCount:
        if isinstance(self.object_list, QuerySet):
            return count_rows(self.object_list)
        return RowCount(len(self.object_list), is_estimate=False)

    @cached_property
    def count(self) -> int:
        return self.counted.value

    @property
    def count_is_estimate(self) -> bool:
        return self.counted.is_estimate

    @property
    def count_label(self) -> str:
        return count_text(self.counted)

    def validate_number(self, number):
        if not self.count_is_estimate:
            return super().validate_number(number)
        try:
            if isinstance(number, float) and not number.is_integer():
                raise ValueError
            number = int(number)
        except (TypeError, ValueError):
            raise PageNotAnInteger(self.error_messages["invalid_page"]) from None
        if number < 1:
            raise EmptyPage(self.error_messages["min_page"])
        return number

    def page(self, number):
        number = self.validate_number(number)
        if not self.count_is_estimate:
            return super().page(number)
        bottom = (number - 1) * self.per_page
        rows = list(self.object_list[bottom : bottom + self.per_page + 1])
        if not rows and number > 1:
            raise EmptyPage(self.error_messages["no_results"])
        return EstimatedPage(rows[: self.per_page], number, self, more=len(rows) > self.per_page)

    def get_page(self, number):
        """As Django's, except that past the end of an estimated list is its first page (its
        last is not known without counting)."""
        try:
            return self.page(number)
        except PageNotAnInteger:
            return self.page(1)
        except EmptyPage:
            return self.page(1 if self.count_is_estimate else self.num_pages)


# --- keyset cursors ----------------------------------------------------------------------


class RowCompare(Func):
    """`(a, b, …) < (x, y, …)` (or >): PostgreSQL compares row values in order, and an index
    on (a, b, …) finds where to start, so nothing before the cursor is read."""

    output_field = BooleanField()

    def __init__(self, columns: list[F], values: list[Value], operator: str):
        super().__init__(*columns, *values)
        self.width = len(columns)
        self.operator = operator

    def as_sql(self, compiler, connection, **extra_context):
        parts, params = [], []
        for expression in self.get_source_expressions():
            sql, expression_params = compiler.compile(expression)
            parts.append(sql)
            params.extend(expression_params)
        left, right = ", ".join(parts[: self.width]), ", ".join(parts[self.width :])
        return f"({left}) {self.operator} ({right})", params


@dataclass(frozen=True)
class Keyset:
    """An ordering a cursor can follow: concrete columns of the model, all in one direction,
    the last one unique (the primary key)."""

    fields: tuple[Any, ...]  # model fields
    descending: bool

    def position(self, row) -> list:
        return [_encode_value(getattr(row, field.attname)) for field in self.fields]

    def values(self, position: list) -> list:
        if not isinstance(position, list) or len(position) != len(self.fields):
            raise ValueError("cursor does not fit this list")
        return [field.to_python(raw) for field, raw in zip(self.fields, position, strict=True)]

    def after(self, queryset: QuerySet, position: list, *, backwards: bool = False) -> QuerySet:
        """The rows after `position` in this order (before it, nearest first, if backwards)."""
        values = self.values(position)
        forward_is_less = self.descending
        operator = "<" if forward_is_less != backwards else ">"
        columns = [F(field.attname) for field in self.fields]
        literals = [Value(v, output_field=f) for v, f in zip(values, self.fields, strict=True)]
        qs = queryset.filter(RowCompare(columns, literals, operator))
        if backwards:
            prefix = "" if self.descending else "-"
            qs = qs.order_by(*(prefix + field.attname for field in self.fields))
        return qs


def keyset_of(queryset: QuerySet) -> Keyset | None:
    """The queryset's ordering as a keyset, or None when it is not one (an expression, a
    related field, mixed directions, no unique last column)."""
    ordering = list(queryset.query.order_by or queryset.model._meta.ordering or [])
    if not ordering or not all(isinstance(item, str) for item in ordering):
        return None
    directions = {item.startswith("-") for item in ordering}
    if len(directions) != 1:
        return None
    opts = queryset.model._meta
    fields = []
    for item in ordering:
        name = item.lstrip("-")
        name = opts.pk.name if name == "pk" else name
        if "__" in name or name in queryset.query.annotations:
            return None
        try:
            field = opts.get_field(name)
        except FieldDoesNotExist:  # an annotation or extra
            return None
        if not getattr(field, "concrete", False) or field.is_relation:
            return None
        fields.append(field)
    if fields[-1] != opts.pk:
        return None
    return Keyset(fields=tuple(fields), descending=directions.pop())


def _encode_value(value):
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def encode_cursor(position: list, *, backwards: bool = False) -> str:
    data = {"p": position} | ({"b": 1} if backwards else {})
    raw = json.dumps(data, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[list, bool]:
    """(position, backwards); ValueError when it is not a cursor this site made."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
    except (binascii.Error, UnicodeError, json.JSONDecodeError) as exc:
        raise ValueError("not a cursor") from exc
    if not isinstance(data, dict) or not isinstance(data.get("p"), list):
        raise ValueError("not a cursor")
    return data["p"], bool(data.get("b"))


@dataclass
class KeysetPage:
    rows: list
    next_position: list | None
    previous_position: list | None


def keyset_page(queryset: QuerySet, keyset: Keyset, size: int, cursor: str | None) -> KeysetPage:
    """One page of `size` rows after (or before) the cursor's row; ValueError for a cursor
    that is not one of this list's."""
    if cursor is None:
        rows = list(queryset[: size + 1])
        more = len(rows) > size
        rows = rows[:size]
        return KeysetPage(rows, keyset.position(rows[-1]) if more else None, None)
    position, backwards = decode_cursor(cursor)
    try:
        found = list(keyset.after(queryset, position, backwards=backwards)[: size + 1])
    except (TypeError, ValueError, ArithmeticError, DjangoValidationError) as exc:
        raise ValueError("cursor does not fit this list") from exc
    more = len(found) > size
    rows = found[:size]
    if backwards:
        rows.reverse()
        return KeysetPage(
            rows,
            keyset.position(rows[-1]) if rows else position,
            keyset.position(rows[0]) if more and rows else None,
        )
    return KeysetPage(
        rows,
        keyset.position(rows[-1]) if more else None,
        keyset.position(rows[0]) if rows else position,
    )


# --- the API's pagination -------------------------------------------------------------------


class Pagination(PageNumberPagination):
    """Every API list: `{"count", "count_is_estimate", "next", "previous", "results"}`.

    `count` is exact up to EXACT_COUNT_LIMIT rows, else the planner's estimate
    (`count_is_estimate: true`). Lists in a keyset order (newest first by id, oldest first by
    submission, …) give `next`/`previous` as `?cursor=` links, each page starting at the last
    row of the one before (as DRF's CursorPagination does); `?page=N` keeps working, and a
    request by page number is answered with page-number links."""

    page_size_query_param = "page_size"
    max_page_size = 200
    cursor_query_param = "cursor"
    django_paginator_class = EstimatedPaginator

    def paginate_queryset(self, queryset, request, view=None):
        self.request = request
        self.cursor_mode = False
        keyset = keyset_of(queryset) if isinstance(queryset, QuerySet) else None
        cursor = request.query_params.get(self.cursor_query_param)
        if cursor is not None and keyset is None:
            raise ValidationError(
                {self.cursor_query_param: [_("This list's order cannot be followed by cursor.")]}
            )
        if keyset is not None and request.query_params.get(self.page_query_param) is None:
            return self._paginate_by_cursor(queryset, request, keyset, cursor)
        return self._paginate_by_number(queryset, request, view)

    def _paginate_by_cursor(self, queryset, request, keyset: Keyset, cursor: str | None):
        size = self.get_page_size(request) or self.page_size or 20
        try:
            page = keyset_page(queryset, keyset, size, cursor)
        except ValueError as exc:
            raise ValidationError(
                {self.cursor_query_param: [_("Not a cursor of this list.")]}
            ) from exc
        self.cursor_mode = True
        self.keyset_page = page
        self.counted = count_rows(queryset)
        return page.rows

    def _paginate_by_number(self, queryset, request, view):
        """A page that is not a number is bad input (400); a page past the end stays a 404."""
        raw = request.query_params.get(self.page_query_param)
        if (
            raw is not None
            and raw not in self.last_page_strings
            and not (raw.isascii() and raw.isdigit())
        ):
            raise ValidationError(
                {self.page_query_param: [_("A page number is a positive integer.")]}
            )
        try:
            rows = super().paginate_queryset(queryset, request, view)
        except NotFound as exc:
            if raw is not None and raw.isascii() and raw.isdigit() and int(raw) == 0:
                raise ValidationError({self.page_query_param: [_("Pages start at 1.")]}) from exc
            raise
        if rows is not None:
            paginator = self.page.paginator
            self.counted = RowCount(
                paginator.count, bool(getattr(paginator, "count_is_estimate", False))
            )
        return rows

    def _cursor_link(self, position: list | None, *, backwards: bool) -> str | None:
        if position is None:
            return None
        assert self.request is not None  # set by paginate_queryset
        url = remove_query_param(self.request.build_absolute_uri(), self.page_query_param)
        return replace_query_param(
            url, self.cursor_query_param, encode_cursor(position, backwards=backwards)
        )

    def get_next_link(self):
        if self.cursor_mode:
            return self._cursor_link(self.keyset_page.next_position, backwards=False)
        return super().get_next_link()

    def get_previous_link(self):
        if self.cursor_mode:
            return self._cursor_link(self.keyset_page.previous_position, backwards=True)
        return super().get_previous_link()

    def get_paginated_response(self, data):
        return Response(
            {
                "count": self.counted.value,
                "count_is_estimate": self.counted.is_estimate,
                "next": self.get_next_link(),
                "previous": self.get_previous_link(),
                "results": data,
            }
        )

    def get_paginated_response_schema(self, schema):
        response = super().get_paginated_response_schema(schema)
        properties = response["properties"]
        properties["count"]["description"] = (
            "Exact up to EXACT_COUNT_LIMIT rows, else the planner's estimate."
        )
        ordered = {"count": properties.pop("count")}
        ordered["count_is_estimate"] = {"type": "boolean", "example": False}
        ordered.update(properties)
        response["properties"] = ordered
        response["required"] = ["count", "count_is_estimate", "results"]
        return response

    def get_schema_operation_parameters(self, view):
        """Pages start at 1; a page holds 1 to max_page_size results; a cursor comes from a
        `next` or `previous` link."""
        bounds = {
            self.page_query_param: {"minimum": 1},
            self.page_size_query_param: {"minimum": 1, "maximum": self.max_page_size},
        }
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            parameter["schema"].update(bounds.get(parameter["name"], {}))
        parameters.append(
            {
                "name": self.cursor_query_param,
                "required": False,
                "in": "query",
                "description": "Where the page starts: from a `next` or `previous` link.",
                "schema": {"type": "string"},
            }
        )
        return parameters
