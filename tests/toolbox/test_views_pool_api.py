"""The pool API's filters that saved views use: several statuses, the handler ("me", "none",
an id), the SLA state, search and sort; 400 naming a bad one."""

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.toolbox.views_world import make_world
from ticketing.models import Ticket

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(applicant, approver):
    return make_world(applicant, approver)


def ids(api, user, query: str) -> list[int]:
    response = api.as_user(user).get(f"/api/tickets/pool/?view=all&{query}")
    assert response.status_code == 200, response.json()
    return [t["id"] for t in response.json()["results"]]


def test_the_pool_filters_by_statuses_handler_sla_and_search(api, world):
    agent, colleague = world["handlers"]
    mine = world["ticket"](accept_by=agent, title="Mine printer")
    theirs = world["ticket"](accept_by=colleague, title="Their scanner")
    waiting = world["ticket"](title="Waiting scanner")
    Ticket.objects.filter(pk=waiting.pk).update(
        response_deadline=timezone.now() + timedelta(minutes=20)
    )

    assert ids(api, agent, "status=2&status=3") == [theirs.pk, mine.pk]
    assert ids(api, agent, "handler=me") == [mine.pk]
    assert ids(api, agent, f"handler={colleague.pk}") == [theirs.pk]
    assert ids(api, agent, "handler=none") == [waiting.pk]
    assert ids(api, agent, "sla=response_due_1h") == [waiting.pk]
    assert ids(api, agent, "q=scanner&sort=age") == [theirs.pk, waiting.pk]


@pytest.mark.parametrize(
    ("query", "field"),
    [("handler=someone", "handler"), ("sla=later", "sla"), ("status=9", "status")],
)
def test_a_bad_pool_filter_is_a_400_naming_it(api, world, query, field):
    response = api.as_user(world["handlers"][0]).get(f"/api/tickets/pool/?{query}")

    assert response.status_code == 400 and field in response.json()["errors"]
