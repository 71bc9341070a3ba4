"""Canned responses through the API: who lists, creates, reads, changes and deletes which (the
scopes: personal, a group's, global), every refusal changing nothing, the placeholders
checked on save and filled in by render (nothing sent), and an agent who tries another
group's response."""

import pytest

from tests.toolbox.macros_cast import canned, make_cast
from ticketing.models import TicketReply
from toolbox.models import CannedResponse

pytestmark = pytest.mark.django_db

LIST = "/api/canned-responses/"


def one(item):
    return f"{LIST}{item.pk}/"


def render_url(ticket, item_id):
    return f"/api/tickets/{ticket.pk}/canned-responses/{item_id}/render/"


def rows():
    return list(CannedResponse.objects.order_by("id").values())


@pytest.fixture
def cast(applicant, approver):
    return make_cast(applicant, approver)


# Listing


def test_the_list_holds_what_the_caller_may_use(api, cast):
    mine = canned(cast["handlers"][0], name="Mine")
    canned(cast["handlers"][1], name="A colleague's own")
    ours = canned(cast["leader"], scope="group", group=cast["group"], name="Support's")
    canned(cast["other_leader"], scope="group", group=cast["other_group"], name="Facilities'")
    everyone = canned(cast["staff"], scope="global", name="Everyone's")
    response = api.as_user(cast["handlers"][0]).get(LIST)
    assert response.status_code == 200
    assert [row["id"] for row in response.json()] == [everyone.pk, mine.pk, ours.pk]
    editable = {row["id"]: row["editable"] for row in response.json()}
    assert editable == {everyone.pk: False, mine.pk: True, ours.pk: False}
    # The leader edits the group's; staff use every group's and edit the global ones.
    leader = api.as_user(cast["leader"]).get(LIST).json()
    assert {row["id"]: row["editable"] for row in leader}[ours.pk] is True
    staff_ids = {row["id"] for row in api.as_user(cast["staff"]).get(LIST).json()}
    assert ours.pk in staff_ids and everyone.pk in staff_ids and mine.pk not in staff_ids


def test_q_searches_the_name_and_the_body_and_language_keeps_those_for_any(api, cast):
    agent = cast["handlers"][0]
    printer = canned(agent, name="Printer", body="Turn it off and on.", language="en")
    toner = canned(agent, name="Supplies", body="The TONER is ordered.")
    chinese = canned(agent, name="问候", body="您好", language="zh-hans")
    client = api.as_user(agent)
    assert [r["id"] for r in client.get(LIST, {"q": "printer"}).json()] == [printer.pk]
    assert [r["id"] for r in client.get(LIST, {"q": "toner"}).json()] == [toner.pk]
    by_language = client.get(LIST, {"language": "zh-hans"}).json()
    assert {r["id"] for r in by_language} == {toner.pk, chinese.pk}


def test_an_applicant_lists_nothing_and_may_not_create(api, cast):
    canned(cast["staff"], scope="global")
    client = api.as_user(cast["applicant"])
    assert client.get(LIST).json() == []
    before = rows()
    response = client.post(LIST, {"name": "x", "body": "y"}, format="json")
    assert response.status_code == 403
    assert rows() == before


# Creating


def test_an_agent_creates_a_personal_response_owned_by_them(api, cast):
    agent = cast["handlers"][0]
    response = api.as_user(agent).post(
        LIST, {"name": "Hi", "body": "Hello {{applicant.name}}", "language": "en"}, format="json"
    )
    assert response.status_code == 201
    body = response.json()
    assert body["scope"] == "personal" and body["owner_id"] == agent.pk
    assert body["group_id"] is None and body["language"] == "en" and body["editable"] is True


def test_an_unknown_placeholder_is_a_400_naming_it_and_nothing_is_saved(api, cast):
    before = rows()
    response = api.as_user(cast["handlers"][0]).post(
        LIST, {"name": "Hi", "body": "Dear {{ ticket.owner }}, {{ agent.name }}"}, format="json"
    )
    assert response.status_code == 400
    (message,) = response.json()["errors"]["body"]
    assert "{{ ticket.owner }}" in message
    assert rows() == before


