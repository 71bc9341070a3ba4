"""Reads: a ticket's survey, the survey a link's token opens, and the figures.

The figures (satisfaction_figures), over the surveys asked in [from, to) of the chosen
groups (the group each survey rates: the ticket's group at its first completion):
- asked: surveys asked; responses: those answered; response_rate: responses / asked;
- csat: the share of responses rating 4 or 5; mean: the mean rating of the responses
  (null without responses);
- per bucket: each local day or week (weeks start on Monday) of the active time zone from
  the one holding `from` to the one holding the instant before `to`, empty ones included;
  the first and last may be partial (only [from, to) is counted);
- per agent: the same by the handler who completed the ticket."""

import functools
from datetime import datetime

from django.contrib.auth import get_user_model
from django.db import connection
from django.utils import timezone
from psycopg import sql

from ticketing.models import Ticket

from .models import Survey
from .tokens import BadToken, ExpiredToken, read_token

BUCKETS = {"day": "1 day", "week": "7 days"}
SATISFIED_MIN = 4  # a 4 or a 5 counts as satisfied (CSAT)


def survey_of(ticket: Ticket) -> Survey | None:
    """The ticket's survey (read with the ticket when it was select_related), or None."""
    try:
        return ticket.survey
    except Survey.DoesNotExist:
        return None


def survey_for_token(token: str, *, now: datetime) -> Survey:
    """The survey a link's token opens, with its ticket: BadToken for a token this site did
    not sign, or whose survey is not of the ticket it names (or is gone); ExpiredToken when
    the link is older than 14 days or the survey has expired."""
    survey_id, ticket_id = read_token(token)
    survey = (
        Survey.objects.select_related("ticket").filter(pk=survey_id, ticket_id=ticket_id).first()
    )
    if survey is None:
        raise BadToken()
    if survey.expires <= now:
        raise ExpiredToken()
    return survey


# The window's surveys: survey_asked_idx reads them, or survey_group_asked_idx for chosen
# groups (GROUPS_SQL).
WINDOW_SQL = "s.asked >= %(from)s AND s.asked < %(to)s"
GROUPS_SQL = " AND s.handler_group_id = ANY(%(groups)s)"

BUCKETS_SQL = """
WITH buckets AS (
    SELECT local_start AT TIME ZONE %(tz)s AS start
    FROM generate_series(
        date_trunc(%(unit)s, %(from)s::timestamptz, %(tz)s) AT TIME ZONE %(tz)s,
        (%(to)s::timestamptz - interval '1 microsecond') AT TIME ZONE %(tz)s,
        %(step)s::interval
    ) local_start
),
figures AS (
    SELECT date_trunc(%(unit)s, s.asked, %(tz)s) AS start,
           count(*) AS asked,
           count(*) FILTER (WHERE s.rating IS NOT NULL) AS responses,
           count(*) FILTER (WHERE s.rating >= %(satisfied)s) AS satisfied,
           sum(s.rating) AS rating_sum
    FROM oa_ticket_survey s
    WHERE {where}
    GROUP BY 1
)
SELECT b.start, COALESCE(f.asked, 0), COALESCE(f.responses, 0), COALESCE(f.satisfied, 0),
       COALESCE(f.rating_sum, 0)
FROM buckets b
LEFT JOIN figures f ON f.start = b.start
ORDER BY b.start
"""
"""Per local day or week (generated in local time and converted back, so a daylight-saving
change makes a 23- or 25-hour day, never a shifted one): asked, responses, satisfied, the
sum of ratings. Locks nothing."""

AGENTS_SQL = """
SELECT s.handler_id, u.username,
       count(*) AS asked,
       count(*) FILTER (WHERE s.rating IS NOT NULL) AS responses,
       count(*) FILTER (WHERE s.rating >= %(satisfied)s) AS satisfied,
       avg(s.rating) AS mean
FROM oa_ticket_survey s
LEFT JOIN {users} u ON u.id = s.handler_id
WHERE {where}
GROUP BY s.handler_id, u.username
ORDER BY responses DESC, u.username NULLS LAST, s.handler_id NULLS LAST
"""
"""Per handler who completed the window's tickets: asked, responses, satisfied, mean.
Locks nothing."""


