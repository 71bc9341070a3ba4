"""The lists' statements on a large table (EXPLAIN, not timing): search finds tickets through
its trigram index, a cursor's page starts with an index condition (nothing before it read),
and a count reads at most EXACT_COUNT_LIMIT + 1 rows."""

import pytest
from django.db import connection

from config.pagination import keyset_of, planner_estimate
from tests.factories import HandlerGroupFactory, UserFactory
from tests.ticketing.test_query_plans import fill_tickets, plan
from ticketing import search
from ticketing.models import Ticket
from workflow.selectors import awaiting_approval_for, pool_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def large(db):
    member = UserFactory(username="member")
    groups = [HandlerGroupFactory(name=f"g{i}") for i in range(40)]
    groups[3].member_ids = [member.pk]
    groups[3].save()
    fill_tickets(200_000, member.pk, [g.pk for g in groups])
    return member


def test_search_by_a_word_uses_the_trigram_index(large):
    # A code only one ticket has: "BULK1234" is also in BULK12340-12349 and BULK112340…, and
    # when ANALYZE's sample happens to hold one of those the planner guesses 1 % of the table
    # and walks the primary key instead (a fresh-clone run saw it).
    found = plan(search.search(Ticket.objects.all(), "BULK123456").order_by("-id")[:20])
    assert "ticket_search_trgm_idx" in found, found
    assert "Seq Scan" not in found, found


def test_the_admins_search_with_people_is_one_bitmap_or_of_indexes(large):
    """A word that also names people: the tickets by title/code through the trigram index,
    those of the people through the creator and handler indexes, OR-ed as bitmaps."""
    UserFactory(username="bulk99.operator")
    qs = search.search(Ticket.objects.all(), "bulk99", people=("creator", "handler"))
    found = plan(qs)
    assert "ticket_search_trgm_idx" in found, found
    assert "ticket_creator_idx" in found and "on ticket_handler" in found, found
    assert "Seq Scan" not in found, found


def test_the_consoles_search_in_a_pool_uses_the_trigram_index(large):
    found = plan(pool_for(large, view="all", q="BULK4321")[:20])
    assert "ticket_search_trgm_idx" in found, found
    assert "Seq Scan" not in found, found


def test_a_cursor_page_starts_at_the_cursor_through_an_index(large):
    """Page 5,000 of "all" costs what page 2 does: the cursor is an index condition on the
    primary key, not an OFFSET that reads every row before it."""
    qs = pool_for(large, view="all")
    keyset = keyset_of(qs)
    assert keyset is not None
    deep = Ticket.objects.order_by("-id").values_list("pk", flat=True)[100_000]
    found = plan(keyset.after(qs, [deep])[:21])
    assert "Index Cond: (id < " in found, found
    assert "OFFSET" not in found.upper() and "Seq Scan" not in found, found


def test_the_approval_queue_pages_by_its_own_index(large):
    """The queue (oldest first) is read through the approvals index, the cursor included."""
    approver = UserFactory(username="boss", is_staff=True)
    qs = awaiting_approval_for(approver)
    assert "ticket_approvals_idx" in plan(qs[:21])
    oldest = qs.first()
    keyset = keyset_of(qs)
    found = plan(keyset.after(qs, keyset.position(oldest))[:21])
    assert "ticket_approvals_idx" in found and "Seq Scan" not in found, found


def test_a_count_reads_at_most_the_limit_and_estimates_beyond(large, settings):
    from config.pagination import count_rows

    settings.EXACT_COUNT_LIMIT = 1000
    qs = Ticket.objects.filter(process_status=2)
    bounded = plan(qs.order_by().values("pk")[:1001])
    assert "Limit" in bounded, bounded
    sql, params = qs.order_by().values("pk")[:1001].query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN ANALYZE SELECT COUNT(*) FROM ({sql}) s", params)
        analysed = "\n".join(row[0] for row in cursor.fetchall())
    assert "rows=1001 " in analysed, analysed  # read no more than it needed
    counted = count_rows(qs)
    assert counted.is_estimate
    exact = qs.count()
    assert 0.8 * exact <= counted.value <= 1.2 * exact
    assert counted.value == planner_estimate(qs)
