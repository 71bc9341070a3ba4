"""Handlers' load rows (HandlerLoad, kept by triggers on the ticket table): the day's start
the figures count from, folding a member's rows of a group into one, and checking them
against the tickets (`mismatches`) or recounting them from the tickets (`rebuild`;
`manage.py routing_loads`).

A fold deletes the rows it sums and inserts their sum in one statement, so it never loses or
doubles a difference written meanwhile (a row committed after the fold's snapshot is not
deleted and stays as it is). Folds of a group's rows run under the group's lock only — in
the assignment's own statement for the member assigned, and in the routing sweep — so two
folds never take the same rows' locks in differing orders; the triggers only insert.

May import: routing's models, ticketing's models, handler_groups, config."""

from datetime import datetime

from django.db import connection, transaction
from django.utils import timezone
from psycopg import sql

from config.db import prepared_cursor
from handler_groups.models import HandlerGroup
from ticketing.models import ACTIVE_STATUSES, TicketStatus

FOLD_GONE_SQL = """
DELETE FROM oa_handler_load
WHERE user_id = %s AND group_id IS NOT DISTINCT FROM %s
RETURNING since, active, offers, assigned
"""
"""A member's load rows of a group, deleted and returned to be summed (the fold's first
half, `fold_gone`). Locks the rows it deletes; only folds delete (the triggers insert), and
folds of a group run under its lock, so two folds never wait on each other's rows."""

FOLD_KEPT_SQL = """
INSERT INTO oa_handler_load (user_id, group_id, since, active, offers, assigned)
SELECT %s, %s, %s,
       COALESCE(sum(active), 0),
       COALESCE(sum(offers), 0),
       COALESCE(sum(assigned) FILTER (WHERE since >= %s), 0)
FROM fold_gone
HAVING sum(active) <> 0 OR sum(offers) <> 0
    OR COALESCE(sum(assigned) FILTER (WHERE since >= %s), 0) <> 0
"""
"""The fold's second half (`fold_kept`): the rows `fold_gone` deleted, as one — what the
member holds and offers, and what was assigned to them since the day's start (what was
assigned before it no longer counts: folded away); no row when all of it is nought. Both
halves run in one statement (one snapshot: a row committed after it is neither deleted nor
summed) — in the assignment's (routing.route, as two `Along`s) or in FOLD_SQL;
fold_params gives their parameters."""

FOLD_SQL = (
    sql.SQL("""
WITH fold_gone AS ({gone}), fold_kept AS ({kept})
SELECT count(*) FROM fold_gone
""")
    .format(gone=sql.SQL(FOLD_GONE_SQL.strip()), kept=sql.SQL(FOLD_KEPT_SQL.strip()))
    .as_string()
)
"""The fold as a statement of its own (fold_sweep): the rows folded away."""

CROWDED_SQL = """
SELECT user_id, group_id FROM oa_handler_load
GROUP BY user_id, group_id
HAVING count(*) > %s
ORDER BY group_id NULLS LAST, user_id
"""
"""Keys worth folding (fold_sweep): more than `%s` rows. Locks nothing."""

# Two sweeps never fold at once (transaction-scoped advisory lock, taken before a group's):
# rows of tickets in no group, or of a group that is gone, are folded by the sweep alone.
_SWEEP_LOCK = 0x6C6F6164  # "load"

_COUNTED = """
SELECT handler_id, handler_group_id,
       count(*) FILTER (WHERE ticket_status = ANY(%(held)s)) AS active,
       count(*) FILTER (WHERE ticket_status = %(offered)s AND accepted_time IS NULL) AS offers,
       count(*) FILTER (WHERE assigned_time >= %(day_start)s) AS assigned
FROM oa_ticket_bill
WHERE handler_id IS NOT NULL
GROUP BY handler_id, handler_group_id
"""
# What the tickets themselves say, per handler and group: held (pending process or
# processing), offered and not accepted, assigned since the day's start.