@functools.cache
def _statements(with_groups: bool) -> tuple[str, str]:
    where = sql.SQL(WINDOW_SQL + (GROUPS_SQL if with_groups else ""))
    users = sql.Identifier(get_user_model()._meta.db_table)
    buckets = sql.SQL(BUCKETS_SQL.strip()).format(where=where).as_string()
    agents = sql.SQL(AGENTS_SQL.strip()).format(where=where, users=users).as_string()
    return buckets, agents


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _mean(total, count: int) -> float | None:
    return round(float(total) / count, 2) if count else None


def figures_statements(
    *, group_ids: list[int] | None, date_from: datetime, date_to: datetime, bucket: str
) -> tuple[str, str, dict]:
    """The two statements of satisfaction_figures (per bucket, per agent) and their
    parameters."""
    buckets_sql, agents_sql = _statements(group_ids is not None)
    params = {
        "from": date_from,
        "to": date_to,
        "tz": timezone.get_current_timezone_name(),
        "unit": bucket,
        "step": BUCKETS[bucket],
        "satisfied": SATISFIED_MIN,
        "groups": list(group_ids or []),
    }
    return buckets_sql, agents_sql, params


def satisfaction_figures(
    *, group_ids: list[int] | None, date_from: datetime, date_to: datetime, bucket: str
) -> dict:
    """The figures (see the module's docstring) over the surveys asked in [date_from,
    date_to) of the groups `group_ids` (None: every survey, of any group or none), per
    `bucket` ("day" or "week") of the active time zone and per agent; two statements."""
    buckets_sql, agents_sql, params = figures_statements(
        group_ids=group_ids, date_from=date_from, date_to=date_to, bucket=bucket
    )
    with connection.cursor() as cursor:
        cursor.execute(buckets_sql, params)
        bucket_rows = cursor.fetchall()
        cursor.execute(agents_sql, params)
        agent_rows = cursor.fetchall()
    buckets = []
    totals = {"asked": 0, "responses": 0, "satisfied": 0, "rating_sum": 0}
    for start, asked, responses, satisfied, rating_sum in bucket_rows:
        for name, value in zip(totals, (asked, responses, satisfied, rating_sum), strict=True):
            totals[name] += value
        buckets.append(
            {
                "start": timezone.localtime(start).isoformat(),
                **_figures(asked, responses, satisfied, rating_sum),
            }
        )
    agents = [
        {
            "handler_id": handler_id,
            "username": username,
            "asked": asked,
            "responses": responses,
            "csat": _rate(satisfied, responses),
            "mean": None if mean is None else round(float(mean), 2),
        }
        for handler_id, username, asked, responses, satisfied, mean in agent_rows
    ]
    return {
        "bucket": bucket,
        "zone": params["tz"],
        **_figures(totals["asked"], totals["responses"], totals["satisfied"], totals["rating_sum"]),
        "buckets": buckets,
        "agents": agents,
    }


def _figures(asked: int, responses: int, satisfied: int, rating_sum) -> dict:
    return {
        "asked": asked,
        "responses": responses,
        "response_rate": _rate(responses, asked),
        "csat": _rate(satisfied, responses),
        "mean": _mean(rating_sum, responses),
    }


BY_GROUP_SQL = """
SELECT s.handler_group_id,
       count(*) AS asked,
       count(*) FILTER (WHERE s.rating IS NOT NULL) AS responses,
       count(*) FILTER (WHERE s.rating >= %(satisfied)s) AS satisfied,
       COALESCE(sum(s.rating), 0) AS rating_sum
FROM oa_ticket_survey s
WHERE s.handler_group_id = ANY(%(groups)s) AND s.asked >= %(from)s AND s.asked < %(to)s
GROUP BY s.handler_group_id
"""
"""Per group of `groups`, the surveys asked in [from, to) (survey_group_asked_idx). Locks
nothing."""


def satisfaction_by_group(
    *, group_ids: list[int], date_from: datetime, date_to: datetime
) -> dict[int, dict]:
    """Each group's asked, responses, response_rate, csat and mean over the surveys asked in
    [date_from, date_to) (the dashboards' figures beside SLA compliance); a group without
    surveys has zeros and nulls. One statement."""
    with connection.cursor() as cursor:
        cursor.execute(
            BY_GROUP_SQL,
            {
                "groups": list(group_ids),
                "from": date_from,
                "to": date_to,
                "satisfied": SATISFIED_MIN,
            },
        )
        found = {row[0]: _figures(*row[1:]) for row in cursor.fetchall()}
    return {g: found.get(g) or _figures(0, 0, 0, 0) for g in group_ids}
