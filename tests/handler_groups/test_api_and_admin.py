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
    assert body["results"][0]["members"] == [m.pk for m in members]
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


def test_the_escalation_contact_is_set_under_either_name(api, staff):
    group = HandlerGroupFactory(name="net")
    boss, other = UserFactory(), UserFactory()
    url = f"/api/handler-groups/{group.pk}/"

    response = api.as_user(staff).patch(url, {"escalation_contact": boss.pk}, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["escalation_contact"] == response.json()["escalation_contact_id"]
    group.refresh_from_db()
    assert group.escalation_contact_id == boss.pk

    response = api.as_user(staff).patch(url, {"escalation_contact_id": other.pk}, format="json")
    assert response.json()["escalation_contact"] == other.pk

    # Two different users under the two names: refused, and nothing changes.
    response = api.as_user(staff).patch(
        url, {"escalation_contact": boss.pk, "escalation_contact_id": other.pk}, format="json"
    )
    assert response.status_code == 400
    assert "escalation_contact" in response.json()["errors"]
    group.refresh_from_db()
    assert group.escalation_contact_id == other.pk

    response = api.as_user(staff).patch(url, {"escalation_contact": None}, format="json")
    assert response.status_code == 200
    group.refresh_from_db()
    assert group.escalation_contact_id is None


def test_non_staff_cannot_change_groups(api, applicant):
    response = api.as_user(applicant).post(
        "/api/handler-groups/", {"name": "x", "member_ids": [], "assign_strategy": 0}, format="json"
    )
    assert response.status_code == 403


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"name": "x", "member_ids": [999999], "assign_strategy": 0}, "members"),
        ({"name": "x", "member_ids": "1,2", "assign_strategy": 0}, "member_ids"),
        ({"name": "x", "members": [1, 1]}, "members"),
        ({"name": "x", "max_active": -1}, "max_active"),
        ({"name": "x", "offer_timeout_seconds": "soon"}, "offer_timeout_seconds"),
        ({"name": "x", "overflow_group_id": 999999}, "overflow_group_id"),
        ({"name": "x", "target_answer_seconds": 0}, "target_answer_seconds"),
        ({"name": "x", "requires_presence": "maybe"}, "requires_presence"),
        ({"name": "x", "member_ids": [], "assign_strategy": 42}, "assign_strategy"),
        ({"member_ids": [], "assign_strategy": 0}, "name"),
        ({"name": "x", "member_ids": [], "assign_strategy": 0, "leader_id": 999999}, "leader_id"),
        ({"name": "x", "escalation_contact_id": 999999}, "escalation_contact_id"),
        ({"name": "x", "escalation_contact": 999999}, "escalation_contact"),
        ({"name": "x", "escalation_contact": 0}, "escalation_contact"),
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
        {
            "name": "desk",
            "members": [a.pk, b.pk],
            "assign_strategy": 1,
            "status": 1,
            "wrap_up_seconds": 30,
            "warmup_seconds": 60,
            "target_answer_seconds": 45,
            "max_active": 5,
            "capacities-TOTAL_FORMS": 1,
            "capacities-INITIAL_FORMS": 0,
            "capacities-0-user": b.pk,
            "capacities-0-max_active": 2,
        },
    )
    assert response.status_code == 302, response.content[:2000]
    group = HandlerGroup.objects.get(name="desk")
    assert sorted(group.member_ids) == sorted([a.pk, b.pk])
    assert (group.max_active, group.wrap_up_seconds) == (5, 30)
    assert group.target_answer_seconds == 45
    assert group.capacities.get().max_active == 2
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


