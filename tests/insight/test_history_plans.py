"""The supervisors' reads at two years of history: every statement behind the supervisor page
(a leader's and staff's), its live part, queue metrics for 30 days by hour, staffing for a day,
the SLA page and the SLA report (and its CSV) for 30 days reads the window asked about, or
what is open now, through indexes — none reads a history table whole (EXPLAIN of each
statement a real request ran, not time). bench/scale.py measures the same pages on a
million tickets."""

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from handler_groups.models import HandlerGroup
from routing.models import AssignmentEvent, PresenceSpan
from sla.models import SlaEvent, SlaOutcome
from tests.factories import HandlerGroupFactory, StaffFactory, UserFactory
from ticketing.models import Ticket, TicketRecord

pytestmark = pytest.mark.django_db

HISTORY_TABLES = (
    "oa_ticket_bill",
    "oa_ticket_record",
    "oa_assignment_event",
    "oa_presence_span",
    "oa_sla_outcome",
    "oa_sla_event",
)
TICKETS = 60_000
GROUPS = 10
AGENTS_PER_GROUP = 5
DAYS = 730


@pytest.fixture(scope="module")
def history(django_db_setup, django_db_blocker):
    """Built once for the module (committed; removed at its end): 60,000 tickets over two
    years in 10 presence-routed groups of 5 agents (so each group's history is 6,000
    tickets, each agent's 1,200: a 30-day window is 1/24 of it), all completed but the
    last 40
    (open: a few in the pool, the rest being worked); each with its approval, acceptance
    (one in five a pick from the pool) and completion records, its assignment event, its SLA
    outcome and two SLA levels (fired, or pending for the open); every agent available from
    08:00 to 16:00 and offline otherwise, every day, the last span still open."""
    with django_db_blocker.unblock():
        data = _build_history()
        try:
            yield data
        finally:
            _remove_history(data)