@pytest.mark.parametrize(
    ("who", "payload", "status", "field"),
    [
        # A member may not share with the group: its leader or staff may.
        ("member", {"scope": "group", "group_id": "own"}, 403, None),
        ("leader", {"scope": "group", "group_id": "other"}, 403, None),
        ("leader", {"scope": "group"}, 400, "group"),
        ("leader", {"scope": "personal", "group_id": "own"}, 400, "group"),
        ("leader", {"scope": "global"}, 403, None),
        ("member", {"scope": "group", "group_id": 999999}, 400, "group_id"),
        ("member", {"language": "fr"}, 400, "language"),
    ],
)
def test_scopes_the_caller_may_not_give_are_refused(api, cast, who, payload, status, field):
    user = {"member": cast["handlers"][0], "leader": cast["leader"]}[who]
    group_ids = {"own": cast["group"].pk, "other": cast["other_group"].pk}
    data = {"name": "x", "body": "y", **payload}
    if isinstance(data.get("group_id"), str):
        data["group_id"] = group_ids[data["group_id"]]
    before = rows()
    response = api.as_user(user).post(LIST, data, format="json")
    assert response.status_code == status, response.json()
    if field:
        assert field in response.json()["errors"]
    assert rows() == before


def test_the_leader_shares_with_the_group_and_staff_with_everyone(api, cast):
    response = api.as_user(cast["leader"]).post(
        LIST,
        {"name": "x", "body": "y", "scope": "group", "group_id": cast["group"].pk},
        format="json",
    )
    assert response.status_code == 201 and response.json()["group_id"] == cast["group"].pk
    response = api.as_user(cast["staff"]).post(
        LIST, {"name": "x", "body": "y", "scope": "global"}, format="json"
    )
    assert response.status_code == 201 and response.json()["scope"] == "global"


# Reading, changing, deleting


def test_someone_elses_personal_response_is_a_404_to_read_change_and_delete(api, cast):
    item = canned(cast["handlers"][1], body="Secret")
    before = rows()
    client = api.as_user(cast["handlers"][0])
    assert client.get(one(item)).status_code == 404
    assert client.patch(one(item), {"body": "Mine now"}, format="json").status_code == 404
    assert client.delete(one(item)).status_code == 404
    # Not even staff edit someone's personal response.
    assert (
        api.as_user(cast["staff"]).patch(one(item), {"body": "x"}, format="json").status_code == 404
    )
    assert rows() == before


def test_a_member_uses_the_groups_response_but_may_not_change_it(api, cast):
    item = canned(cast["leader"], scope="group", group=cast["group"])
    before = rows()
    client = api.as_user(cast["handlers"][0])
    assert client.get(one(item)).status_code == 200
    assert client.patch(one(item), {"body": "Changed"}, format="json").status_code == 403
    assert client.delete(one(item)).status_code == 403
    assert rows() == before
    response = api.as_user(cast["leader"]).patch(one(item), {"body": "Changed"}, format="json")
    assert response.status_code == 200 and response.json()["body"] == "Changed"


def test_only_staff_change_a_global_response(api, cast):
    item = canned(cast["staff"], scope="global")
    before = rows()
    response = api.as_user(cast["leader"]).patch(one(item), {"name": "Mine"}, format="json")
    assert response.status_code == 403
    assert rows() == before
    response = api.as_user(cast["staff"]).patch(one(item), {"name": "Renamed"}, format="json")
    assert response.status_code == 200
    assert CannedResponse.objects.get(pk=item.pk).name == "Renamed"


