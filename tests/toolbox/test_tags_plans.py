"""`?tag=` over a large table is read through ticket_tags_idx (GIN), for the pool's list and
for the bare filter (EXPLAIN, not timing); the SLA report's tag condition is the same `@>`."""

import pytest
from django.db import connection

from tests.factories import HandlerGroupFactory, StaffFactory, UserFactory
from tests.ticketing.test_query_plans import fill_tickets, plan
from ticketing.models import Ticket
from ticketing.tags import filter_tag
from workflow.selectors import pool_for

pytestmark = pytest.mark.django_db

TICKETS = 200_000


def tag_some() -> None:
    """As in a desk that tags: a third of the tickets carry a common tag, 1 in 2,000 a rare
    one beside it."""
    with connection.cursor() as cursor:
        cursor.execute("UPDATE oa_ticket_bill SET tags = ARRAY['hardware'] WHERE id % 3 = 0")
        cursor.execute(
            "UPDATE oa_ticket_bill SET tags = tags || ARRAY['outage']::varchar[] "
            "WHERE id % 2000 = 7"
        )
        cursor.execute("ANALYZE oa_ticket_bill")


def test_a_rare_tag_is_found_through_ticket_tags_idx():
    member = UserFactory(username="member")
    groups = [HandlerGroupFactory(name=f"g{i}") for i in range(10)]
    groups[3].member_ids = [member.pk]
    groups[3].save()
    fill_tickets(TICKETS, member.pk, [g.pk for g in groups])
    tag_some()
    staff = StaffFactory(username="boss")

    bare = plan(filter_tag(Ticket.objects.all(), "OUTAGE"))
    assert "ticket_tags_idx" in bare, bare
    for user in (member, staff):
        listed = plan(pool_for(user, view="all", tag="outage")[:20])
        assert "ticket_tags_idx" in listed, listed
        assert "Seq Scan" not in listed, listed
    assert filter_tag(Ticket.objects.all(), "outage").count() == TICKETS // 2000
