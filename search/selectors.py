"""Reads: the tickets a query finds for one caller, ranked; the matching replies and files
of a page of them (for the highlights)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.core.exceptions import EmptyResultSet, FullResultSet
from django.db import connection
from django.db.models import BooleanField, Q, QuerySet
from django.db.models.expressions import RawSQL

from attachments.models import Attachment
from ticketing import access
from ticketing.fields import filter_fields
from ticketing.models import ReplyType, Ticket, TicketReply
from ticketing.tags import filter_tag

from .text import Query, bigrams, parse

# Each kind of document (ticket text, reply, file name) gives at most this many matches, the
# newest first, to be ranked: a word in hundreds of thousands of documents is ranked over its
# newest ones, not over all of them (the module docstring of search/ gives the figures).
CANDIDATES = 400
# The tickets searched, newest first, in widening windows of the ticket ids: the newest
# FIRST_WINDOW of them, then a window wide enough for ENOUGH results (two pages) at the rate
# the last one found them (at least 4 times wider; the whole history once that passes half of
# it, or when the window found nothing: a rare word costs little anywhere). A common word is
# ranked among the recent tickets, read through the indexes in that window only. A result
# that stops short of the whole history says it may have more (count_is_estimate).
FIRST_WINDOW = 0.05
ENOUGH = 40
HIGHLIGHTED_REPLIES = 3
HIGHLIGHTED_FILES = 2


def tsquery_of(query: Query) -> str:
    """The query as a tsquery (its text form): English words through the `english`
    configuration (stems, stop words dropped), each Han run as a phrase of its bigrams (one
    character: a prefix), all ANDed. "" when nothing of it can be searched."""
    parts, params = [], []
    if query.english.strip():
        parts.append("plainto_tsquery('english'::regconfig, %s)")
        params.append(query.english)
    for run in query.han:
        if len(run) == 1:
            parts.append("to_tsquery('simple'::regconfig, %s)")
            params.append(f"{run}:*")
        else:
            parts.append("phraseto_tsquery('simple'::regconfig, %s)")
            params.append(" ".join(bigrams(run)))
    if not parts:
        return ""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT ({' && '.join(parts)})::text", params)
        return cursor.fetchone()[0]


def ticket_filters(
    *,
    ticket_status: int | None = None,
    priority: int | None = None,
    handler_group: int | None = None,
    category: str | None = None,
    submitted_from: datetime | None = None,
    submitted_to: datetime | None = None,
) -> Q:
    """The pool's filters, and the submission window [from, to)."""
    condition = Q()
    if ticket_status is not None:
        condition &= Q(ticket_status=ticket_status)
    if priority is not None:
        condition &= Q(priority=priority)
    if handler_group is not None:
        condition &= Q(handler_group_id=handler_group)
    if category:
        condition &= Q(category=category)
    if submitted_from is not None:
        condition &= Q(submitted_time__gte=submitted_from)
    if submitted_to is not None:
        condition &= Q(submitted_time__lt=submitted_to)
    return condition


def narrowed(
    user, condition: Q, *, tag: str | None = None, fields: Mapping[str, str] | None = None
) -> QuerySet[Ticket]:
    """The tickets meeting `condition` (ticket_filters'), carrying `tag` and holding the
    custom `fields` values: the pool's own filters (ticketing.tags, ticketing.fields; a bad
    field filter is a 400 naming `field.<key>`). A tag is the team's (access "tag"): it
    finds only tickets whose internals the caller sees, so an applicant's `?tag=` tells
    nothing of their own tickets' tags."""
    tickets = Ticket.objects.filter(condition)
    if tag:
        tickets = filter_tag(tickets, tag).filter(access.internals_scope(access.audience_for(user)))
    return filter_fields(tickets, dict(fields or {}))


