"""Member rows for routing in one query: account, presence, load, offers, today's count,
last assignment and capacity of every member of a group, and how to write to them (the
chosen member's assignment notice is written in the assignment's transaction)."""

from datetime import datetime
from functools import cache

from django.contrib.auth import get_user_model
from psycopg import sql

from accounts.preferences import reader_from
from config.db import prepared_cursor
from handler_groups.models import HandlerGroup
from routing.loads import day_start

from .eligibility import GroupPolicy, MemberRow

MEMBER_ROWS_SQL = """
SELECT u.id, u.is_active, p.state, p.online_since, p.idle_since,
       COALESCE(f.active, 0), COALESCE(f.open_offers, 0), COALESCE(f.assigned_today, 0),
       (SELECT max(t.assigned_time) FROM oa_ticket_bill t WHERE t.handler_id = u.id)
           AS last_assigned,
       c.max_active AS own_cap,
       u.username,
       pr.language, pr.browser_language, pr.time_zone, u.email
FROM {users} u
LEFT JOIN oa_agent_presence p ON p.user_id = u.id
LEFT JOIN oa_user_profile pr ON pr.user_id = u.id
LEFT JOIN oa_handler_member_capacity c ON c.group_id = %(group)s AND c.user_id = u.id
LEFT JOIN LATERAL (
    SELECT sum(l.active) AS active,
           sum(l.offers) FILTER (WHERE l.group_id = %(group)s) AS open_offers,
           sum(l.assigned) FILTER (WHERE l.group_id = %(group)s
                                     AND l.since >= %(day_start)s) AS assigned_today
    FROM oa_handler_load l
    WHERE l.user_id = u.id
) f ON true
WHERE u.id = ANY(%(ids)s)
"""
"""The member figures of a group's members, one row each. Locks nothing: it runs under the
group's lock (the caller's), which is what keeps the figures from going stale before the
pick is written. A member's load comes from their HandlerLoad rows (kept by triggers on the
ticket table, folded as they are assigned: a few rows each), so it costs the same whatever
they hold or have done; the last assignment is one probe backwards on
ticket_handler_assigned_idx. The reader columns are what accounts.preferences.reader_from
takes. Raw SQL: it runs on every routing decision, and the ORM spends several times longer
compiling the equivalent annotations than PostgreSQL spends executing them. {users}: the
user model's table (a setting)."""


@cache
def _member_rows_sql() -> str:
    users = sql.Identifier(get_user_model()._meta.db_table)
    return sql.SQL(MEMBER_ROWS_SQL.strip()).format(users=users).as_string()


def member_rows(*, group: HandlerGroup, member_ids: list[int], now: datetime) -> list[MemberRow]:
    """Rows in member order (members without an account are left out), in one query."""
    if not member_ids:
        return []
    with prepared_cursor() as cursor:
        cursor.execute(
            _member_rows_sql(),
            {"group": group.pk, "day_start": day_start(now), "ids": list(member_ids)},
        )
        by_id = {row[0]: row for row in cursor.fetchall()}
    rows = []
    for member_id in member_ids:
        row = by_id.get(member_id)
        if row is None:
            continue
        (
            _,
            is_active,
            state,
            online_since,
            idle_since,
            active,
            open_offers,
            today,
            last,
            own_cap,
            username,
            *reader,
        ) = row
        rows.append(
            MemberRow(
                user_id=member_id,
                is_active=is_active,
                presence=state or "offline",
                online_since=online_since,
                idle_since=idle_since,
                active=active,
                open_offers=open_offers,
                assigned_today=today,
                last_assigned=last,
                max_active=own_cap if own_cap is not None else group.max_active,
                username=username,
                reader=reader_from(*reader),
            )
        )
    return rows


def policy_of(group: HandlerGroup) -> GroupPolicy:
    return GroupPolicy(
        requires_presence=group.requires_presence,
        offers_enabled=bool(group.offer_timeout_seconds),
        daily_cap=group.daily_cap,
    )