def test_a_change_checks_placeholders_and_the_new_scope(api, cast):
    agent = cast["handlers"][0]
    item = canned(agent)
    before = rows()
    client = api.as_user(agent)
    response = client.patch(one(item), {"body": "{{ nope }}"}, format="json")
    assert response.status_code == 400 and "body" in response.json()["errors"]
    response = client.patch(one(item), {"scope": "global"}, format="json")
    assert response.status_code == 403
    response = client.patch(
        one(item), {"scope": "group", "group_id": cast["group"].pk}, format="json"
    )
    assert response.status_code == 403  # a member may not share with the group
    assert rows() == before


def test_the_owner_deletes_their_response(api, cast):
    agent = cast["handlers"][0]
    item = canned(agent)
    assert api.as_user(agent).delete(one(item)).status_code == 204
    assert not CannedResponse.objects.filter(pk=item.pk).exists()


# Rendering for a ticket


def test_render_fills_in_every_placeholder_for_the_ticket_and_sends_nothing(api, cast):
    ticket = cast["ticket"]()
    agent = cast["handlers"][0]
    item = canned(
        agent,
        body="Hi {{applicant.name}}, {{ ticket.bill_code }} ({{ticket.title}}) is with "
        "{{  group.name  }}. — {{ agent.name }}",
    )
    replies = TicketReply.objects.count()
    response = api.as_user(agent).post(render_url(ticket, item.pk))
    assert response.status_code == 200
    assert response.json() == {
        "id": item.pk,
        "name": item.name,
        "text": f"Hi Ada Byron, {ticket.bill_code} (Printer on fire) is with support. — Bob Hale",
    }
    assert TicketReply.objects.count() == replies
    # agent.name is whoever uses it: a full name, else the username.
    shared = canned(cast["staff"], scope="global", body="{{ agent.name }}")
    response = api.as_user(cast["handlers"][1]).post(render_url(ticket, shared.pk))
    assert response.json()["text"] == "handler1"


def test_an_agent_rendering_another_groups_response_gets_a_404(api, cast):
    ticket = cast["ticket"]()
    theirs = canned(cast["other_leader"], scope="group", group=cast["other_group"])
    colleagues = canned(cast["handlers"][1])
    client = api.as_user(cast["handlers"][0])
    assert client.post(render_url(ticket, theirs.pk)).status_code == 404
    assert client.post(render_url(ticket, colleagues.pk)).status_code == 404
    assert client.post(render_url(ticket, 999999)).status_code == 404


def test_render_needs_the_tickets_team(api, cast):
    ticket = cast["ticket"]()
    # The facilities member uses their own group's response, but this is not their ticket.
    theirs = canned(cast["other_leader"], scope="group", group=cast["other_group"])
    assert api.as_user(cast["outsider"]).post(render_url(ticket, theirs.pk)).status_code == 404
    # Staff see it and are on every team; the applicant sees it but is not on the team.
    everyone = canned(cast["staff"], scope="global")
    assert api.as_user(cast["staff"]).post(render_url(ticket, everyone.pk)).status_code == 200
    own = canned(cast["applicant"], body="x")
    assert api.as_user(cast["applicant"]).post(render_url(ticket, own.pk)).status_code == 403


def test_group_name_is_empty_for_a_ticket_without_a_group(api, cast, submit, approver):
    made = submit()
    from workflow import services

    services.ticket_approve(ticket_id=made.pk, approver=approver)
    item = canned(cast["staff"], scope="global", body="[{{ group.name }}]")
    response = api.as_user(cast["staff"]).post(render_url(made, item.pk))
    assert response.status_code == 200 and response.json()["text"] == "[]"


def test_the_list_costs_the_same_few_queries_however_many_it_holds(
    api, cast, django_assert_max_num_queries
):
    for i in range(20):
        canned(cast["leader"], scope="group", group=cast["group"], name=f"Shared {i}")
        canned(cast["handlers"][0], name=f"Mine {i}")
    client = api.as_user(cast["handlers"][0])
    client.get(LIST)  # (the token's first use)
    with django_assert_max_num_queries(6):
        response = client.get(LIST)
    assert len(response.json()) == 40
