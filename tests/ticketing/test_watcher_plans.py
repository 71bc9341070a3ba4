"""What a watcher may see, on a large table (EXPLAIN): the tickets a person watches are read
first and reach the ticket statement as a list of ids, so an applicant who watches colleagues'
tickets still has their list read through indexes (their own through ticket_creator_idx, the
watched ones through the primary key), never a scan of every ticket."""

import pytest
from django.utils import timezone

from collaboration.models import Watcher
from tests.factories import HandlerGroupFactory, UserFactory
from tests.ticketing.test_query_plans import fill_tickets, plan
from ticketing import access
from ticketing.models import Ticket

pytestmark = pytest.mark.django_db


@pytest.fixture
def watching_applicant(db):
    """200,000 tickets of someone else; the applicant has none of their own and watches five."""
    someone = UserFactory(username="someone")
    groups = [HandlerGroupFactory(name=f"g{i}") for i in range(10)]
    fill_tickets(200_000, someone.pk, [g.pk for g in groups])
    applicant = UserFactory(username="colleague")
    watched = list(Ticket.objects.order_by("id").values_list("pk", flat=True)[1000:1005])
    Watcher.objects.bulk_create(
        Watcher(ticket_id=pk, user=applicant, source="cc", added=timezone.now()) for pk in watched
    )
    return applicant, watched


def test_a_watchers_list_reads_the_watched_tickets_by_their_ids(watching_applicant):
    applicant, watched = watching_applicant
    qs = access.visible_tickets(applicant).order_by("-id")
    assert sorted(qs.values_list("pk", flat=True)) == sorted(watched)
    found = plan(qs[:20])
    assert "Seq Scan" not in found, found
    assert "oa_ticket_bill_pkey" in found, found


def test_someone_who_watches_nothing_gets_no_id_list(watching_applicant):
    nobody = UserFactory(username="nobody")
    qs = access.visible_tickets(nobody)
    assert "IN (" not in str(qs.query)
    assert not qs.exists()
