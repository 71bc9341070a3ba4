"""Member rows for routing in one query: account, presence, load, offers, today's count,
last assignment and capacity of every member of a group, and how to write to them (the
chosen member's assignment notice is written in the assignment's own statement)."""

from datetime import datetime
from functools import cache

from django.contrib.auth import get_user_model
from django.db import connection
from django.utils import timezone

from accounts.preferences import PROFILE_TABLE, READER_COLUMNS, reader_from
from config.db import prepared_cursor
from handler_groups.models import HandlerGroup
from ticketing.models import ACTIVE_STATUSES, TicketStatus

from .eligibility import GroupPolicy, MemberRow

# One statement. Per member, one index-driven pass over the tickets that can count today —
# active (ticket_handler_idx) or assigned since the day began (ticket_handler_assigned_idx) —
# gives the three counts and, for a member assigned today, the last assignment; only for the
# others is that one probe backwards on ticket_handler_assigned_idx. So the cost does not grow
# with a member's history. Raw SQL: it runs under the group lock on every routing decision,
# and the ORM spends several times longer compiling the equivalent annotations than
# PostgreSQL spends executing them.
MEMBER_ROWS_SQL = """
SELECT u.id, u.is_active, p.state, p.online_since, p.idle_since,
       f.active, f.open_offers, f.assigned_today,
       COALESCE(f.last_today, (SELECT max(t.assigned_time) FROM oa_ticket_bill t
                                WHERE t.handler_id = u.id)) AS last_assigned,
       c.max_active AS own_cap,
       u.username,
       {reader_columns}
FROM {users} u
LEFT JOIN oa_agent_presence p ON p.user_id = u.id
LEFT JOIN {profiles} pr ON pr.user_id = u.id
LEFT JOIN oa_handler_member_capacity c ON c.group_id = %(group)s AND c.user_id = u.id
CROSS JOIN LATERAL (
    SELECT count(*) FILTER (WHERE t.ticket_status = ANY(%(active)s)) AS active,
           count(*) FILTER (WHERE t.ticket_status = %(offered)s AND t.accepted_time IS NULL
                              AND t.handler_group_id = %(group)s) AS open_offers,
           count(*) FILTER (WHERE t.assigned_time >= %(day_start)s
                              AND t.handler_group_id = %(group)s) AS assigned_today,
           max(t.assigned_time) FILTER (WHERE t.assigned_time >= %(day_start)s) AS last_today
    FROM oa_ticket_bill t
    WHERE t.handler_id = u.id
      AND (t.ticket_status = ANY(%(active)s) OR t.ticket_status = %(offered)s
           OR t.assigned_time >= %(day_start)s)
) f
WHERE u.id = ANY(%(ids)s)
"""


@cache
def _member_rows_sql() -> str:
    return MEMBER_ROWS_SQL.format(
        users=connection.ops.quote_name(get_user_model()._meta.db_table),
        profiles=PROFILE_TABLE,
        reader_columns=READER_COLUMNS,
    )


def member_rows(*, group: HandlerGroup, member_ids: list[int], now: datetime) -> list[MemberRow]:
    """Rows in member order (members without an account are left out), in one query."""
    if not member_ids:
        return []
    day_start = timezone.localtime(now).replace(hour=0, minute=0, second=0, microsecond=0)
    with prepared_cursor() as cursor:
        cursor.execute(
            _member_rows_sql(),
            {
                "group": group.pk,
                "day_start": day_start,
                "ids": list(member_ids),
                "active": [int(s) for s in ACTIVE_STATUSES],
                "offered": int(TicketStatus.PENDING_PROCESS),
            },
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
