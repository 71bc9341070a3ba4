"""Queue metrics per group and hour or day (the call-centre indicators), in one SQL statement.

Definitions (each bucket is a local hour or day of the active time zone; `from`/`to` are
widened to whole buckets):

- arrivals: tickets approved in the bucket whose group at approval was this group. The group at
  approval is the `from_group_id` of the ticket's first move after approval (a transfer, an
  escalation's move or an overflow, from the audit trail), or its current group if it never
  moved. Candidates are the group's current tickets plus the tickets of its assignment events,
  so a ticket moved away before anyone in the group was assigned it is not found.
- assigned: the group's assignments in the bucket: its `assigned` assignment events
  (routing's), and the picks from its pool (a member taking a ticket that waits in the pool,
  pending assign: an `accept` record from that status, by its actor, which routing never
  sees). A pick counts for the group the ticket was in when it was picked: the
  `from_group_id` of its next move (transfer, escalation's move, overflow), or its current
  group if it has not moved since; candidates are the group's current tickets, so a ticket
  picked here and then moved away is not found.
- time to assignment p50/p95: approval → first assignment (the earliest `assigned` event of
  the ticket after approval, or the ticket's assigned_time if earlier, i.e. a pick from the
  pool or a transfer to a person) for the bucket's arrivals that have been assigned;
  interpolated percentiles (percentile_cont).
- time to accept p50/p95: first assignment → first acceptance (responded_time) for the
  bucket's arrivals that were accepted (a pick from the pool is accepted at once: 0 s).
- abandoned: the bucket's arrivals closed without ever being accepted (cancelling exists only
  before approval, so an approved ticket is abandoned by closing it while it still waits).
- service level: the share of the bucket's arrivals assigned within the group's
  target_answer_seconds of approval (abandoned and still-waiting arrivals count as missed);
  null without arrivals.
- agents: the group's members, and anyone else who got one of the group's assignments in the
  bucket: their assignments in the bucket, and `assigned_stddev` the population standard
  deviation of those counts.
- occupancy: per agent, the time in the bucket with at least one active ticket of theirs
  (any group; active as the insight issue defines it: from assignment to completion,
  assigned_time → completed_time, closed_time or now, whether accepted yet or not; a pick
  from the pool is assigned and accepted at once; overlaps counted once) divided by the
  time available in the bucket. For a group that routes by presence
  (requires_presence) that is the agent's presence history (PresenceSpan) in the states
  available and wrap-up, with busy time counted only while available
  (`occupancy_basis: "presence"`); for any other group, whose members need not keep presence,
  the whole bucket up to now (`occupancy_basis: "bucket"`). Null when nothing of the bucket
  was available (no presence recorded, a future bucket).
"""

import json
from datetime import datetime

from django.contrib.auth import get_user_model
from django.db import connection
from django.utils import timezone

from handler_groups.models import HandlerGroup
from routing.models import SPAN_ENDED_SQL, AssignmentEvent, PresenceSpan, PresenceState
from ticketing.models import WORKED_UNTIL_SQL, ProcessStatus, TicketStatus

BUCKETS = ("hour", "day")
# Presence states in which an agent counts as available for work (not offline, not on a break).
AVAILABLE_STATES = (PresenceState.AVAILABLE, PresenceState.WRAP_UP)


# The "available" CTE when the whole bucket counts as available.
NO_PRESENCE_SQL = "SELECT NULL::bigint AS user_id, NULL::tstzmultirange AS ranges WHERE false"


def _available_sql(group: HandlerGroup) -> tuple[str, str]:
    """The CTE giving each agent's available time as a multirange, and the basis's name: the
    presence history for a group that routes by presence, else the whole bucket (a group
    whose members do not keep presence has no history to read)."""
    model = PresenceSpan
    if not group.requires_presence:
        return NO_PRESENCE_SQL, "bucket"
    q = connection.ops.quote_name
    # Concrete fields (columns), not the relations' reverse sides get_field may also return.
    col = {f: q(model._meta.get_field(f).column) for f in ("user", "state", "started", "ended")}  # type: ignore[union-attr, arg-type]
    sql = (
        f"SELECT s.{col['user']} AS user_id, "
        f"range_agg(tstzrange(s.{col['started']}, "
        f"GREATEST(s.{col['started']}, COALESCE(s.{col['ended']}, %(now)s)))) AS ranges "
        f"FROM {q(model._meta.db_table)} s "
        f"WHERE s.{col['user']} = ANY(ARRAY(SELECT user_id FROM agent_ids)) "
        f"AND s.{col['state']} = ANY(%(available_states)s) "
        f"AND s.{col['started']} < %(hi)s "
        f"AND COALESCE(s.{col['ended']}, %(now)s) > %(lo)s "
        # Implied by the line above; the range of presence_span_user_end_idx that holds them.
        f"AND {SPAN_ENDED_SQL} > %(lo)s "
        f"GROUP BY 1"
    )
    return sql, "presence"