def _ticket_condition(condition: Q | QuerySet[Ticket]) -> tuple[str, list]:
    """A condition on the ticket as SQL over the unaliased "oa_ticket_bill", compiled by the
    ORM from the Q that ticketing.access (and the filters) wrote, or from the WHERE of a
    queryset over the ticket alone (`narrowed`): the rule is not said twice."""
    tickets = condition if isinstance(condition, QuerySet) else Ticket.objects.filter(condition)
    query = tickets.query
    compiler = query.get_compiler(connection=connection)
    try:
        sql, params = compiler.compile(query.where)
    except EmptyResultSet:
        return "FALSE", []
    except FullResultSet:
        return "TRUE", []
    return (f"({sql})" if sql else "TRUE"), list(params)


# The candidates and their ranking, in one statement. {scope}: the caller's visible tickets
# and the filters; {internal}: the tickets whose notes the caller may read; %(since)s: the
# window's first ticket id. Each branch takes the newest CANDIDATES matches in the window
# through its GIN index ANDed with an index on the ticket id (the primary key,
# reply_ticket_idx, attachment_ticket_idx), so only the window's matches are read; a
# ticket's rank is its best document's, rounded so that recency decides between near-equal
# ones.
SEARCH = """
WITH ticket_hits AS (
    SELECT oa_ticket_bill.id AS ticket_id, oa_ticket_bill.submitted_time,
           oa_ticket_bill.search_vector AS vector
    FROM oa_ticket_bill
    WHERE oa_ticket_bill.search_vector @@ %(q)s::tsquery AND oa_ticket_bill.id >= %(since)s
      AND {scope}
    ORDER BY oa_ticket_bill.id DESC
    LIMIT %(n)s
), reply_hits AS (
    SELECT r.ticket_id, oa_ticket_bill.submitted_time, r.search_vector AS vector
    FROM oa_ticket_reply r
    JOIN oa_ticket_bill ON oa_ticket_bill.id = r.ticket_id
    WHERE r.search_vector @@ %(q)s::tsquery AND r.ticket_id >= %(since)s AND {scope}
      AND (r.reply_type = %(public)s OR {internal})
    ORDER BY r.id DESC
    LIMIT %(n)s
), file_hits AS (
    SELECT a.ticket_id, oa_ticket_bill.submitted_time, td_filename_vector(a.filename) AS vector
    FROM attachments_attachment a
    JOIN oa_ticket_bill ON oa_ticket_bill.id = a.ticket_id
    LEFT JOIN oa_ticket_reply fr ON fr.id = a.reply_id
    WHERE td_filename_vector(a.filename) @@ %(q)s::tsquery AND a.ticket_id >= %(since)s
      AND {scope}
      AND (a.reply_id IS NULL OR fr.reply_type = %(public)s OR {internal})
    ORDER BY a.id DESC
    LIMIT %(n)s
), code_hit AS (
    SELECT oa_ticket_bill.id AS ticket_id, oa_ticket_bill.submitted_time
    FROM oa_ticket_bill
    WHERE oa_ticket_bill.bill_code = %(code)s AND {scope}
), hits AS (
    SELECT ticket_id, submitted_time, ts_rank(vector, %(q)s::tsquery) AS rank
    FROM ticket_hits
    UNION ALL
    SELECT ticket_id, submitted_time, ts_rank(vector, %(q)s::tsquery) FROM reply_hits
    UNION ALL
    SELECT ticket_id, submitted_time, ts_rank(vector, %(q)s::tsquery) FROM file_hits
    UNION ALL
    SELECT ticket_id, submitted_time, 1000 FROM code_hit
)
SELECT ticket_id, round(max(rank)::numeric, 2) AS rank,
       (SELECT count(*) FROM ticket_hits), (SELECT count(*) FROM reply_hits),
       (SELECT count(*) FROM file_hits)
FROM hits
GROUP BY ticket_id, submitted_time
ORDER BY rank DESC, submitted_time DESC, ticket_id DESC
"""


