"""Who sees which tickets: the pool views and object-level access on every endpoint."""

import pytest

from tests.factories import HandlerGroupFactory, UserFactory
from ticketing.models import Category, TicketStatus
from workflow import services

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(submit, approver):
    """Two manual groups with their own members, one no-group ticket, one per group."""
    alice, bob, carol = (UserFactory(username=n) for n in ("alice", "bob", "carol"))
    it = HandlerGroupFactory(name="it", members=[alice, bob])
    hr = HandlerGroupFactory(name="hr", members=[carol])
    Category.objects.create(name="payroll")
    tickets = {
        "it": submit(title="it ticket", handler_group_id=it.pk),
        "hr": submit(title="hr ticket", handler_group_id=hr.pk, priority=1, category="payroll"),
        "none": submit(title="orphan"),
    }
    for ticket in tickets.values():
        services.ticket_approve(ticket_id=ticket.pk, approver=approver)
    tickets["unapproved"] = submit(title="awaiting approval", handler_group_id=it.pk)
    return {"alice": alice, "bob": bob, "carol": carol, "it_group": it, "hr_group": hr, **tickets}


def titles(response):
    assert response.status_code == 200, response.json()
    return sorted(t["title"] for t in response.json()["results"])


def test_pending_shows_my_groups_and_no_group_tickets(api, world):
    assert titles(api.as_user(world["alice"]).get("/api/tickets/pool/?view=pending")) == [
        "it ticket",
        "orphan",
    ]
    assert titles(api.as_user(world["carol"]).get("/api/tickets/pool/?view=pending")) == [
        "hr ticket",
        "orphan",
    ]


def test_user_in_no_group_sees_no_pool_at_all(api, world):
    """The no-group pool belongs to handlers; a user in no group is not one."""
    loner = UserFactory(username="loner")
    assert titles(api.as_user(loner).get("/api/tickets/pool/?view=pending")) == []
    assert titles(api.as_user(loner).get("/api/tickets/pool/?view=all")) == []
    assert api.as_user(loner).get(f"/api/tickets/{world['none'].pk}/").status_code == 404


def test_the_handle_permission_opens_only_the_no_group_pool(api, world):
    from django.contrib.auth.models import Permission

    clerk = UserFactory(username="clerk")
    clerk.user_permissions.add(Permission.objects.get(codename="handle_tickets"))
    assert titles(api.as_user(clerk).get("/api/tickets/pool/?view=pending")) == ["orphan"]
    assert titles(api.as_user(clerk).get("/api/tickets/pool/?view=all")) == ["orphan"]


def test_staff_see_every_approved_ticket(api, world, staff):
    assert titles(api.as_user(staff).get("/api/tickets/pool/?view=all")) == [
        "hr ticket",
        "it ticket",
        "orphan",
    ]


def test_group_leader_sees_the_groups_pool(api, world):
    leader = UserFactory(username="it_lead")
    world["it_group"].leader = leader
    world["it_group"].save()
    assert titles(api.as_user(leader).get("/api/tickets/pool/?view=all")) == [
        "it ticket",
        "orphan",
    ]


def test_my_handling_lists_the_callers_tickets_in_2_3_4(api, world):
    alice = world["alice"]
    services.ticket_accept(ticket_id=world["it"].pk, handler=alice)
    services.ticket_accept(ticket_id=world["none"].pk, handler=alice)
    services.ticket_complete(ticket_id=world["none"].pk, handler=alice)
    assert titles(api.as_user(alice).get("/api/tickets/pool/?view=my_handling")) == [
        "it ticket",
        "orphan",
    ]
    assert titles(
        api.as_user(alice).get("/api/tickets/pool/?view=my_handling&ticket_status=4")
    ) == ["orphan"]
    assert titles(api.as_user(world["bob"]).get("/api/tickets/pool/?view=my_handling")) == []
    # Accepted tickets leave the pending tab.
    assert titles(api.as_user(world["bob"]).get("/api/tickets/pool/?view=pending")) == []


def test_pool_filters(api, world, staff):
    client = api.as_user(staff)
    assert titles(client.get("/api/tickets/pool/?view=all&priority=1")) == ["hr ticket"]
    assert titles(client.get("/api/tickets/pool/?view=all&category=payroll")) == ["hr ticket"]
    assert titles(
        client.get(f"/api/tickets/pool/?view=all&handler_group={world['it_group'].pk}")
    ) == ["it ticket"]
    assert titles(
        client.get(f"/api/tickets/pool/?view=all&ticket_status={TicketStatus.PENDING_ASSIGN}")
    ) == ["hr ticket", "it ticket", "orphan"]


def test_pool_is_paginated(api, world, staff):
    body = api.as_user(staff).get("/api/tickets/pool/?view=all&page_size=2").json()
    assert body["count"] == 3
    assert len(body["results"]) == 2
    assert body["next"]


@pytest.mark.parametrize(
    "query", ["view=everything", "priority=7", "ticket_status=x", "handler_group=-1", "page=abc"]
)
def test_bad_pool_queries_are_400_or_404_never_500(api, world, query):
    response = api.as_user(world["alice"]).get(f"/api/tickets/pool/?{query}")
    assert response.status_code in (400, 404)
    if response.status_code == 400:
        assert response.json()["code"] == "invalid_argument"


def test_a_member_of_another_group_can_neither_read_nor_act(api, world):
    carol, it_ticket = world["carol"], world["it"]
    for method, path in [
        ("get", f"/api/tickets/{it_ticket.pk}/"),
        ("get", f"/api/tickets/{it_ticket.pk}/replies/"),
        ("get", f"/api/tickets/{it_ticket.pk}/records/"),
        ("post", f"/api/tickets/{it_ticket.pk}/accept/"),
        ("post", f"/api/tickets/{it_ticket.pk}/complete/"),
        ("post", f"/api/tickets/{it_ticket.pk}/close/"),
        ("post", f"/api/tickets/{it_ticket.pk}/replies/"),
        ("post", f"/api/tickets/{it_ticket.pk}/transfer/"),
    ]:
        response = getattr(api.as_user(carol), method)(path, {"content": "x"}, format="json")
        assert response.status_code == 404, (method, path, response.status_code)
    it_ticket.refresh_from_db()
    assert it_ticket.ticket_status == TicketStatus.PENDING_ASSIGN
    assert it_ticket.reply_count == 0


def test_another_applicant_cannot_see_my_ticket(api, world):
    stranger = UserFactory(username="stranger")
    assert api.as_user(stranger).get(f"/api/tickets/{world['unapproved'].pk}/").status_code == 404
    assert api.as_user(stranger).get(f"/api/tickets/{world['none'].pk}/").status_code == 404
    # Not even the approved no-group ticket: that pool is the handlers'.
    assert api.as_user(stranger).get("/api/tickets/").json()["results"] == []


def test_members_do_not_see_their_groups_tickets_before_approval(api, world):
    assert (
        api.as_user(world["alice"]).get(f"/api/tickets/{world['unapproved'].pk}/").status_code
        == 404
    )


def test_applicant_lists_own_tickets(api, world, applicant):
    listed = api.as_user(applicant).get("/api/tickets/").json()
    assert listed["count"] == 4


def test_user_in_no_group_cannot_accept_a_no_group_ticket(api, world):
    loner = UserFactory(username="loner")
    assert api.as_user(loner).post(f"/api/tickets/{world['none'].pk}/accept/").status_code == 404
    assert (
        api.as_user(world["carol"]).post(f"/api/tickets/{world['none'].pk}/accept/").status_code
        == 200
    )