def test_staff_set_routing_settings_through_the_api(api, staff):
    a = UserFactory()
    backup = HandlerGroupFactory(name="backup")
    response = api.as_user(staff).post(
        "/api/handler-groups/",
        {
            "name": "acd",
            "members": [a.pk],
            "assign_strategy": 4,
            "requires_presence": True,
            "max_active": 3,
            "daily_cap": 40,
            "wrap_up_seconds": 30,
            "warmup_seconds": 120,
            "offer_timeout_seconds": 90,
            "overflow_group_id": backup.pk,
            "overflow_after_seconds": 600,
            "target_answer_seconds": 20,
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    group = HandlerGroup.objects.get(name="acd")
    assert group.target_answer_seconds == 20
    assert (group.requires_presence, group.max_active, group.daily_cap) == (True, 3, 40)
    assert (group.offer_timeout_seconds, group.overflow_group_id) == (90, backup.pk)
    patch = api.as_user(staff).patch(
        f"/api/handler-groups/{group.pk}/", {"max_active": None}, format="json"
    )
    assert patch.json()["max_active"] is None and patch.json()["warmup_seconds"] == 120


def test_minimal_group_defaults_to_manual_with_no_members(api, staff):
    response = api.as_user(staff).post("/api/handler-groups/", {"name": "bare"}, format="json")
    assert response.status_code == 201
    assert (response.json()["assign_strategy"], response.json()["members"]) == (0, [])


def test_round_robin_cursor_follows_people_when_members_change(api, staff, approver):
    from workflow import services

    a, b, c, d = (UserFactory(username=n) for n in "abcd")
    group = HandlerGroupFactory(members=[a, b, c], assign_strategy=1)
    applicant = UserFactory(username="app")

    def next_handler():
        ticket = services.ticket_submit(
            creator=applicant, title="t", content="c", priority=2, handler_group_id=group.pk
        )
        return services.ticket_approve(ticket_id=ticket.pk, approver=approver).handler_id

    assert [next_handler(), next_handler()] == [a.pk, b.pk]
    api.as_user(staff).patch(
        f"/api/handler-groups/{group.pk}/", {"members": [b.pk, c.pk]}, format="json"
    )
    assert next_handler() == c.pk  # b just had one: no second ticket in a row
    api.as_user(staff).patch(
        f"/api/handler-groups/{group.pk}/", {"members": [d.pk, b.pk, c.pk]}, format="json"
    )
    assert [next_handler(), next_handler()] == [d.pk, b.pk]
    api.as_user(staff).patch(
        f"/api/handler-groups/{group.pk}/", {"members": [d.pk, c.pk]}, format="json"
    )
    assert next_handler() == c.pk  # b left: the next survivor after b


@pytest.mark.parametrize(
    ("old", "index", "new", "expected"),
    [
        ([1, 2, 3], 1, [2, 3], 0),
        ([1, 2, 3], 1, [3, 2], 1),
        ([1, 2, 3], 1, [1, 3], 0),
        ([1, 2, 3], 2, [1, 2], -1),
        ([1, 2, 3], -1, [4, 5], -1),
        ([1, 2, 3], 1, [], -1),
        ([1, 2, 3], 1, [4], -1),
    ],
)
def test_remap_cursor(old, index, new, expected):
    from handler_groups.membership import remap_cursor

    assert remap_cursor(old, index, new) == expected


# The routing cursor and overflow, in the admin and the API ------------------------------------


def _group_form(group, **changes) -> dict:
    """The admin's group change form as a browser posts it, unchanged unless told."""
    data = {
        "name": group.name,
        "leader": group.leader_id or "",
        "escalation_contact": "",
        "members": group.member_ids,
        "assign_strategy": group.assign_strategy,
        "status": group.status,
        "requires_presence": "",
        "max_active": "",
        "daily_cap": "",
        "wrap_up_seconds": group.wrap_up_seconds,
        "warmup_seconds": group.warmup_seconds,
        "offer_timeout_seconds": "",
        "overflow_group": "",
        "overflow_after_seconds": "",
        "target_answer_seconds": group.target_answer_seconds,
        "capacities-TOTAL_FORMS": 0,
        "capacities-INITIAL_FORMS": 0,
    }
    data.update(changes)
    return data


@pytest.fixture
def superuser_client(client, staff):
    staff.is_superuser = True
    staff.save()
    client.force_login(staff)
    return client


def test_the_round_robin_cursor_is_read_only_in_the_admin(superuser_client):
    members = [UserFactory(), UserFactory(), UserFactory()]
    group = HandlerGroupFactory(name="desk", members=members, assign_strategy=1)
    HandlerGroup.objects.filter(pk=group.pk).update(last_assign_index=1)
    url = f"/admin/handler_groups/handlergroup/{group.pk}/change/"
    page = superuser_client.get(url).content.decode()
    assert "Round-robin cursor" in page
    assert 'name="last_assign_index"' not in page  # shown, not an input
    response = superuser_client.post(url, _group_form(group, last_assign_index=2, warmup_seconds=5))
    assert response.status_code == 302
    group.refresh_from_db()
    assert group.warmup_seconds == 5  # the form was saved …
    assert group.last_assign_index == 1  # … and the cursor stayed where routing left it


def test_a_group_cannot_overflow_into_itself_in_the_admin(superuser_client):
    group = HandlerGroupFactory(name="desk")
    url = f"/admin/handler_groups/handlergroup/{group.pk}/change/"
    response = superuser_client.post(
        url, _group_form(group, overflow_group=group.pk, warmup_seconds=5)
    )
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert errors["overflow_group"] == ["A group cannot overflow into itself."]
    group.refresh_from_db()
    assert (group.overflow_group_id, group.warmup_seconds) == (None, 60)


def test_a_group_cannot_overflow_into_itself_in_the_api(api, staff):
    backup = HandlerGroupFactory(name="backup")
    group = HandlerGroupFactory(name="desk")
    HandlerGroup.objects.filter(pk=group.pk).update(overflow_group=backup)
    for method in ("patch", "put"):
        response = getattr(api.as_user(staff), method)(
            f"/api/handler-groups/{group.pk}/",
            {"name": "desk", "overflow_group_id": group.pk, "warmup_seconds": 5},
            format="json",
        )
        assert response.status_code == 400
        assert response.json()["errors"] == {
            "overflow_group_id": ["A group cannot overflow into itself."]
        }
        group.refresh_from_db()
        assert (group.overflow_group_id, group.warmup_seconds) == (backup.pk, 60)


def test_the_service_refuses_a_group_overflowing_into_itself():
    from config.errors import InvalidArgument
    from handler_groups.services import handler_group_save

    group = HandlerGroupFactory(name="desk")
    with pytest.raises(InvalidArgument) as refused:
        handler_group_save(
            group=group,
            name="desk",
            member_ids=[],
            assign_strategy=0,
            status=1,
            overflow_group_id=group.pk,
        )
    assert refused.value.field == "overflow_group_id"
    group.refresh_from_db()
    assert group.overflow_group_id is None