@dataclass
class Found:
    """The ranked ids of the tickets found (at most 3 × CANDIDATES + 1), whether a branch
    reached CANDIDATES (then there may be more), and the tsquery (for the highlights)."""

    ticket_ids: list[int]
    capped: bool
    tsquery: str
    query: Query


def _statement(scope: tuple[str, list], internal: tuple[str, list]) -> tuple[str, dict]:
    """SEARCH with the two conditions in place; named parameters throughout (the ORM's
    positional ones renamed)."""
    params: dict = {}
    rendered = {}
    for name, (sql, values) in (("scope", scope), ("internal", internal)):
        for i, value in enumerate(values):
            key = f"{name}_{i}"
            params[key] = value
            sql = sql.replace("%s", f"%({key})s", 1)
        rendered[name] = sql
    return SEARCH.format(**rendered), params


def search_statement(
    user, query: Query, tsquery: str, *, filters: Q | QuerySet[Ticket] | None = None
):
    """(SEARCH for this caller, its parameters): the statement `search_tickets` runs (and the
    query-plan tests EXPLAIN). `filters`: a condition on the ticket, or a queryset of the
    ticket alone with its filters (`narrowed`)."""
    audience = access.audience_for(user)
    if isinstance(filters, QuerySet):
        scope = _ticket_condition(filters.filter(access.visible_scope(user)))
    else:
        scope = _ticket_condition(access.visible_scope(user) & (filters or Q()))
    internal = _ticket_condition(access.internals_scope(audience))
    sql, params = _statement(scope, internal)
    params.update(
        q=tsquery, n=CANDIDATES, public=int(ReplyType.PUBLIC), code=query.bill_code, since=0
    )
    return sql, params


def next_window(window: float, found: int) -> float:
    """The share of the newest tickets to search next, after `found` results in `window`."""
    if found == 0:
        return 1.0
    wider = max(window * 4, window * ENOUGH * 1.5 / found)
    return 1.0 if wider > 0.5 else wider


def search_tickets(user, query: Query, *, filters: Q | QuerySet[Ticket] | None = None) -> Found:
    """The tickets this user may see in which the query matches text they may read: the
    ticket's title and content, its public replies, its notes and their files only where the
    user sees the ticket's internals (ticketing.access). Ranked by relevance, then newest."""
    tsquery = tsquery_of(query)
    if not tsquery:  # only stop words or signs (a bill code always has its digits)
        return Found([], False, "", query)
    sql, params = search_statement(user, query, tsquery, filters=filters)
    with connection.cursor() as cursor:
        cursor.execute("SELECT coalesce(max(id), 0) FROM oa_ticket_bill")
        newest = cursor.fetchone()[0]
        # A bill code's words are in a document or two: the whole history at once.
        window = 1.0 if query.bill_code else FIRST_WINDOW
        while True:
            params["since"] = 0 if window >= 1 else newest - int(newest * window)
            cursor.execute(sql, params)
            rows = cursor.fetchall()
            if len(rows) >= ENOUGH or window >= 1:
                break
            window = next_window(window, len(rows))
    capped = params["since"] > 0 or (bool(rows) and max(rows[0][2:]) >= CANDIDATES)
    return Found([row[0] for row in rows], capped, tsquery, query)


def search_for(
    user,
    *,
    q: str,
    ticket_status: int | None = None,
    priority: int | None = None,
    handler_group: int | None = None,
    category: str | None = None,
    submitted_from: datetime | None = None,
    submitted_to: datetime | None = None,
    tag: str | None = None,
    fields: Mapping[str, str] | None = None,
) -> Found:
    """`search_tickets` with the pool's filters (the API's and the console's): a tag and
    custom fields' values (`narrowed`) among them."""
    condition = ticket_filters(
        ticket_status=ticket_status,
        priority=priority,
        handler_group=handler_group,
        category=category,
        submitted_from=submitted_from,
        submitted_to=submitted_to,
    )
    filters: Q | QuerySet[Ticket] = condition
    if tag or fields:
        filters = narrowed(user, condition, tag=tag, fields=fields)
    return search_tickets(user, parse(q), filters=filters)