# The buckets: each local hour or day's start and stop (the next one's start).
BUCKETS_SQL = """
    SELECT start, stop FROM (
        SELECT start, lead(start) OVER (ORDER BY start) AS stop FROM (SERIES) series
    ) bounded
    WHERE start < %(to)s
"""
# The window the buckets cover, [lo, hi): read first, so that the statement below has its
# bounds as values and the planner sizes each index range by them (a bound it could only
# learn while running is planned as if it selected a third of the table).
WINDOW_SQL = "SELECT min(start), max(stop) FROM (BUCKETS_SQL) buckets"

# The buckets, the candidates and the arrivals with their figures' inputs (and tags): the head
# of QUERY, and of TAG_QUERY (the arrivals' figures per tag).
ARRIVALS_SQL = """
buckets AS (BUCKETS_SQL),
candidates AS (
    SELECT t.id FROM oa_ticket_bill t
    WHERE t.process_status = %(approved)s AND t.handler_group_id = %(group)s
      AND t.approved_time >= %(lo)s AND t.approved_time < %(hi)s
    UNION
    SELECT e.ticket_id FROM oa_assignment_event e
    WHERE e.group_id = %(group)s AND e.created >= %(lo)s
),
arrivals AS (
    SELECT date_trunc(%(unit)s, t.approved_time, %(tz)s) AS bucket,
           t.approved_time,
           LEAST(t.assigned_time, first_event.created) AS first_assigned,
           COALESCE(t.responded_time, t.accepted_time) AS accepted,
           t.closed_time, t.tags
    FROM candidates c
    -- Each candidate's ticket by its key (OFFSET 0 keeps the probe): the candidates are the
    -- window's, and the planner would otherwise match them against every ticket approved in
    -- the window, of any group, read from the table whole.
    CROSS JOIN LATERAL (
        SELECT t.id, t.approved_time, t.assigned_time, t.responded_time, t.accepted_time,
               t.closed_time, t.process_status, t.handler_group_id, t.tags
        FROM oa_ticket_bill t WHERE t.id = c.id OFFSET 0
    ) t
    LEFT JOIN LATERAL (
        SELECT true AS moved, (r.detail ->> 'from_group_id')::bigint AS group_id
        FROM oa_ticket_record r
        WHERE r.ticket_id = t.id AND r.action IN ('transfer', 'overflow')
          AND r.created >= t.approved_time
        ORDER BY r.id LIMIT 1
    ) first_move ON true
    LEFT JOIN LATERAL (
        SELECT min(e.created) AS created FROM oa_assignment_event e
        WHERE e.ticket_id = t.id AND e.kind = %(assigned)s AND e.created >= t.approved_time
    ) first_event ON true
    WHERE t.process_status = %(approved)s
      AND t.approved_time >= %(lo)s AND t.approved_time < %(hi)s
      AND CASE WHEN first_move.moved THEN first_move.group_id
               ELSE t.handler_group_id END = %(group)s
)
"""
# The figures of a set of arrivals (one bucket's, or one bucket's of one tag).
ARRIVAL_FIGURES = """
        count(*) AS arrivals,
        percentile_cont(0.5) WITHIN GROUP (
            ORDER BY extract(epoch FROM first_assigned - approved_time)
        ) FILTER (WHERE first_assigned IS NOT NULL) AS assign_p50,
        percentile_cont(0.95) WITHIN GROUP (
            ORDER BY extract(epoch FROM first_assigned - approved_time)
        ) FILTER (WHERE first_assigned IS NOT NULL) AS assign_p95,
        percentile_cont(0.5) WITHIN GROUP (
            ORDER BY extract(epoch FROM accepted - first_assigned)
        ) FILTER (WHERE accepted IS NOT NULL AND first_assigned IS NOT NULL) AS accept_p50,
        percentile_cont(0.95) WITHIN GROUP (
            ORDER BY extract(epoch FROM accepted - first_assigned)
        ) FILTER (WHERE accepted IS NOT NULL AND first_assigned IS NOT NULL) AS accept_p95,
        count(*) FILTER (WHERE closed_time IS NOT NULL AND accepted IS NULL) AS abandoned,
        count(*) FILTER (
            WHERE first_assigned <= approved_time + make_interval(secs => %(target)s)
        ) AS within_target
"""
QUERY = """
WITH
ARRIVALS_SQL,
arrival_figures AS (
    SELECT bucket, ARRIVAL_FIGURES
    FROM arrivals GROUP BY bucket
),
pool_picks AS (
    SELECT r.created, r.actor_id AS user_id
    FROM oa_ticket_bill t
    -- Each ticket's picks through its records by ticket (OFFSET 0 keeps the probe, rather
    -- than a hash join over every record of the table).
    CROSS JOIN LATERAL (
        SELECT r.id, r.created, r.actor_id FROM oa_ticket_record r
        WHERE r.ticket_id = t.id
          AND r.action = 'accept' AND r.from_status = %(pending_assign)s
          AND r.created >= %(lo)s AND r.created < %(hi)s
        OFFSET 0
    ) r
    LEFT JOIN LATERAL (
        SELECT (m.detail ->> 'from_group_id')::bigint AS group_id
        FROM oa_ticket_record m
        WHERE m.ticket_id = t.id AND m.action IN ('transfer', 'overflow') AND m.id > r.id
        ORDER BY m.id LIMIT 1
    ) next_move ON true
    WHERE t.process_status = %(approved)s AND t.handler_group_id = %(group)s
      AND t.approved_time < %(hi)s
      AND COALESCE(t.completed_time, t.closed_time, %(now)s) >= %(lo)s
      -- implied by the line above; the range of ticket_group_finished_idx that holds them
      AND WORKED_UNTIL >= %(lo)s
      AND COALESCE(next_move.group_id, t.handler_group_id) = %(group)s
),
assignments AS (
    SELECT date_trunc(%(unit)s, picks.created, %(tz)s) AS bucket, picks.user_id,
        count(*) AS n
    FROM (
        SELECT e.created, e.user_id FROM oa_assignment_event e
        WHERE e.group_id = %(group)s AND e.kind = %(assigned)s
          AND e.created >= %(lo)s AND e.created < %(hi)s
        UNION ALL
        SELECT created, user_id FROM pool_picks
    ) picks
    GROUP BY 1, 2
),
members AS (
    SELECT m.user_id, m.position FROM unnest(%(members)s::bigint[]) WITH ORDINALITY
        AS m(user_id, position)
),
agent_ids AS (
    SELECT user_id FROM members
    UNION SELECT user_id FROM assignments WHERE user_id IS NOT NULL
),
busy AS (
    SELECT t.handler_id AS user_id,
        range_agg(tstzrange(t.assigned_time,
            GREATEST(t.assigned_time, COALESCE(t.completed_time, t.closed_time, %(now)s))))
            AS ranges
    FROM oa_ticket_bill t
    WHERE t.handler_id = ANY(ARRAY(SELECT user_id FROM agent_ids))
      AND t.assigned_time < %(hi)s
      AND COALESCE(t.completed_time, t.closed_time, %(now)s) > %(lo)s
      -- implied by the line above; the range of ticket_handler_finished_idx that holds them
      AND WORKED_UNTIL > %(lo)s
    GROUP BY 1
),
available AS (AVAILABLE_SQL),
agent_buckets AS (
    SELECT b.start AS bucket, m.user_id, m.position FROM buckets b CROSS JOIN members m
    WHERE b.stop IS NOT NULL
    UNION
    SELECT a.bucket, a.user_id, NULL FROM assignments a
    WHERE a.user_id IS NOT NULL AND a.user_id NOT IN (SELECT user_id FROM members)
),
-- Per agent, once: the busy time that counts (within available time, for presence) and the
-- available time, over the whole window; each bucket then takes its slice. Read by scalar
-- subqueries, so the joins and sorts below carry numbers, not every agent's ranges.
agent_ranges AS (
    SELECT ids.user_id,
        CASE WHEN %(basis)s = 'presence'
             THEN COALESCE(bu.ranges, '{}'::tstzmultirange)
                  * COALESCE(av.ranges, '{}'::tstzmultirange)
             ELSE COALESCE(bu.ranges, '{}'::tstzmultirange) END AS busy,
        COALESCE(av.ranges, '{}'::tstzmultirange) AS available
    FROM agent_ids ids
    LEFT JOIN busy bu ON bu.user_id = ids.user_id
    LEFT JOIN available av ON av.user_id = ids.user_id
),
agent_figures AS (
    SELECT ab.bucket, ab.user_id, ab.position, u.username,
        COALESCE(a.n, 0) AS assigned,
        (SELECT sum(upper(r) - lower(r)) FROM unnest(
            COALESCE((SELECT x.busy FROM agent_ranges x WHERE x.user_id = ab.user_id),
                     '{}'::tstzmultirange) * span.ranges
        ) r) AS busy_time,
        (SELECT sum(upper(r) - lower(r)) FROM unnest(
            CASE WHEN %(basis)s = 'presence'
                 THEN COALESCE((SELECT x.available FROM agent_ranges x
                                WHERE x.user_id = ab.user_id), '{}'::tstzmultirange)
                      * span.ranges
                 ELSE span.ranges END
        ) r) AS available_time
    FROM agent_buckets ab
    JOIN buckets b ON b.start = ab.bucket
    LEFT JOIN USER_TABLE u ON u.id = ab.user_id
    LEFT JOIN assignments a ON a.bucket = ab.bucket AND a.user_id = ab.user_id
    CROSS JOIN LATERAL (
        SELECT tstzmultirange(tstzrange(b.start, GREATEST(b.start, LEAST(b.stop, %(now)s))))
            AS ranges
    ) span
),
agent_lists AS (
    SELECT bucket,
        json_agg(json_build_object(
            'user_id', user_id,
            'username', username,
            'assigned', assigned,
            'occupancy', CASE WHEN available_time > interval '0' THEN round(
                (extract(epoch FROM COALESCE(busy_time, interval '0'))
                 / extract(epoch FROM available_time))::numeric,
                4) END
        ) ORDER BY position NULLS LAST, user_id) AS agents,
        stddev_pop(assigned) AS assigned_stddev
    FROM agent_figures GROUP BY bucket
)
SELECT b.start,
    COALESCE(f.arrivals, 0),
    COALESCE((SELECT sum(n) FROM assignments a WHERE a.bucket = b.start), 0),
    f.assign_p50, f.assign_p95, f.accept_p50, f.accept_p95,
    COALESCE(f.abandoned, 0),
    f.within_target::float / NULLIF(f.arrivals, 0),
    COALESCE(l.agents, '[]'::json),
    l.assigned_stddev
FROM buckets b
LEFT JOIN arrival_figures f ON f.bucket = b.start
LEFT JOIN agent_lists l ON l.bucket = b.start
ORDER BY b.start
"""
# The arrivals' figures per bucket and tag (`?group_by=tag`): a ticket with two tags counts
# under both, one without tags under the null tag. Assignments and occupancy are the agents'
# and are not split.
TAG_QUERY = """
WITH
ARRIVALS_SQL
SELECT bucket, tagged.tag, ARRIVAL_FIGURES
FROM arrivals LEFT JOIN LATERAL unnest(arrivals.tags) AS tagged(tag) ON true
GROUP BY bucket, tagged.tag
ORDER BY bucket, tagged.tag NULLS LAST
"""
# The buckets' starts, one past the last: local hours (absolute hours from a local hour's
# start, so a daylight-saving change keeps every hour), or local days (23 or 25 hours long
# across a change).
SERIES = {
    "hour": "SELECT s AS start FROM generate_series("
    "date_trunc('hour', %(from)s::timestamptz, %(tz)s), "
    "%(to)s::timestamptz + interval '1 hour', interval '1 hour') s",
    "day": "SELECT s AT TIME ZONE %(tz)s AS start FROM generate_series("
    "date_trunc('day', %(from)s::timestamptz, %(tz)s) AT TIME ZONE %(tz)s, "
    "(%(to)s::timestamptz AT TIME ZONE %(tz)s) + interval '1 day', interval '1 day') s",
}


