import pytest

from handler_groups.membership import format_member_ids, parse_member_ids
from handler_groups.models import HandlerGroup
from tests.factories import HandlerGroupFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("raw", "ids"),
    [("", []), ("1,2,3", [1, 2, 3]), (" 4 , 5,,x,4 ", [4, 5]), (None, []), ("7", [7])],
)
def test_member_accessor_parses_the_stored_string(raw, ids):
    assert parse_member_ids(raw) == ids


def test_member_accessor_writes_the_stored_string():
    assert format_member_ids([3, 1, 3, 2]) == "3,1,2"
    group = HandlerGroup(name="g")
    group.member_ids = [5, 6]
    assert group.member_user_ids == "5,6"


def test_everyone_lists_groups_with_member_ids(api, applicant):
    members = [UserFactory(), UserFactory()]
    HandlerGroupFactory(name="it", members=members, assign_strategy=1)
    body = api.as_user(applicant).get("/api/handler-groups/").json()
    assert body["results"][0]["member_ids"] == [m.pk for m in members]
    assert body["results"][0]["assign_strategy"] == 1
    assert "member_user_ids" not in body["results"][0]


def test_staff_create_and_update_groups(api, staff):
    a, b = UserFactory(), UserFactory()
    response = api.as_user(staff).post(
        "/api/handler-groups/",
        {"name": "net", "member_ids": [a.pk, b.pk], "assign_strategy": 2, "leader_id": a.pk},
        format="json",
    )
    assert response.status_code == 201, response.json()
    group = HandlerGroup.objects.get(name="net")
    assert group.member_user_ids == f"{a.pk},{b.pk}"
    patch = api.as_user(staff).patch(
        f"/api/handler-groups/{group.pk}/", {"member_ids": [b.pk]}, format="json"
    )
    assert patch.status_code == 200
    group.refresh_from_db()
    assert group.member_ids == [b.pk]
    assert group.assign_strategy == 2


def test_non_staff_cannot_change_groups(api, applicant):
    response = api.as_user(applicant).post(
        "/api/handler-groups/", {"name": "x", "member_ids": [], "assign_strategy": 0}, format="json"
    )
    assert response.status_code == 403


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"name": "x", "member_ids": [999999], "assign_strategy": 0}, "member_ids"),
        ({"name": "x", "member_ids": "1,2", "assign_strategy": 0}, "member_ids"),
        ({"name": "x", "member_ids": [], "assign_strategy": 42}, "assign_strategy"),
        ({"member_ids": [], "assign_strategy": 0}, "name"),
        ({"name": "x", "member_ids": [], "assign_strategy": 0, "leader_id": 999999}, "leader_id"),
    ],
)
def test_bad_group_input_is_a_400(api, staff, payload, field):
    response = api.as_user(staff).post("/api/handler-groups/", payload, format="json")
    assert response.status_code == 400
    assert field in response.json()["errors"]


def test_admin_edits_members_with_a_multi_select(client, staff):
    staff.is_superuser = True
    staff.save()
    a, b = UserFactory(username="ann"), UserFactory(username="ben")
    client.force_login(staff)
    response = client.post(
        "/admin/handler_groups/handlergroup/add/",
        {"name": "desk", "members": [a.pk, b.pk], "assign_strategy": 1, "status": 1},
    )
    assert response.status_code == 302, response.content[:2000]
    group = HandlerGroup.objects.get(name="desk")
    assert sorted(group.member_ids) == sorted([a.pk, b.pk])
    page = client.get(f"/admin/handler_groups/handlergroup/{group.pk}/change/")
    assert page.status_code == 200
    assert b'name="members"' in page.content


def test_admin_pages_render(client, staff):
    staff.is_superuser = True
    staff.save()
    client.force_login(staff)
    for url in [
        "/admin/handler_groups/handlergroup/",
        "/admin/ticketing/ticket/",
        "/admin/ticketing/ticketreply/",
    ]:
        assert client.get(url).status_code == 200, url