def search_validated(
    user, data: Mapping[str, Any], fields: Mapping[str, str] | None = None
) -> Found:
    """search_for with a valid SearchQuery's data (the API's and the console's forms), and
    the custom fields' filters (ticketing.fields.field_filters_from of the query string)."""
    return search_for(
        user,
        q=data["q"],
        ticket_status=data.get("ticket_status"),
        priority=data.get("priority"),
        handler_group=data.get("handler_group"),
        category=data.get("category"),
        submitted_from=data.get("from"),
        submitted_to=data.get("to"),
        tag=data.get("tag"),
        fields=fields,
    )


def tickets_in_order(ids: list[int], queryset=None) -> list[Ticket]:
    """The page's tickets, in the order found."""
    rows = {
        t.pk: t for t in (queryset if queryset is not None else Ticket.objects).filter(pk__in=ids)
    }
    return [rows[pk] for pk in ids if pk in rows]


def _matches(sql: str, tsquery: str) -> RawSQL:
    return RawSQL(f"{sql} @@ %s::tsquery", [tsquery], output_field=BooleanField())


def replies_matching(audience: access.Audience, tickets: list[Ticket], tsquery: str) -> dict:
    """{ticket id: [the replies of it that match and that this audience may read, newest
    first, at most HIGHLIGHTED_REPLIES]}: one query for the page. The match is a column,
    not a condition, so the page's replies are read through reply_ticket_idx rather than
    every match of a common word through the GIN index."""
    if not tsquery or not tickets:
        return {}
    readable = [t.pk for t in tickets if audience.sees_internals(t)]
    found: dict[int, list[TicketReply]] = {}
    replies = (
        TicketReply.objects.filter(ticket_id__in=[t.pk for t in tickets])
        .filter(Q(reply_type=ReplyType.PUBLIC) | Q(ticket_id__in=readable))
        .annotate(hit=_matches("oa_ticket_reply.search_vector", tsquery))
        .only("id", "ticket_id", "reply_type", "content")
        .order_by("-id")
    )
    for reply in replies:
        if not reply.hit:
            continue
        kept = found.setdefault(reply.ticket_id, [])
        if len(kept) < HIGHLIGHTED_REPLIES:
            kept.append(reply)
    return found


def files_matching(audience: access.Audience, tickets: list[Ticket], tsquery: str) -> dict:
    """{ticket id: [its files whose names match and which this audience may see]}."""
    if not tsquery or not tickets:
        return {}
    readable = [t.pk for t in tickets if audience.sees_internals(t)]
    found: dict[int, list[Attachment]] = {}
    files = (
        Attachment.objects.filter(ticket_id__in=[t.pk for t in tickets])
        .filter(
            Q(reply__isnull=True)
            | Q(reply__reply_type=ReplyType.PUBLIC)
            | Q(ticket_id__in=readable)
        )
        .filter(_matches("td_filename_vector(attachments_attachment.filename)", tsquery))
        .select_related("reply")
        .only("id", "ticket_id", "filename", "reply_id", "reply__reply_type")
        .order_by("-id")
    )
    for file in files:
        assert file.ticket_id is not None  # (filtered on it)
        kept = found.setdefault(file.ticket_id, [])
        if len(kept) < HIGHLIGHTED_FILES:
            kept.append(file)
    return found


def stems(words: set[str]) -> dict[str, list[str]]:
    """{word: its lexemes under the `english` configuration} (none for a stop word)."""
    if not words:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT w, array(SELECT lexeme FROM unnest(to_tsvector('english'::regconfig, w))) "
            "FROM unnest(%s::text[]) AS w",
            [sorted(words)],
        )
        return {word: list(lexemes) for word, lexemes in cursor.fetchall()}
