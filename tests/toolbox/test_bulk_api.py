"""Bulk actions through HTTP: one result per id, each ticket checked and changed on its own
(mixed permissions: 403 a ticket the caller sees but is not on the team of, 404 one they
cannot see, 409 a closed one), parameters checked before any ticket."""

import pytest

from tests.toolbox.views_world import make_world
from ticketing.models import Priority, Ticket, TicketRecord, TicketStatus
from toolbox.models import Macro
from workflow import services

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(applicant, approver):
    return make_world(applicant, approver)


def bulk(api, user, **body):
    return api.as_user(user).post("/api/tickets/bulk/", body, format="json")


def closed(world, user_ticket=None):
    ticket = user_ticket or world["ticket"]()
    return services.ticket_close(ticket_id=ticket.pk, user=world["staff"])


def test_set_priority_answers_per_id_with_mixed_permissions(api, world):
    agent = world["handlers"][0]
    mine = world["ticket"]()
    done = closed(world)
    # The agent's own request to another group: they see it, but are not on its team.
    own_elsewhere = services.ticket_submit(
        creator=agent,
        title="My laptop",
        content="Broken.",
        priority=2,
        handler_group_id=world["other_group"].pk,
    )
    services.ticket_approve(ticket_id=own_elsewhere.pk, approver=world["approver"])
    unseen = world["ticket"](in_group=world["other_group"])
    records = TicketRecord.objects.count()

    response = bulk(
        api,
        agent,
        action="set_priority",
        priority=Priority.URGENT,
        ids=[mine.pk, own_elsewhere.pk, unseen.pk, done.pk, 99999999],
    )

    assert response.status_code == 200
    results = response.json()["results"]
    assert [(r["id"], r["ok"], r.get("status")) for r in results] == [
        (mine.pk, True, None),
        (own_elsewhere.pk, False, 403),
        (unseen.pk, False, 404),
        (done.pk, False, 409),
        (99999999, False, 404),
    ]
    assert all(isinstance(r["detail"], str) and r["detail"] for r in results[1:])
    assert Ticket.objects.get(pk=mine.pk).priority == Priority.URGENT
    for ticket in (own_elsewhere, unseen, done):
        assert Ticket.objects.get(pk=ticket.pk).priority != Priority.URGENT
    assert TicketRecord.objects.count() == records + 1  # the one change, recorded


def test_add_tags_changes_each_ticket_on_its_own(api, world):
    agent = world["handlers"][0]
    first, full, last = (world["ticket"]() for _ in range(3))
    Ticket.objects.filter(pk=full.pk).update(tags=[f"t{n}" for n in range(20)])

    results = bulk(
        api,
        agent,
        action="add_tags",
        tags=["Printer ", "urgent"],
        ids=[first.pk, full.pk, last.pk],
    ).json()["results"]

    assert [r["ok"] for r in results] == [True, False, True]
    assert results[1]["status"] == 400 and "tags" in results[1]["detail"]
    assert Ticket.objects.get(pk=first.pk).tags == ["printer", "urgent"]
    assert Ticket.objects.get(pk=last.pk).tags == ["printer", "urgent"]
    assert Ticket.objects.get(pk=full.pk).tags == [f"t{n}" for n in range(20)]

    removed = bulk(api, agent, action="remove_tags", tags=["urgent"], ids=[first.pk]).json()
    assert removed["results"] == [{"id": first.pk, "ok": True}]
    assert Ticket.objects.get(pk=first.pk).tags == ["printer"]


def test_an_applicant_tagging_gets_403_per_ticket_and_nothing_changes(api, world):
    ticket = world["ticket"]()

    results = bulk(api, world["applicant"], action="add_tags", tags=["x"], ids=[ticket.pk])

    assert results.json()["results"][0]["status"] == 403
    assert Ticket.objects.get(pk=ticket.pk).tags == []


def test_transfer_is_the_leaders_a_member_gets_403(api, world):
    ticket = world["ticket"]()
    target = world["other_group"]

    refused = bulk(
        api, world["handlers"][0], action="transfer", group_id=target.pk, ids=[ticket.pk]
    )
    assert refused.json()["results"][0]["status"] == 403
    assert Ticket.objects.get(pk=ticket.pk).handler_group_id == world["group"].pk

    done = bulk(api, world["leader"], action="transfer", group_id=target.pk, ids=[ticket.pk])
    assert done.json()["results"] == [{"id": ticket.pk, "ok": True}]
    assert Ticket.objects.get(pk=ticket.pk).handler_group_id == target.pk


def test_close_by_staff_and_409_for_one_already_closed(api, world):
    open_one, done = world["ticket"](), closed(world)

    results = bulk(api, world["staff"], action="close", ids=[open_one.pk, done.pk]).json()

    assert [r["ok"] for r in results["results"]] == [True, False]
    assert results["results"][1]["status"] == 409
    assert Ticket.objects.get(pk=open_one.pk).ticket_status == TicketStatus.CLOSED


def test_apply_macro_names_the_failing_step_for_that_ticket(api, world):
    agent = world["handlers"][0]
    macro = Macro.objects.create(
        name="Urgent", owner=agent, actions=[{"action": "set_priority", "priority": 4}]
    )
    ticket, done = world["ticket"](), closed(world)

    results = bulk(api, agent, action="apply_macro", macro_id=macro.pk, ids=[ticket.pk, done.pk])

    first, second = results.json()["results"]
    assert first == {"id": ticket.pk, "ok": True}
    assert second["status"] == 409 and second["detail"]["step"] == 0
    assert second["detail"]["action"] == "set_priority"
    assert Ticket.objects.get(pk=ticket.pk).priority == 4
    assert Ticket.objects.get(pk=done.pk).priority == 3


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"action": "set_priority", "priority": 9}, "priority"),
        ({"action": "set_priority"}, "priority"),
        ({"action": "transfer"}, "group_id"),
        ({"action": "transfer", "group_id": 999999}, "group_id"),
        ({"action": "add_tags", "tags": []}, "tags"),
        ({"action": "add_tags", "tags": ["   "]}, "tags"),
        ({"action": "apply_macro", "macro_id": 999999}, "macro_id"),
        ({"action": "explode"}, "action"),
        ({"action": "close", "ids": []}, "ids"),
        ({"action": "close", "ids": list(range(1, 202))}, "ids"),
    ],
)
def test_bad_parameters_are_a_400_and_nothing_is_done(api, world, body, field):
    ticket = world["ticket"]()
    body.setdefault("ids", [ticket.pk])
    records = TicketRecord.objects.count()

    response = bulk(api, world["staff"], **body)

    assert response.status_code == 400
    assert field in response.json()["errors"], response.json()
    assert TicketRecord.objects.count() == records
    assert Ticket.objects.get(pk=ticket.pk).ticket_status == TicketStatus.PENDING_ASSIGN


def test_two_hundred_ids_are_accepted(api, world):
    ticket = world["ticket"]()
    ids = [ticket.pk, *range(10_000_000, 10_000_199)]

    response = bulk(api, world["handlers"][0], action="set_priority", priority=1, ids=ids)

    assert response.status_code == 200
    assert len(response.json()["results"]) == 200
    assert Ticket.objects.get(pk=ticket.pk).priority == 1
