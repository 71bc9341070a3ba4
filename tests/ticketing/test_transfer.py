import pytest

from tests.factories import HandlerGroupFactory, UserFactory
from ticketing.models import Ticket, TicketStatus
from workflow import services

pytestmark = pytest.mark.django_db


def test_leader_transfers_to_a_member(api, pooled, group, handlers):
    response = api.as_user(group.leader).post(
        f"/api/tickets/{pooled.pk}/transfer/", {"handler_id": handlers[2].pk}, format="json"
    )
    assert response.status_code == 200, response.json()
    assert response.json()["handler_id"] == handlers[2].pk
    assert response.json()["ticket_status"] == TicketStatus.PENDING_PROCESS
    record = pooled.records.get(action="transfer")
    assert record.detail["to_handler_id"] == handlers[2].pk


def test_transfer_to_another_group_routes_by_its_strategy(api, pooled, group):
    target_member = UserFactory(username="target")
    target = HandlerGroupFactory(name="tier2", members=[target_member], assign_strategy=1)
    response = api.as_user(group.leader).post(
        f"/api/tickets/{pooled.pk}/transfer/", {"handler_group_id": target.pk}, format="json"
    )
    assert response.status_code == 200
    body = response.json()
    assert body["handler_group_id"] == target.pk
    assert body["handler_id"] == target_member.pk
    assert body["ticket_status"] == TicketStatus.PENDING_PROCESS


def test_transfer_to_a_manual_group_puts_the_ticket_in_its_pool(api, pooled, group, handlers):
    api.as_user(handlers[0]).post(f"/api/tickets/{pooled.pk}/accept/")
    target = HandlerGroupFactory(name="tier2", members=[UserFactory()], assign_strategy=0)
    body = (
        api.as_user(group.leader)
        .post(f"/api/tickets/{pooled.pk}/transfer/", {"handler_group_id": target.pk}, format="json")
        .json()
    )
    assert body["ticket_status"] == TicketStatus.PENDING_ASSIGN
    assert body["handler_id"] is None
    assert body["accepted_time"] is None


def test_only_the_leader_or_staff_transfer(api, pooled, handlers):
    response = api.as_user(handlers[0]).post(
        f"/api/tickets/{pooled.pk}/transfer/", {"handler_id": handlers[1].pk}, format="json"
    )
    assert response.status_code == 403


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({}, "non_field_errors"),
        ({"handler_id": 999999}, "handler_id"),
        ({"handler_group_id": 999999}, "handler_group_id"),
        ({"handler_id": "x"}, "handler_id"),
    ],
)
def test_bad_transfers_are_400(api, pooled, staff, payload, field):
    response = api.as_user(staff).post(
        f"/api/tickets/{pooled.pk}/transfer/", payload, format="json"
    )
    assert response.status_code == 400
    assert field in response.json()["errors"]


def test_transfer_to_someone_outside_the_group_is_a_400(api, pooled, staff):
    outsider = UserFactory(username="outsider")
    response = api.as_user(staff).post(
        f"/api/tickets/{pooled.pk}/transfer/", {"handler_id": outsider.pk}, format="json"
    )
    assert response.status_code == 400
    assert "handler_id" in response.json()["errors"]


def test_transfer_of_a_completed_ticket_is_a_409(api, pooled, handlers, staff):
    api.as_user(handlers[0]).post(f"/api/tickets/{pooled.pk}/accept/")
    api.as_user(handlers[0]).post(f"/api/tickets/{pooled.pk}/complete/")
    response = api.as_user(staff).post(
        f"/api/tickets/{pooled.pk}/transfer/", {"handler_id": handlers[1].pk}, format="json"
    )
    assert response.status_code == 409


def test_transfer_of_a_missing_ticket_raises_does_not_exist(pooled, group, staff):
    # It read the ticket's group with .first() and subscripted the None: a TypeError (a 500).
    missing = Ticket.objects.order_by("-pk").values_list("pk", flat=True).first() + 1
    with pytest.raises(Ticket.DoesNotExist):
        services.ticket_transfer(ticket_id=missing, user=staff, handler_group_id=group.pk)
