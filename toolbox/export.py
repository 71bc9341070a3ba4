"""The ticket export: what the caller may see (ticketing.access.visible_tickets; `view=` narrows
it to one of the pool's lists), narrowed by the pool's filters, as CSV, streamed row by row.

Columns: id, bill_code, title, status, process_status, priority, category, group, handler,
applicant, submitted, approved, completed, closed, response_deadline, resolve_deadline (times
in the reader's zone, ISO 8601 with the offset), then `tags` (only when the caller is on the
ticket team, and filled only on the tickets whose team they are on), then one column per
active custom field (its key; the value as ticketing.fields.display_value writes it in the
reader's language).

A cell a spreadsheet would run as a formula (=, +, -, @, tab, CR first) is quoted as text
with a leading ', as the SLA report's CSV does.

Row limit: TOOLBOX_EXPORT_MAX_ROWS (setting, default 100,000). More matching tickets is a
400 before anything is streamed (narrow the filters): a file cut short without saying so
would pass for the whole list."""

import csv
import io
from collections.abc import Iterable, Iterator
from datetime import datetime
from itertools import islice

from django.conf import settings
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from config.errors import InvalidArgument
from sla.renderers import FORMULA_STARTS
from ticketing import fields as ticket_fields
from ticketing.access import Audience, audience_for, visible_tickets
from ticketing.models import FieldType, Ticket, TicketField
from workflow.selectors import filter_tickets, pool_for, sort_tickets

DEFAULT_EXPORT_MAX_ROWS = 100_000
EXPORT_CHUNK = 2_000  # rows read per round trip (iterator's chunk_size)
EXPORT_VIEWS = ("visible", "pending", "my_handling", "mine", "all")

COLUMNS = (
    "id",
    "bill_code",
    "title",
    "status",
    "process_status",
    "priority",
    "category",
    "group",
    "handler",
    "applicant",
    "submitted",
    "approved",
    "completed",
    "closed",
    "response_deadline",
    "resolve_deadline",
)


def export_max_rows() -> int:
    return int(getattr(settings, "TOOLBOX_EXPORT_MAX_ROWS", DEFAULT_EXPORT_MAX_ROWS))


def cell(value) -> object:
    """A value as a CSV cell: nothing for None, formula-like text quoted as text."""
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def export_tickets(
    user,
    *,
    view: str = "visible",
    sort: str | None = None,
    now: datetime | None = None,
    **filters,
) -> QuerySet[Ticket]:
    """The tickets to export: those the caller may see (or one pool list, `view`) with the
    pool's filters (workflow.selectors.filter_tickets' keywords), sorted as the pool sorts."""
    if view == "visible":
        qs = filter_tickets(visible_tickets(user), user, now=now, **filters)
        return sort_tickets(qs, sort)
    return pool_for(user, view=view, sort=sort, now=now, **filters)


def check_size(qs: QuerySet[Ticket], limit: int | None = None) -> None:
    """400 when more than the row limit match (reads at most limit + 1 ids)."""
    limit = export_max_rows() if limit is None else limit
    if qs.order_by().values("pk")[: limit + 1].count() > limit:
        raise InvalidArgument(
            "non_field_errors",
            _("More than %(limit)s tickets match: narrow the filters to export them.")
            % {"limit": limit},
        )


def _when(moment: datetime | None) -> str:
    return timezone.localtime(moment).isoformat() if moment else ""


def _line(values: Iterable) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerow([cell(value) for value in values])
    return out.getvalue()


def _row(
    ticket: Ticket,
    audience: Audience,
    with_tags: bool,
    fields: list[TicketField],
    language: str | None,
    users: dict[int, str],
) -> list:
    internals = audience.sees_internals(ticket)
    values = [
        ticket.pk,
        ticket.bill_code,
        ticket.title,
        ticket.get_ticket_status_display(),
        ticket.get_process_status_display(),
        ticket.get_priority_display(),
        ticket.category,
        ticket.handler_group.name if ticket.handler_group else "",
        ticket.handler.get_username() if ticket.handler and internals else "",
        ticket.creator.get_username(),
        _when(ticket.submitted_time),
        _when(ticket.approved_time),
        _when(ticket.completed_time),
        _when(ticket.closed_time),
        _when(ticket.response_deadline),
        _when(ticket.resolve_deadline),
    ]
    if with_tags:
        values.append(", ".join(ticket.tags or []) if internals else "")
    stored = ticket.fields or {}
    for field in fields:
        values.append(ticket_fields.display_value(field, stored.get(field.key), language, users))
    return values


def csv_lines(user, qs: QuerySet[Ticket], *, language: str | None = None) -> Iterator[str]:
    """The header, then one line per ticket, read EXPORT_CHUNK at a time (a server-side
    cursor: the whole export is never in memory). The names of people in user fields are
    read once per chunk."""
    audience = audience_for(user)
    with_tags = audience.is_handler
    fields = ticket_fields.active_fields()
    user_keys = [field.key for field in fields if field.type == FieldType.USER]
    yield _line([*COLUMNS, *(["tags"] if with_tags else []), *(f.key for f in fields)])
    rows = qs.select_related("handler_group", "handler", "creator").iterator(
        chunk_size=EXPORT_CHUNK
    )
    while chunk := list(islice(rows, EXPORT_CHUNK)):
        ids = [(t.fields or {}).get(key) for t in chunk for key in user_keys]
        users = ticket_fields.people_named(ids) if user_keys else {}
        for ticket in chunk:
            yield _line(_row(ticket, audience, with_tags, fields, language, users))
