"""The links' statements at a large desk's size use their indexes (EXPLAIN, not timing): a
ticket's links from both sides, what was merged into it, a parent's open children, and the
cycle check's walk up the parents (ANCESTORS_SQL), which also answers right on that table."""

import pytest
from django.db import connection
from django.db.models import Q
from django.test.utils import CaptureQueriesContext

from collaboration.models import LinkKind, TicketLink
from collaboration.services.links import _ancestors_sql, would_cycle
from tests.factories import UserFactory
from tests.ticketing.test_query_plans import fill_tickets, plan
from ticketing.models import Ticket
from workflow.services import open_children

pytestmark = pytest.mark.django_db

TICKETS = 30_000


@pytest.fixture
def desk():
    """Chains of ten tickets, each the parent of the next (so a walk up is nine steps), and
    a related pair for every seventh ticket."""
    user = UserFactory(username="linker")
    fill_tickets(TICKETS, user.pk, [])
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO oa_ticket_link (source_id, target_id, kind, created)
            SELECT t.id, t.id - 1, 'parent', now() FROM oa_ticket_bill t
            WHERE t.id % 10 <> 1 AND EXISTS (SELECT 1 FROM oa_ticket_bill p WHERE p.id = t.id - 1)
            UNION ALL
            SELECT t.id, t.id + 3, 'related', now() FROM oa_ticket_bill t
            WHERE t.id % 7 = 0 AND EXISTS (SELECT 1 FROM oa_ticket_bill r WHERE r.id = t.id + 3)
            """
        )
        cursor.execute("ANALYZE oa_ticket_link")
    first = Ticket.objects.order_by("pk").values_list("pk", flat=True)[15_000]
    return first - (first % 10) + 1  # the top of a chain


def test_a_tickets_links_use_both_indexes(desk):
    found = plan(TicketLink.objects.filter(Q(source_id=desk + 4) | Q(target_id=desk + 4)))
    assert "link_source_target_key" in found and "link_target_idx" in found, found
    assert "Seq Scan" not in found, found


def test_what_was_merged_into_a_ticket_uses_its_index(desk):
    found = plan(Ticket.objects.filter(merged_into_id=desk))
    assert "ticket_merged_into_idx" in found, found


def test_a_parents_open_children_use_the_target_index(desk):
    with CaptureQueriesContext(connection) as captured:
        assert len(open_children(desk)) <= 1
    sql = captured.captured_queries[-1]["sql"]
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN " + sql)
        found = "\n".join(row[0] for row in cursor.fetchall())
    assert "link_target_idx" in found or "link_source_target_key" in found, found
    assert "Seq Scan on oa_ticket_link" not in found, found


def test_the_cycle_walk_probes_the_parent_index_and_answers(desk):
    params = {"parent": desk + 9, "child": desk, "kind": LinkKind.PARENT}
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN " + _ancestors_sql(), params)
        found = "\n".join(row[0] for row in cursor.fetchall())
    # One probe per generation, on the parent links' own unique index.
    assert "Index Scan using link_one_parent_key" in found, found
    assert "Seq Scan on oa_ticket_link" not in found, found
    # The chain's top is above its bottom (nine steps up): making it the bottom's child is a
    # cycle; a ticket of another chain is not.
    assert would_cycle(child_id=desk, parent_id=desk + 9)
    assert not would_cycle(child_id=desk + 9, parent_id=desk)
    assert not would_cycle(child_id=desk + 10, parent_id=desk + 9)
