"""bench/scale_build.py: the scale bench's history is what the services would have written —
checked on a small build in the test database (the bench builds a million the same way)."""

from datetime import UTC, datetime

import pytest
from django.db import connection
from django.db.models import F, Q

from bench import scale, scale_build
from collaboration.models import TicketLink, Watcher
from satisfaction.models import Survey
from ticketing.models import ProcessStatus, Ticket, TicketReply, TicketStatus

NOW = datetime(2026, 11, 30, 15, 0, tzinfo=UTC)
TABLES = [*scale_build.TABLES, "auth_user", "oa_agent_presence", "oa_handler_load"]


def _indexes() -> set[tuple[str, str]]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = ANY(%s)", [TABLES]
        )
        return set(cursor.fetchall())


def _count(sql: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(sql)
        return cursor.fetchone()[0]


@pytest.fixture
def built(db):
    before = _indexes()
    from django.contrib.auth.hashers import make_password

    summary = scale_build.build(
        tickets=2000,
        now=NOW,
        days=30,
        seed=5,
        password_hash=make_password(scale_build.PASSWORD),  # the test settings' hasher
    )
    return summary, before


def test_the_history_holds_what_a_desk_holds(built, client):
    summary, indexes_before = built
    # The indexes and constraints dropped for the load are back, exactly as migrated.
    assert _indexes() == indexes_before
    assert Ticket.objects.count() == 2000 == summary.tickets
    assert summary.rows["oa_ticket_bill"] == 2000

    # Statuses a desk has: most closed, some rejected, and the open states.
    by_status = Counter_of(Ticket.objects.values_list("process_status", "ticket_status"))
    closed = by_status[(ProcessStatus.APPROVED, TicketStatus.CLOSED)]
    assert closed > 0.8 * 2000
    assert by_status[(ProcessStatus.REJECTED, TicketStatus.SUBMITTED)] > 0
    open_ = sum(
        n
        for (process, status), n in by_status.items()
        if process == ProcessStatus.APPROVING
        or status in (TicketStatus.PENDING_ASSIGN, TicketStatus.PENDING_PROCESS)
        or status == TicketStatus.PROCESSING
    )
    assert 0 < open_ < 0.2 * 2000
    assert summary.states["closed"] == closed

    # ~5 replies per handled ticket, the counters matching the rows, some internal.
    handled = Ticket.objects.filter(accepted_time__isnull=False)
    replies = TicketReply.objects.count()
    assert 4 <= replies / handled.count() <= 7
    assert (
        _count(
            "SELECT count(*) FROM oa_ticket_bill t WHERE reply_count <> "
            "(SELECT count(*) FROM oa_ticket_reply r WHERE r.ticket_id = t.id) "
            "OR public_reply_count <> "
            "(SELECT count(*) FROM oa_ticket_reply r WHERE r.ticket_id = t.id AND reply_type = 1)"
        )
        == 0
    )
    assert TicketReply.objects.filter(reply_type=2).count() > 0.05 * replies
    # Every reply has its audit record, every closed ticket its SLA outcome and the records
    # of its life in order.
    # (a merged duplicate's description is a reply on its target without a `reply` record)
    merged = Ticket.objects.filter(merged_into__isnull=False).count()
    assert _count("SELECT count(*) FROM oa_ticket_record WHERE action = 'reply'") == (
        replies - merged
    )
    assert (
        _count(
            "SELECT count(*) FROM oa_ticket_bill t WHERE ticket_status = 5 AND NOT EXISTS "
            "(SELECT 1 FROM oa_sla_outcome o WHERE o.ticket_id = t.id)"
        )
        == 0
    )
    assert (
        _count(
            "SELECT count(*) FROM oa_ticket_bill t WHERE ticket_status = 5 AND "
            "(SELECT array_agg(action ORDER BY created, id) FILTER (WHERE action IN "
            "('submit', 'approve', 'assign', 'accept', 'complete', 'close')) "
            "FROM oa_ticket_record r WHERE r.ticket_id = t.id) "
            "<> ARRAY['submit', 'approve', 'assign', 'accept', 'complete', 'close']::varchar[] "
            "AND merged_into_id IS NULL"
        )
        == 0
    )
    # SLA events in each state, outcomes met and breached, and merged for the duplicates.
    states = {row[0] for row in _rows("SELECT DISTINCT state FROM oa_sla_event")}
    assert {"fired", "void"} <= states
    results = {row[0] for row in _rows("SELECT DISTINCT resolve_result FROM oa_sla_outcome")}
    assert results == {"met", "breached", "merged"}

    # Merged duplicates (~0.5 % of closed tickets): closed unfinished by a `merge`, into an
    # open ticket of their group and period that is not merged itself; their conversation
    # (and description) on the target, their own counts zero, their clocks `merged`.
    assert 0 < merged < 0.02 * closed
    assert (
        _count(
            "SELECT count(*) FROM oa_ticket_bill t "
            "JOIN oa_ticket_bill x ON x.id = t.merged_into_id "
            "WHERE t.ticket_status <> 5 OR t.completed_time IS NOT NULL OR t.reply_count <> 0 "
            "OR x.merged_into_id IS NOT NULL OR x.handler_group_id <> t.handler_group_id "
            "OR x.submitted_time > t.submitted_time OR x.closed_time <= t.closed_time "
            "OR NOT EXISTS (SELECT 1 FROM oa_sla_outcome o WHERE o.ticket_id = t.id "
            "AND o.response_result = 'merged' AND o.resolve_result = 'merged') "
            "OR (SELECT array_agg(action ORDER BY created, id) FILTER (WHERE action IN "
            "('submit', 'approve', 'assign', 'accept', 'complete', 'close', 'merge')) "
            "FROM oa_ticket_record r WHERE r.ticket_id = t.id) "
            "<> ARRAY['submit', 'approve', 'assign', 'accept', 'merge']::varchar[] "
            "OR NOT EXISTS (SELECT 1 FROM oa_ticket_reply r WHERE r.ticket_id = x.id "
            "AND r.merged_from_id = t.id)"
        )
        == 0
    )
    assert _count("SELECT count(*) FROM oa_sla_outcome WHERE resolve_result = 'merged'") == merged

    # A survey for every completed ticket and none other, rating who completed it; ~35 %
    # answered before they expire, mostly 4-5, a few 1-2.
    completed = Ticket.objects.filter(completed_time__isnull=False)
    assert Survey.objects.count() == completed.count()
    assert (
        _count(
            "SELECT count(*) FROM oa_ticket_survey s JOIN oa_ticket_bill t ON t.id = s.ticket_id "
            "WHERE t.completed_time IS NULL OR s.asked <> t.completed_time "
            "OR s.expires <> s.asked + interval '14 days' OR s.applicant_id <> t.creator_id "
            "OR s.handler_id IS DISTINCT FROM t.handler_id "
            "OR s.handler_group_id IS DISTINCT FROM t.handler_group_id "
            "OR s.answered NOT BETWEEN s.asked AND s.expires"
        )
        == 0
    )
    answered = Survey.objects.filter(rating__isnull=False)
    assert 0.2 < answered.count() / Survey.objects.count() < 0.45
    assert answered.filter(rating__gte=4).count() > 0.65 * answered.count()
    assert 0 < answered.filter(rating__lte=2).count() < 0.2 * answered.count()
    assert _count("SELECT count(*) FROM oa_ticket_record WHERE action = 'rated'") == (
        answered.count()
    )

    # Watchers on ~5 % of tickets, never the applicant; each with its record.
    watched = Watcher.objects.values("ticket").distinct().count()
    assert 0.02 * 2000 < watched < 0.1 * 2000
    assert not Watcher.objects.filter(user=F("ticket__creator")).exists()
    assert {w.source for w in Watcher.objects.all()} <= {"team", "cc", "merge"}
    assert _count("SELECT count(*) FROM oa_ticket_record WHERE action = 'watcher_added'") == (
        Watcher.objects.count()
    )

    # Links: children and related pairs of the same period, at most one parent per child
    # (the unique index is back), related stored smaller id first, no cycle, no merged ticket.
    children = TicketLink.objects.filter(kind="parent")
    assert 0.01 * 2000 < children.count() < 0.04 * 2000
    assert TicketLink.objects.filter(kind="related").exists()
    assert not TicketLink.objects.filter(kind="related", source__gte=F("target")).exists()
    assert children.values("source").distinct().count() == children.count()
    assert not TicketLink.objects.filter(
        Q(source__merged_into__isnull=False) | Q(target__merged_into__isnull=False)
    ).exists()
    assert (
        _count(
            "WITH RECURSIVE up(start, id, depth) AS ("
            "SELECT source_id, target_id, 1 FROM oa_ticket_link WHERE kind = 'parent' "
            "UNION ALL SELECT up.start, l.target_id, up.depth + 1 FROM up "
            "JOIN oa_ticket_link l ON l.source_id = up.id AND l.kind = 'parent' "
            "WHERE up.depth < 50) "
            "SELECT count(*) FROM up WHERE id = start OR depth >= 50"
        )
        == 0
    )
    assert _count("SELECT count(*) FROM oa_ticket_record WHERE action = 'link_added'") == (
        2 * TicketLink.objects.count()
    )
    # Nothing refers to a row that is not there (the load ran with the FK triggers off).
    assert {name: n for name, n in scale_build.orphans().items() if n} == {}
    # Notifications, some read; presence spans with one open span per agent.
    assert _count("SELECT count(*) FROM oa_notification WHERE read_at IS NOT NULL") > 0
    assert _count("SELECT count(*) FROM oa_notification WHERE read_at IS NULL") > 0
    assert _count("SELECT count(*) FROM oa_presence_span WHERE ended IS NULL") == 500
    # The loads the triggers keep, recounted: they match the tickets.
    from routing.loads import mismatches

    assert not mismatches(now=NOW)

    # The ticket with 200 replies is a page its handler reads, logged in as the bench logs
    # in (the login form, the bench's password).
    ticket = Ticket.objects.get(pk=summary.showcase_ticket)
    assert ticket.reply_count == 200 == ticket.replies.count()
    assert ticket.ticket_status == TicketStatus.PROCESSING
    # … with a few watchers, a parent, and three children.
    assert ticket.watchers.count() == 3
    assert ticket.links_out.filter(kind="parent").count() == 1
    assert ticket.links_in.filter(kind="parent").count() == 3
    response = client.post(
        "/accounts/login/",
        {"username": ticket.handler.username, "password": scale_build.PASSWORD},
    )
    assert response.status_code == 302
    response = client.get(f"/console/tickets/{ticket.pk}/")
    assert response.status_code == 200
    assert ticket.bill_code in response.content.decode()


def test_the_table_marks_targets_met_or_not():
    calls = [
        scale.Call(
            "pool all, page 100", "agent", "/console/?view=all&page=100", False, "page", True
        ),
        scale.Call("SLA report API, 30 days", "leader", "/api/sla/report/", True, "report"),
    ]
    results = {
        100_000: {
            "pool all, page 100": {"p50": 40, "p95": 50, "status": [200]},
            "SLA report API, 30 days": {"p50": 100, "p95": 200, "status": [200]},
        },
        1_000_000: {
            "pool all, page 100": {"p50": 60, "p95": 90, "status": [200]},
            "SLA report API, 30 days": {"p50": 300, "p95": 400, "status": [200]},
        },
    }
    text = scale.table([100_000, 1_000_000], results, calls)
    pool, report = text.splitlines()[2:]
    # p95 90 ms < 100 ms but 1.8× the 100k figure: a paginated page must grow ≤ 1.5×.
    assert "1.80×" in pool and "NOT met" in pool
    # A report: < 500 ms, growth not a target.
    assert "2.00×" in report and "| met" in report


def Counter_of(pairs):
    from collections import Counter

    return Counter(pairs)


def _rows(sql: str) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql)
        return cursor.fetchall()
