"""SLA report: counts, breach rates and median/p90 business minutes, from final outcomes
(written at completion, or at the close of a ticket closed unfinished)."""

from datetime import date, datetime, timedelta

from django.db import connection
from django.utils import timezone
from django.utils.translation import gettext as _

from config.errors import Forbidden
from handler_groups.access import require_supervisor
from handler_groups.selectors import groups_led_by, supervises_any
from ticketing.tags import normalize_tag

GROUPINGS = {
    "handler_group": "t.handler_group_id",
    "priority": "t.priority",
    "category": "t.category",
    "handler": "t.handler_id",
    # One row per tag a ticket carries (a ticket with two tags counts in both rows; one with
    # none in the row whose key is null): TAGGED joins each ticket's tags.
    "tag": "tagged.tag",
}
TAGGED = "LEFT JOIN LATERAL unnest(t.tags) AS tagged(tag) ON true"
# Each outcome of the window with its ticket's columns the report groups and filters by,
# found by the ticket's primary key: OFFSET 0 keeps the subquery a probe per outcome, so the
# planner cannot join the window's outcomes to a whole read of the ticket table (or of a
# group's whole history), which it would otherwise prefer. The window's outcomes are read by
# sla_outcome_time_idx; the cost grows with the window, not with the years before it.
OUTCOMES_WITH_TICKETS = """
    oa_sla_outcome o
    CROSS JOIN LATERAL (
        SELECT t.handler_group_id, t.priority, t.category, t.handler_id, t.tags
        FROM oa_ticket_bill t WHERE t.id = o.ticket_id OFFSET 0
    ) t
"""
# The clocks whose minutes are a duration to report: every clock of a completed ticket, and of
# a ticket closed unfinished the response given before the close and the breached clocks.
RESPONSE_TIMED = "NOT o.closed_before_completion OR o.response_result IN ('met', 'breached')"
RESOLVE_TIMED = "NOT o.closed_before_completion OR o.resolve_result = 'breached'"


