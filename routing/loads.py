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

from config.db import prepared_cursor
from handler_groups.models import HandlerGroup
from ticketing.models import ACTIVE_STATUSES, Ticket, TicketStatus

from .models import HandlerLoad

_LOADS = HandlerLoad._meta.db_table
_TICKETS = Ticket._meta.db_table
_HELD = ", ".join(str(int(status)) for status in ACTIVE_STATUSES)
_OFFERED = int(TicketStatus.PENDING_PROCESS)

# A member's rows of a group as one: what they hold and offer, and what was assigned to them
# since the day's start (what was assigned before it no longer counts: folded away). Two
# CTEs, `fold_gone` and `fold_kept` (fold_params gives their parameters in that order): in
# the assignment's statement (routing.route) or as a statement of their own (FOLD_SQL).
FOLD_GONE_SQL = (
    f"DELETE FROM {_LOADS} WHERE user_id = %s AND group_id IS NOT DISTINCT FROM %s "
    "RETURNING since, active, offers, assigned"
)
FOLD_KEPT_SQL = (
    f"INSERT INTO {_LOADS} (user_id, group_id, since, active, offers, assigned) "
    "SELECT %s, %s, %s, COALESCE(sum(active), 0), COALESCE(sum(offers), 0), "
    "COALESCE(sum(assigned) FILTER (WHERE since >= %s), 0) FROM fold_gone "
    "HAVING sum(active) <> 0 OR sum(offers) <> 0 "
    "OR COALESCE(sum(assigned) FILTER (WHERE since >= %s), 0) <> 0"
)
FOLD_SQL = (
    f"WITH fold_gone AS ({FOLD_GONE_SQL}), fold_kept AS ({FOLD_KEPT_SQL}) "
    "SELECT count(*) FROM fold_gone"
)

# Two sweeps never fold at once (transaction-scoped advisory lock, taken before a group's):
# rows of tickets in no group, or of a group that is gone, are folded by the sweep alone.
_SWEEP_LOCK = 0x6C6F6164  # "load"
# Keys worth folding: more than `%s` rows.
CROWDED_SQL = (
    f"SELECT user_id, group_id FROM {_LOADS} GROUP BY user_id, group_id HAVING count(*) > %s "
    "ORDER BY group_id NULLS LAST, user_id"
)


# What the tickets themselves say, per handler and group: held (pending process or
# processing), offered and not accepted, assigned since the day's start (the parameter).
COUNTED_SQL = f"""
SELECT handler_id, handler_group_id,
       count(*) FILTER (WHERE ticket_status IN ({_HELD})),
       count(*) FILTER (WHERE ticket_status = {_OFFERED} AND accepted_time IS NULL),
       count(*) FILTER (WHERE assigned_time >= %s)
FROM {_TICKETS} WHERE handler_id IS NOT NULL
GROUP BY handler_id, handler_group_id
"""
SUMMED_SQL = f"""
SELECT user_id, group_id, sum(active), sum(offers),
       COALESCE(sum(assigned) FILTER (WHERE since >= %s), 0)
FROM {_LOADS} GROUP BY user_id, group_id
"""
REBUILD_SQL = f"""
INSERT INTO {_LOADS} (user_id, group_id, since, active, offers, assigned)
SELECT handler_id, handler_group_id, %s, active, offers, assigned
FROM ({COUNTED_SQL}) counted (handler_id, handler_group_id, active, offers, assigned)
WHERE active > 0 OR assigned > 0
"""


def day_start(now: datetime) -> datetime:
    """The start of `now`'s day in the server's zone: what counts as assigned today."""
    return timezone.localtime(now).replace(hour=0, minute=0, second=0, microsecond=0)


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
        cursor.execute(
            f"SELECT COALESCE(s.user_id, c.handler_id), COALESCE(s.group_id, c.handler_group_id), "
            "COALESCE(s.active, 0), COALESCE(s.offers, 0), COALESCE(s.assigned, 0), "
            "COALESCE(c.active, 0), COALESCE(c.offers, 0), COALESCE(c.assigned, 0) "
            f"FROM ({SUMMED_SQL}) s (user_id, group_id, active, offers, assigned) "
            f"FULL JOIN ({COUNTED_SQL}) c (handler_id, handler_group_id, active, offers, assigned) "
            "ON c.handler_id = s.user_id "
            "AND c.handler_group_id IS NOT DISTINCT FROM s.group_id "
            "ORDER BY 1, 2 NULLS FIRST",
            [start, start],
        )
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
        cursor.execute(f"LOCK TABLE {_TICKETS} IN SHARE MODE")
        cursor.execute(f"DELETE FROM {_LOADS}")
        cursor.execute(REBUILD_SQL, [start, start])
        return cursor.rowcount