def _ratio(value) -> float | None:
    return None if value is None else round(float(value), 4)


def _seconds(value) -> float | None:
    return None if value is None else round(float(value), 3)


def queue_figures_statement(
    *, group: HandlerGroup, date_from: datetime, date_to: datetime, bucket: str
) -> tuple[str, dict, str]:
    """The statement computing the figures, its parameters and the occupancy basis (reads the
    window's bounds first: one small statement)."""
    available_sql, basis = _available_sql(group)
    buckets = BUCKETS_SQL.replace("SERIES", SERIES[bucket])
    sql = (
        QUERY.replace("ARRIVALS_SQL", ARRIVALS_SQL)
        .replace("ARRIVAL_FIGURES", ARRIVAL_FIGURES)
        .replace("BUCKETS_SQL", buckets)
        .replace("AVAILABLE_SQL", available_sql)
        .replace("USER_TABLE", connection.ops.quote_name(get_user_model()._meta.db_table))
        .replace("WORKED_UNTIL", WORKED_UNTIL_SQL)
    )
    tz = timezone.get_current_timezone_name()
    with connection.cursor() as cursor:
        cursor.execute(
            WINDOW_SQL.replace("BUCKETS_SQL", buckets),
            {"unit": bucket, "tz": tz, "from": date_from, "to": date_to},
        )
        lo, hi = cursor.fetchone()
    params = {
        "lo": lo,
        "hi": hi,
        "unit": bucket,
        "tz": tz,
        "from": date_from,
        "to": date_to,
        "group": group.pk,
        "members": group.member_ids,
        "approved": int(ProcessStatus.APPROVED),
        "pending_assign": int(TicketStatus.PENDING_ASSIGN),
        "assigned": str(AssignmentEvent.Kind.ASSIGNED),
        "target": group.target_answer_seconds,
        "now": timezone.now(),
        "basis": basis,
        "available_states": [str(state) for state in AVAILABLE_STATES],
    }
    return sql, params, basis