def sla_report(
    *,
    date_from: datetime,
    date_to: datetime,
    group_by: str,
    handler_group_ids: list[int] | None = None,
    priority: int | None = None,
    category: str | None = None,
    tag: str | None = None,
) -> list[dict]:
    """One row per group value over tickets whose outcome was finalised in [date_from,
    date_to): completed then, or closed unfinished then. handler_group_ids=None means every
    group (staff); a list restricts to those groups. `tag`: only tickets carrying it;
    grouped by tag, a ticket counts once under each of its tags (so the rows' counts may
    add up to more than the tickets), a ticket without tags under the null key.

    Per clock, a breach rate is breaches over the clocks measured (met or breached); a clock
    closed before due is neither, so it is counted on its own and left out of the rate; so is
    the clock of a duplicate merged into another ticket (`merged`). The
    median and p90 take the clocks that stopped by themselves (completed tickets, a response
    given before the close) and the breached ones (their minutes run until the close); a clock
    cut short by the close before it was due has no duration to report."""
    key = GROUPINGS[group_by]
    where, params = _filters(
        date_from=date_from,
        date_to=date_to,
        handler_group_ids=handler_group_ids,
        priority=priority,
        category=category,
        tag=tag,
    )
    source = f"{OUTCOMES_WITH_TICKETS} {TAGGED}" if group_by == "tag" else OUTCOMES_WITH_TICKETS
    sql = f"""
        SELECT {key} AS key,
               count(*) AS tickets,
               count(*) FILTER (WHERE o.closed_before_completion) AS closed_unfinished,
               count(*) FILTER (WHERE o.response_result = 'breached') AS response_breaches,
               count(*) FILTER (WHERE o.response_result IN ('met', 'breached'))
                   AS response_measured,
               count(*) FILTER (WHERE o.response_result = 'closed_before_due')
                   AS response_closed_before_due,
               count(*) FILTER (WHERE o.response_result = 'merged') AS response_merged,
               count(*) FILTER (WHERE o.resolve_result = 'breached') AS resolve_breaches,
               count(*) FILTER (WHERE o.resolve_result IN ('met', 'breached'))
                   AS resolve_measured,
               count(*) FILTER (WHERE o.resolve_result = 'closed_before_due')
                   AS resolve_closed_before_due,
               count(*) FILTER (WHERE o.resolve_result = 'merged') AS resolve_merged,
               percentile_cont(0.5) WITHIN GROUP (ORDER BY o.response_minutes)
                   FILTER (WHERE {RESPONSE_TIMED}) AS response_p50,
               percentile_cont(0.9) WITHIN GROUP (ORDER BY o.response_minutes)
                   FILTER (WHERE {RESPONSE_TIMED}) AS response_p90,
               percentile_cont(0.5) WITHIN GROUP (ORDER BY o.resolve_minutes)
                   FILTER (WHERE {RESOLVE_TIMED}) AS resolve_p50,
               percentile_cont(0.9) WITHIN GROUP (ORDER BY o.resolve_minutes)
                   FILTER (WHERE {RESOLVE_TIMED}) AS resolve_p90
        FROM {source}
        WHERE {" AND ".join(where)}
        GROUP BY {key}
        ORDER BY {key} NULLS LAST
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        columns = [c.name for c in cursor.description]
        rows = [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]
    return [
        {
            group_by: row["key"],
            "key": row["key"],
            "count": row["tickets"],
            "closed_before_completion": row["closed_unfinished"],
            "response_breaches": row["response_breaches"],
            "response_breach_rate": _rate(row["response_breaches"], row["response_measured"]),
            "response_closed_before_due": row["response_closed_before_due"],
            "response_merged": row["response_merged"],
            "resolve_breaches": row["resolve_breaches"],
            "resolve_breach_rate": _rate(row["resolve_breaches"], row["resolve_measured"]),
            "resolve_closed_before_due": row["resolve_closed_before_due"],
            "resolve_merged": row["resolve_merged"],
            "response_minutes_median": _round(row["response_p50"]),
            "response_minutes_p90": _round(row["response_p90"]),
            "resolve_minutes_median": _round(row["resolve_p50"]),
            "resolve_minutes_p90": _round(row["resolve_p90"]),
        }
        for row in rows
    ]


def report_scope(user, *, handler_group: int | None = None) -> list[int] | None:
    """The handler groups whose SLA figures `user` may read, for the report API and the
    leaders' page alike: None for every group (staff), else the groups they lead, or the one
    asked for. Raises Forbidden for anyone else, and for a group a leader does not lead."""
    require_supervisor(user, _("Only staff and group leaders may read SLA reports."))
    allowed = None if user.is_staff else list(groups_led_by(user).values_list("pk", flat=True))
    if handler_group is None:
        return allowed
    if allowed is not None and handler_group not in allowed:
        raise Forbidden(_("You lead no handler group with this id."))
    return [handler_group]


def may_read_reports(user) -> bool:
    """Staff and group leaders (the console shows them the SLA page's link)."""
    return supervises_any(user)


DAILY_SERIES = (
    "response_met",
    "response_breached",
    "response_closed_before_due",
    "resolve_met",
    "resolve_breached",
    "resolve_closed_before_due",
)


def sla_daily(
    *,
    date_from: datetime,
    date_to: datetime,
    handler_group_ids: list[int] | None = None,
    priority: int | None = None,
    category: str | None = None,
    tag: str | None = None,
) -> list[dict]:
    """Per day of the range, in the active time zone, the clocks met, breached and closed
    before due (neither met nor breached), response and resolve, over the tickets whose
    outcome was finalised that day (the report's population and filters). Every day of
    [date_from, date_to) has a row, zeros included."""
    where, params = _filters(
        date_from=date_from,
        date_to=date_to,
        handler_group_ids=handler_group_ids,
        priority=priority,
        category=category,
        tag=tag,
    )
    params["zone"] = timezone.get_current_timezone_name()
    counts = ",\n".join(
        f"count(*) FILTER (WHERE o.{clock}_result = '{result}') AS {clock}_{name}"
        for clock in ("response", "resolve")
        for result, name in (
            ("met", "met"),
            ("breached", "breached"),
            ("closed_before_due", "closed_before_due"),
        )
    )
    # Without a filter on the ticket no ticket is read: every outcome has its ticket (a
    # foreign key, deleted with it), so the join would keep every row.
    source = OUTCOMES_WITH_TICKETS if any("t." in w for w in where) else "oa_sla_outcome o"
    sql = f"""
        SELECT (o.completed_time AT TIME ZONE %(zone)s)::date AS day, {counts}
        FROM {source}
        WHERE {" AND ".join(where)}
        GROUP BY day
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        columns = [c.name for c in cursor.description]
        found = {row[0]: dict(zip(columns, row, strict=True)) for row in cursor.fetchall()}
    first = timezone.localdate(date_from)
    last = timezone.localdate(date_to - timedelta(microseconds=1))
    days: list[date] = [first + timedelta(days=n) for n in range((last - first).days + 1)]
    return [
        {"day": day, **{name: found.get(day, {}).get(name, 0) for name in DAILY_SERIES}}
        for day in days
    ]


def _filters(
    *,
    date_from: datetime,
    date_to: datetime,
    handler_group_ids: list[int] | None,
    priority: int | None,
    category: str | None,
    tag: str | None = None,
) -> tuple[list[str], dict]:
    """The report's WHERE clauses over outcomes `o` and tickets `t`, and their parameters."""
    where = ["o.completed_time >= %(from)s", "o.completed_time < %(to)s"]
    params: dict = {"from": date_from, "to": date_to}
    if handler_group_ids is not None:
        where.append("t.handler_group_id = ANY(%(groups)s)")
        params["groups"] = handler_group_ids
    if priority is not None:
        where.append("t.priority = %(priority)s")
        params["priority"] = priority
    if category:
        where.append("t.category = %(category)s")
        params["category"] = category
    if tag:
        # ticketing.tags.filter_tag's condition, said in SQL (the report's statement is SQL).
        where.append("t.tags @> ARRAY[%(tag)s]::varchar[]")
        params["tag"] = normalize_tag(tag)
    return where, params


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _round(value) -> float | None:
    return None if value is None else round(float(value), 2)