def _build_history() -> dict:
    now = timezone.now()
    leader = UserFactory(username="hp_leader")
    agents = [UserFactory(username=f"hp_agent{i}") for i in range(GROUPS * AGENTS_PER_GROUP)]
    groups = [
        HandlerGroupFactory(
            name=f"hp_group{g}",
            leader=leader if g == 3 else None,
            members=agents[g * AGENTS_PER_GROUP : (g + 1) * AGENTS_PER_GROUP],
            requires_presence=True,
        )
        for g in range(GROUPS)
    ]
    creator = UserFactory(username="hp_customer")
    params = {
        "creator": creator.pk,
        "groups": [g.pk for g in groups],
        "agents": [a.pk for a in agents],
        "n": TICKETS,
        "per_group": AGENTS_PER_GROUP,
        "group_count": GROUPS,
        "start": now - timedelta(days=DAYS),
        "step": timedelta(days=DAYS) / TICKETS,
        "now": now,
    }
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO oa_ticket_bill (bill_code, title, content, priority, category,
                creator_id, handler_group_id, handler_id, process_status, ticket_status,
                submitted_time, approved_time, assigned_time, accepted_time, responded_time,
                completed_time, closed_time, response_timeout, resolve_timeout, reply_count,
                response_warned, resolve_warned, sla_paused)
            SELECT 'H' || i, 't', 'c', 1 + i %% 4, 'c' || i %% 3, %(creator)s,
                   (%(groups)s::bigint[])[1 + i %% %(group_count)s],
                   CASE WHEN open AND i %% 4 = 0 THEN NULL
                        ELSE (%(agents)s::bigint[])[1 + (i %% %(group_count)s) * %(per_group)s
                                                   + (i / %(group_count)s) %% %(per_group)s] END,
                   2,
                   CASE WHEN NOT open THEN 5 WHEN i %% 4 = 0 THEN 1 ELSE 3 END,
                   at, at, CASE WHEN open AND i %% 4 = 0 THEN NULL ELSE at + interval '1 min' END,
                   CASE WHEN open THEN NULL ELSE at + interval '3 min' END,
                   CASE WHEN open THEN NULL ELSE at + interval '3 min' END,
                   CASE WHEN open THEN NULL ELSE at + interval '1 hour' END,
                   CASE WHEN open THEN NULL ELSE at + interval '2 hours' END,
                   false, false, 0, false, false, false
            FROM generate_series(1, %(n)s) AS i,
                 LATERAL (SELECT %(start)s::timestamptz + i * %(step)s::interval AS at,
                                 i > %(n)s - 40 AS open) AS t
            """,
            params,
        )
        # Before rows that refer to them: the foreign keys' checks (deferred to the commit)
        # are planned from the statistics, and a connection that planned them while the
        # table was small would check every row by a sequential scan of 60,000 tickets.
        cursor.execute("ANALYZE oa_ticket_bill")
        cursor.execute(
            """
            INSERT INTO oa_ticket_record (ticket_id, actor_id, action, from_status, to_status,
                created, detail)
            SELECT t.id, t.handler_id, r.action, r.from_status, r.to_status,
                   t.approved_time + r.after, '{}'::jsonb
            FROM oa_ticket_bill t
            CROSS JOIN LATERAL (VALUES
                ('approve', 0, 1, interval '0'),
                ('accept', CASE WHEN t.id %% 5 = 0 THEN 1 ELSE 2 END, 3, interval '3 min'),
                ('complete', 3, 4, interval '1 hour')) AS r(action, from_status, to_status, after)
            WHERE t.bill_code LIKE 'H%%' AND t.handler_id IS NOT NULL
              AND (t.completed_time IS NOT NULL OR r.action <> 'complete')
            """,
            params,
        )
        cursor.execute(
            """
            INSERT INTO oa_assignment_event (group_id, ticket_id, user_id, kind, strategy,
                overflowed, reclaimed, created, notified)
            SELECT t.handler_group_id, t.id, t.handler_id, 'assigned', 1, false, false,
                   t.assigned_time, true
            FROM oa_ticket_bill t WHERE t.bill_code LIKE 'H%%' AND t.assigned_time IS NOT NULL
            """,
            params,
        )
        cursor.execute(
            """
            INSERT INTO oa_sla_outcome (ticket_id, response_minutes, resolve_minutes,
                response_met, resolve_met, response_result, resolve_result,
                closed_before_completion, completed_time)
            SELECT t.id, 3, 60, true, t.id %% 7 <> 0, 'met',
                   CASE WHEN t.id %% 7 = 0 THEN 'breached' ELSE 'met' END, false,
                   t.completed_time
            FROM oa_ticket_bill t
            WHERE t.bill_code LIKE 'H%%' AND t.completed_time IS NOT NULL
            """,
            params,
        )
        cursor.execute(
            """
            INSERT INTO oa_sla_event (ticket_id, clock, level, due_at, state, fired_at)
            SELECT t.id, 'resolve', l.level, t.approved_time + l.level * interval '1 hour',
                   CASE WHEN t.completed_time IS NULL THEN 'pending' ELSE 'fired' END,
                   CASE WHEN t.completed_time IS NULL THEN NULL
                        ELSE t.approved_time + l.level * interval '1 hour' END
            FROM oa_ticket_bill t CROSS JOIN (VALUES (1), (2)) AS l(level)
            WHERE t.bill_code LIKE 'H%%'
            """,
            params,
        )
        cursor.execute(
            """
            INSERT INTO oa_presence_span (user_id, state, started, ended)
            SELECT a.user_id, s.state, d.day + s.since,
                   CASE WHEN d.day + s.until > %(now)s THEN NULL ELSE d.day + s.until END
            FROM unnest(%(agents)s::bigint[]) AS a(user_id)
            CROSS JOIN generate_series(date_trunc('day', %(start)s::timestamptz),
                                       %(now)s, interval '1 day') AS d(day)
            CROSS JOIN (VALUES ('offline', interval '0', interval '8 hours'),
                               ('available', interval '8 hours', interval '16 hours'),
                               ('offline', interval '16 hours', interval '24 hours'))
                AS s(state, since, until)
            WHERE d.day + s.since <= %(now)s
            """,
            params,
        )
        cursor.execute(
            "ANALYZE oa_ticket_bill, oa_ticket_record, oa_assignment_event, oa_presence_span,"
            " oa_sla_outcome, oa_sla_event"
        )
    return {
        "now": now,
        "group": groups[3],
        "groups": groups,
        "leader": leader,
        "staff": StaffFactory(),
        "users": [leader, creator, *agents],
    }


def _remove_history(data: dict) -> None:
    users = [u.pk for u in data["users"]] + [data["staff"].pk]
    tickets = Ticket.objects.filter(bill_code__startswith="H", creator_id__in=users)
    SlaEvent.objects.filter(ticket__in=tickets).delete()
    SlaOutcome.objects.filter(ticket__in=tickets).delete()
    AssignmentEvent.objects.filter(ticket__in=tickets).delete()
    TicketRecord.objects.filter(ticket__in=tickets).delete()
    tickets.delete()
    PresenceSpan.objects.filter(user_id__in=users).delete()
    HandlerGroup.objects.filter(pk__in=[g.pk for g in data["groups"]]).delete()
    get_user_model().objects.filter(pk__in=users).delete()


def _plans(queries) -> list[tuple[str, str]]:
    """(statement, plan) for each read of a history table the request ran."""
    found = []
    with connection.cursor() as cursor:
        for query in queries:
            sql = query["sql"]
            if not sql.lstrip().upper().startswith(("SELECT", "WITH")):
                continue
            if not any(table in sql for table in HISTORY_TABLES):
                continue
            cursor.execute("EXPLAIN " + sql)
            found.append((sql, "\n".join(row[0] for row in cursor.fetchall())))
    return found


def _requested(client, history, who: str, path: str, params: dict) -> list[tuple[str, str]]:
    user = history[who]
    client.force_login(user)
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(path, params)
    assert response.status_code == 200, response.content[:500]
    plans = _plans(ctx.captured_queries)
    assert plans, "the request read no history table"
    for sql, plan in plans:
        for table in HISTORY_TABLES:
            assert f"Seq Scan on {table}" not in plan, (sql, plan)
    return plans


def _days(history, days: int) -> dict:
    today = timezone.localdate(history["now"])
    return {"from": (today - timedelta(days=days - 1)).isoformat(), "to": today.isoformat()}


@pytest.mark.parametrize("who", ["leader", "staff"])
def test_the_supervisor_page_and_its_live_part_read_what_is_open_and_today(client, history, who):
    everything = "\n".join(plan for _, plan in _requested(client, history, who, URL_SUPERVISOR, {}))
    # Staffing's forecast, by the group's approvals in 4 weeks. (Its handle time reads
    # ticket_group_finished_idx at a million tickets; a group of 6,000 the planner may read by
    # another index — no table is read whole either way, as asserted for every statement.)
    assert "ticket_group_approved_idx" in everything, everything
    live = _requested(client, history, who, URL_SUPERVISOR, {"part": "live"})
    # The agents' active tickets, found by status, not all they ever handled.
    (active,) = [plan for sql, plan in live if 'AS "n" FROM "oa_ticket_bill"' in sql]
    assert "Index Cond" in active and "ticket_status = ANY" in active, active


URL_SUPERVISOR = "/console/supervisor/"


def test_queue_metrics_for_30_days_by_hour_read_the_window(client, history):
    group = history["group"]
    today = timezone.localdate(history["now"])
    plans = _requested(
        client,
        history,
        "staff",
        "/api/metrics/queue/",
        {
            "group": group.pk,
            "bucket": "hour",
            "from": (today - timedelta(days=30)).isoformat() + "T00:00:00Z",
            "to": today.isoformat() + "T00:00:00Z",
        },
    )
    everything = "\n".join(plan for _, plan in plans)
    # Arrivals by approval time; pool picks and occupancy by the tickets finished since the
    # window began (or still open); availability by the spans ended since then (or open).
    for index in (
        "ticket_group_approved_idx",
        "ticket_handler_finished_idx",
        "presence_span_user_end_idx",
        "assignment_event_group_idx",
    ):
        assert index in everything, f"{index} not in:\n{everything}"


def test_staffing_for_a_day_reads_four_weeks_and_the_day(client, history):
    plans = _requested(
        client,
        history,
        "leader",
        "/api/staffing/",
        {"group": history["group"].pk, "date": timezone.localdate(history["now"]).isoformat()},
    )
    everything = "\n".join(plan for _, plan in plans)
    for index in (
        "ticket_group_approved_idx",
        "presence_span_user_end_idx",
    ):
        assert index in everything, f"{index} not in:\n{everything}"


@pytest.mark.parametrize("who", ["leader", "staff"])
def test_the_sla_page_for_30_days_reads_the_window(client, history, who):
    plans = _requested(client, history, who, "/console/sla/", _days(history, 30))
    # The window's outcomes by time, and for a leader each one's ticket by its key.
    assert any("sla_outcome_time_idx" in plan for _, plan in plans), plans


@pytest.mark.parametrize("who", ["leader", "staff"])
@pytest.mark.parametrize("output", ["json", "csv"])
def test_the_sla_report_for_30_days_reads_the_window(client, history, who, output):
    params = {**_days(history, 30), "group_by": "handler_group"}
    if output == "csv":
        params["format"] = "csv"
    plans = _requested(client, history, who, "/api/sla/report/", params)
    (report,) = [plan for sql, plan in plans if "percentile_cont" in sql]
    assert "sla_outcome_time_idx" in report and "oa_ticket_bill_pkey" in report, report
