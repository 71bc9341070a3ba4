"""bench/scale_build.py: the scale bench's history is what the services would have written —
checked on a small build in the test database (the bench builds a million the same way)."""

from datetime import UTC, datetime

import pytest
from django.db import connection

from bench import scale, scale_build
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
    assert _count("SELECT count(*) FROM oa_ticket_record WHERE action = 'reply'") == replies
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
            "<> ARRAY['submit', 'approve', 'assign', 'accept', 'complete', 'close']::varchar[]"
        )
        == 0
    )
    # SLA events in each state, outcomes met and breached.
    states = {row[0] for row in _rows("SELECT DISTINCT state FROM oa_sla_event")}
    assert {"fired", "void"} <= states
    results = {row[0] for row in _rows("SELECT DISTINCT resolve_result FROM oa_sla_outcome")}
    assert results == {"met", "breached"}
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