def tag_figures_statement(bucket: str) -> str:
    """TAG_QUERY for buckets of `bucket`, taking queue_figures_statement's parameters."""
    return (
        TAG_QUERY.replace("ARRIVALS_SQL", ARRIVALS_SQL)
        .replace("ARRIVAL_FIGURES", ARRIVAL_FIGURES)
        .replace("BUCKETS_SQL", BUCKETS_SQL.replace("SERIES", SERIES[bucket]))
    )


def _arrival_figures(arrivals, a50, a95, c50, c95, abandoned, within) -> dict:
    return {
        "arrivals": arrivals,
        "time_to_assign_p50_seconds": _seconds(a50),
        "time_to_assign_p95_seconds": _seconds(a95),
        "time_to_accept_p50_seconds": _seconds(c50),
        "time_to_accept_p95_seconds": _seconds(c95),
        "abandoned": abandoned,
        "service_level": _ratio(within / arrivals if arrivals else None),
    }


def queue_figures(
    *,
    group: HandlerGroup,
    date_from: datetime,
    date_to: datetime,
    bucket: str,
    group_by: str | None = None,
) -> dict:
    """Per bucket of `bucket` ("hour" or "day") from the bucket holding `date_from` to the one
    holding the instant before `date_to`; see the module's docstring for the definitions.
    group_by="tag": each bucket also has `by_tag`, its arrivals' figures per tag (TAG_QUERY,
    one statement more; a ticket with two tags counts under both, one without under null)."""
    sql, params, basis = queue_figures_statement(
        group=group, date_from=date_from, date_to=date_to, bucket=bucket
    )
    by_tag: dict = {}
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
        if group_by == "tag":
            cursor.execute(tag_figures_statement(bucket), params)
            for start, tag, *figures in cursor.fetchall():
                by_tag.setdefault(start, []).append({"tag": tag, **_arrival_figures(*figures)})
    buckets = []
    for start, arrivals, assigned, a50, a95, c50, c95, abandoned, sl, agents, std in rows:
        if isinstance(agents, str):  # json, not jsonb: the driver may hand over the text
            agents = json.loads(agents)
        buckets.append(
            {
                "start": timezone.localtime(start).isoformat(),
                "arrivals": arrivals,
                "assigned": int(assigned),
                "time_to_assign_p50_seconds": _seconds(a50),
                "time_to_assign_p95_seconds": _seconds(a95),
                "time_to_accept_p50_seconds": _seconds(c50),
                "time_to_accept_p95_seconds": _seconds(c95),
                "abandoned": abandoned,
                "service_level": _ratio(sl),
                "agents": [{**agent, "occupancy": _ratio(agent["occupancy"])} for agent in agents],
                "assigned_stddev": _ratio(std),
                **({"by_tag": by_tag.get(start, [])} if group_by == "tag" else {}),
            }
        )
    return {
        "group": group.pk,
        "bucket": bucket,
        "target_answer_seconds": group.target_answer_seconds,
        "occupancy_basis": basis,
        "buckets": buckets,
    }