MISMATCHES_SQL = f"""
WITH summed AS (
    SELECT user_id, group_id,
           sum(active) AS active,
           sum(offers) AS offers,
           COALESCE(sum(assigned) FILTER (WHERE since >= %(day_start)s), 0) AS assigned
    FROM oa_handler_load
    GROUP BY user_id, group_id
), counted AS ({_COUNTED})
SELECT COALESCE(s.user_id, c.handler_id), COALESCE(s.group_id, c.handler_group_id),
       COALESCE(s.active, 0), COALESCE(s.offers, 0), COALESCE(s.assigned, 0),
       COALESCE(c.active, 0), COALESCE(c.offers, 0), COALESCE(c.assigned, 0)
FROM summed s
FULL JOIN counted c
    ON c.handler_id = s.user_id AND c.handler_group_id IS NOT DISTINCT FROM s.group_id
ORDER BY 1, 2 NULLS FIRST
"""
"""The load rows summed beside what the tickets say, per handler and group, in one snapshot
(mismatches). Locks nothing."""

REBUILD_SQL = f"""
WITH counted AS ({_COUNTED})
INSERT INTO oa_handler_load (user_id, group_id, since, active, offers, assigned)
SELECT handler_id, handler_group_id, %(day_start)s, active, offers, assigned
FROM counted
WHERE active > 0 OR assigned > 0
"""
"""One load row per handler and group, counted from the tickets (rebuild, which has emptied
the table and holds the tickets' SHARE lock)."""


def day_start(now: datetime) -> datetime:
    """The start of `now`'s day in the server's zone: what counts as assigned today."""
    return timezone.localtime(now).replace(hour=0, minute=0, second=0, microsecond=0)


def _counted_params(start: datetime) -> dict:
    held = [int(status) for status in ACTIVE_STATUSES]
    return {"held": held, "offered": int(TicketStatus.PENDING_PROCESS), "day_start": start}


def fold_params(user_id: int, group_id: int | None, now: datetime) -> tuple[list, list]:
    """The parameters of FOLD_GONE_SQL and of FOLD_KEPT_SQL."""
    start = day_start(now)
    return [user_id, group_id], [user_id, group_id, start, start, start]


def fold_sweep(*, now: datetime | None = None, crowded: int = 4) -> int:
    """Fold every member's rows of a group that has more than `crowded` of them (members who
    work their tickets but are not being assigned in that group: their accepts and
    completions add rows). Each group's folds under its lock, in a short transaction of
    their own. Rows folded away."""
    now = now or timezone.now()
    with prepared_cursor() as cursor:
        cursor.execute(CROWDED_SQL, [crowded])
        keys = cursor.fetchall()
    by_group: dict[int | None, list[int]] = {}
    for user_id, group_id in keys:
        by_group.setdefault(group_id, []).append(user_id)
    folded = 0
    for group_id, user_ids in by_group.items():
        with transaction.atomic(), prepared_cursor() as cursor:
            # Sweeps fold one after the other; routing folds under the group's lock.
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_SWEEP_LOCK])
            if group_id is not None:
                # A group that is gone routes nothing: the sweep's lock alone is enough.
                list(
                    HandlerGroup.objects.select_for_update(no_key=True)
                    .filter(pk=group_id)
                    .values_list("pk", flat=True)
                )
            for user_id in user_ids:
                gone, kept = fold_params(user_id, group_id, now)
                cursor.execute(FOLD_SQL, [*gone, *kept])
                folded += cursor.fetchone()[0]
    return folded


def mismatches(*, now: datetime | None = None) -> list[tuple]:
    """(user, group, figures from the load rows, figures from the tickets) wherever they
    differ — (held, offered, assigned since the day's start) — read in one statement (one
    snapshot). Empty while the triggers have seen every change: they do, unless someone
    disabled them or loaded tickets without them."""
    start = day_start(now or timezone.now())
    with connection.cursor() as cursor:
        cursor.execute(MISMATCHES_SQL, _counted_params(start))
        rows = cursor.fetchall()
    return [
        (user_id, group_id, summed, counted)
        for user_id, group_id, *figures in rows
        if (summed := tuple(figures[:3])) != (counted := tuple(figures[3:]))
    ]


def rebuild(*, now: datetime | None = None) -> int:
    """Replace every load row with one per handler and group counted from the tickets, while
    ticket writes wait (SHARE lock on the ticket table: reads go on). Rows written."""
    start = day_start(now or timezone.now())
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("LOCK TABLE oa_ticket_bill IN SHARE MODE")
        cursor.execute("DELETE FROM oa_handler_load")
        cursor.execute(REBUILD_SQL, _counted_params(start))
        return cursor.rowcount
