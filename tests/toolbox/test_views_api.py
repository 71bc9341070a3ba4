"""Saved views through HTTP: create with the pool's rules (400 naming filters.<name>),
scopes (personal is the owner's; a group's is seen by its members, edited by its leader and
staff), live counts in one statement, and a view's tickets."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from tests.toolbox.views_world import make_world
from ticketing.models import Ticket, TicketStatus
from toolbox.models import SavedView

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(applicant, approver):
    return make_world(applicant, approver)


def create(api, user, **body):
    body.setdefault("name", "Urgent")
    return api.as_user(user).post("/api/views/", body, format="json")


def test_an_agent_saves_a_personal_view_and_sees_its_count(api, world):
    agent = world["handlers"][0]
    urgent = world["ticket"](priority=4)
    world["ticket"](priority=2)
    world["ticket"](priority=4, in_group=world["other_group"])  # not in the agent's scope

    response = create(api, agent, filters={"priority": 4, "status": [1]}, sort="age")

    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["scope"] == "personal" and body["owner_id"] == agent.pk
    assert body["filters"] == {"priority": 4, "status": [1]}
    assert body["count"] == 1 and body["count_text"] == "1" and body["editable"] is True
    tickets = api.as_user(agent).get(f"/api/views/{body['id']}/tickets/").json()
    assert [t["id"] for t in tickets["results"]] == [urgent.pk]


@pytest.mark.parametrize(
    ("filters", "field"),
    [
        ({"priority": 9}, "filters.priority"),
        ({"status": [7]}, "filters.status"),
        ({"sla": "soon"}, "filters.sla"),
        ({"handler": "someone"}, "filters.handler"),
        ({"group": 999999}, "filters.group"),
        ({"colour": "red"}, "filters.colour"),
        ({"fields": {"no_such_field": "x"}}, "filters.fields.no_such_field"),
        ("urgent", "filters"),
    ],
)
def test_bad_filters_are_a_400_naming_the_filter(api, world, filters, field):
    response = create(api, world["handlers"][0], filters=filters)

    assert response.status_code == 400
    assert field in response.json()["errors"], response.json()
    assert not SavedView.objects.exists()


def test_a_bad_sort_is_a_400_naming_sort(api, world):
    response = create(api, world["handlers"][0], sort="colour")

    assert response.status_code == 400 and "sort" in response.json()["errors"]
    assert not SavedView.objects.exists()


def test_an_applicant_keeps_no_views(api, world):
    response = create(api, world["applicant"], filters={})

    assert response.status_code == 403
    assert not SavedView.objects.exists()


def test_a_personal_view_is_its_owners_only(api, world):
    mine = create(api, world["handlers"][0]).json()
    other = world["handlers"][1]

    assert api.as_user(other).get("/api/views/").json() == []
    assert api.as_user(other).get(f"/api/views/{mine['id']}/").status_code == 404
    assert api.as_user(other).get(f"/api/views/{mine['id']}/tickets/").status_code == 404
    patched = api.as_user(other).patch(f"/api/views/{mine['id']}/", {"name": "x"}, format="json")
    assert patched.status_code == 404
    assert api.as_user(other).delete(f"/api/views/{mine['id']}/").status_code == 404
    assert SavedView.objects.get(pk=mine["id"]).name == "Urgent"


def test_a_groups_view_is_made_by_its_leader_seen_by_members_edited_by_leader_and_staff(api, world):
    group = world["group"]
    member, leader, staff = world["handlers"][0], world["leader"], world["staff"]

    refused = create(api, member, scope="group", group_id=group.pk)
    assert refused.status_code == 403
    assert not SavedView.objects.exists()
    shared = create(api, leader, scope="group", group_id=group.pk).json()

    listed = api.as_user(member).get("/api/views/").json()
    assert [v["id"] for v in listed] == [shared["id"]] and listed[0]["editable"] is False
    assert api.as_user(world["outsider"]).get(f"/api/views/{shared['id']}/").status_code == 404
    by_member = api.as_user(member).patch(
        f"/api/views/{shared['id']}/", {"name": "Mine now"}, format="json"
    )
    assert by_member.status_code == 403
    assert api.as_user(member).delete(f"/api/views/{shared['id']}/").status_code == 403
    assert SavedView.objects.get(pk=shared["id"]).name == "Urgent"

    by_staff = api.as_user(staff).patch(
        f"/api/views/{shared['id']}/", {"name": "Team urgent"}, format="json"
    )
    assert by_staff.status_code == 200 and by_staff.json()["name"] == "Team urgent"
    assert api.as_user(leader).delete(f"/api/views/{shared['id']}/").status_code == 204
    assert not SavedView.objects.exists()


def test_a_group_scope_needs_its_group(api, world):
    response = create(api, world["leader"], scope="group")

    assert response.status_code == 400 and "group" in response.json()["errors"]
    assert create(api, world["leader"], scope="global").status_code == 400
    assert not SavedView.objects.exists()


def test_patch_changes_only_the_given_fields_and_checks_filters(api, world):
    agent = world["handlers"][0]
    view = create(api, agent, filters={"priority": 4}, sort="sla").json()

    bad = api.as_user(agent).patch(
        f"/api/views/{view['id']}/", {"filters": {"sla": "later"}}, format="json"
    )
    assert bad.status_code == 400 and "filters.sla" in bad.json()["errors"]
    assert SavedView.objects.get(pk=view["id"]).filters == {"priority": 4}

    good = api.as_user(agent).patch(
        f"/api/views/{view['id']}/", {"filters": {"handler": "me"}}, format="json"
    )
    assert good.status_code == 200
    saved = SavedView.objects.get(pk=view["id"])
    assert saved.filters == {"handler": "me"} and saved.sort == "sla" and saved.name == "Urgent"


def test_handler_me_and_several_statuses_filter_the_view(api, world):
    agent, colleague = world["handlers"]
    mine = world["ticket"](accept_by=agent)
    world["ticket"](accept_by=colleague)
    world["ticket"]()  # in the pool, nobody's
    view = create(api, agent, filters={"handler": "me", "status": [2, 3]}).json()
    unassigned = create(api, agent, name="Nobody's", filters={"handler": "none"}).json()

    assert view["count"] == 1
    listed = api.as_user(agent).get(f"/api/views/{view['id']}/tickets/").json()["results"]
    assert [t["id"] for t in listed] == [mine.pk]
    assert unassigned["count"] == 1


def test_sla_states_filter_the_view(api, world):
    agent = world["handlers"][0]
    now = timezone.now()
    soon, later, paused, breached = (world["ticket"]() for _ in range(4))
    Ticket.objects.filter(pk=soon.pk).update(response_deadline=now + timedelta(minutes=30))
    Ticket.objects.filter(pk=later.pk).update(response_deadline=now + timedelta(hours=5))
    Ticket.objects.filter(pk=paused.pk).update(
        sla_paused=True, ticket_status=TicketStatus.PROCESSING
    )
    Ticket.objects.filter(pk=breached.pk).update(
        response_timeout=True, response_deadline=now - timedelta(hours=1)
    )

    def ids(state):
        view = create(api, agent, name=state, filters={"sla": state}).json()
        rows = api.as_user(agent).get(f"/api/views/{view['id']}/tickets/").json()["results"]
        return {t["id"] for t in rows}

    assert ids("response_due_1h") == {soon.pk}
    assert ids("paused") == {paused.pk}
    assert ids("breached") == {breached.pk}


def test_the_counts_of_ten_views_cost_one_statement(api, world, django_assert_max_num_queries):
    """One counting statement for all ten; besides it, the caller (token, groups twice), the views,
    and the people each searching view's word names (ticketing.search)."""
    agent = world["handlers"][0]
    for priority in (1, 2, 3, 4):
        world["ticket"](priority=priority)
    for n in range(10):
        SavedView.objects.create(
            name=f"view {n}",
            owner=agent,
            filters={"priority": 1 + n % 4, "q": "printer"} if n % 2 else {"status": [1]},
        )
    client = api.as_user(agent)
    client.get("/api/views/")  # the token's first use is looked up once

    with CaptureQueriesContext(connection) as queries:
        listed = client.get("/api/views/").json()
    counting = [q for q in queries.captured_queries if "count(*)" in q["sql"].lower()]
    assert len(counting) == 1
    with django_assert_max_num_queries(5 + 5):  # 5 views search for "printer"
        client.get("/api/views/")
    assert [v["count"] for v in listed] == [4 if n % 2 == 0 else 1 for n in range(10)]


def test_a_count_beyond_the_limit_says_more_than(api, world, settings):
    settings.SAVED_VIEW_COUNT_LIMIT = 2
    agent = world["handlers"][0]
    for _ in range(3):
        world["ticket"]()

    view = create(api, agent, filters={"status": [1]}).json()

    assert view["count_is_estimate"] is True and view["count_text"] == "more than 2"
