"""SLA report: counts, breach rates and median/p90 business minutes, from final outcomes."""

from datetime import datetime

from django.db import connection

GROUPINGS = {
    "handler_group": "t.handler_group_id",
    "priority": "t.priority",
    "category": "t.category",
    "handler": "t.handler_id",
}


def sla_report(
    *,
    date_from: datetime,
    date_to: datetime,
    group_by: str,
    handler_group_ids: list[int] | None = None,
    priority: int | None = None,
    category: str | None = None,
) -> list[dict]:
    """One row per group value over tickets completed in [date_from, date_to).
    handler_group_ids=None means every group (staff); a list restricts to those groups."""
    key = GROUPINGS[group_by]
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
    sql = f"""
        SELECT {key} AS key,
               count(*) AS tickets,
               count(*) FILTER (WHERE o.response_met IS FALSE) AS response_breaches,
               count(*) FILTER (WHERE o.response_met IS NOT NULL) AS response_measured,
               count(*) FILTER (WHERE o.resolve_met IS FALSE) AS resolve_breaches,
               count(*) FILTER (WHERE o.resolve_met IS NOT NULL) AS resolve_measured,
               percentile_cont(0.5) WITHIN GROUP (ORDER BY o.response_minutes) AS response_p50,
               percentile_cont(0.9) WITHIN GROUP (ORDER BY o.response_minutes) AS response_p90,
               percentile_cont(0.5) WITHIN GROUP (ORDER BY o.resolve_minutes) AS resolve_p50,
               percentile_cont(0.9) WITHIN GROUP (ORDER BY o.resolve_minutes) AS resolve_p90
        FROM oa_sla_outcome o JOIN oa_ticket_bill t ON t.id = o.ticket_id
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
            "response_breaches": row["response_breaches"],
            "response_breach_rate": _rate(row["response_breaches"], row["response_measured"]),
            "resolve_breaches": row["resolve_breaches"],
            "resolve_breach_rate": _rate(row["resolve_breaches"], row["resolve_measured"]),
            "response_minutes_median": _round(row["response_p50"]),
            "response_minutes_p90": _round(row["response_p90"]),
            "resolve_minutes_median": _round(row["resolve_p50"]),
            "resolve_minutes_p90": _round(row["resolve_p90"]),
        }
        for row in rows
    ]


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _round(value) -> float | None:
    return None if value is None else round(float(value), 2)
