"""Each audience gets its own story: the applicant sees the public story of their ticket on the
API and on the page — no internal notes (not even that one exists), no routing internals, no SLA
rule — and only the handler, the group's leader or staff stop the clock."""

import pytest
from rest_framework.test import APIClient

from routing.models import AgentPresence
from sla.models import SlaRule
from tests.factories import ApproverFactory, HandlerGroupFactory, StaffFactory, UserFactory
from ticketing.models import ReplyType, Ticket, TicketRecord
from workflow import services


@pytest.fixture
def people(db):
    handlers = [UserFactory(username=f"agent{i}") for i in range(2)]
    leader = UserFactory(username="lead")
    group = HandlerGroupFactory(name="it", members=handlers, leader=leader, assign_strategy=1)
    return {
        "applicant": UserFactory(username="customer"),
        "handlers": handlers,
        "leader": leader,
        "group": group,
        "approver": ApproverFactory(username="boss"),
    }


@pytest.fixture
def worked(people):
    """Approved (round robin assigns agent0), accepted, one public reply and one internal note."""
    ticket = services.ticket_submit(
        creator=people["applicant"],
        title="VPN down",
        content="Since 9:00",
        priority=3,
        handler_group_id=people["group"].pk,
    )
    ticket = services.ticket_approve(ticket_id=ticket.pk, approver=people["approver"])
    handler = ticket.handler
    services.ticket_accept(ticket_id=ticket.pk, handler=handler)
    services.ticket_reply(
        ticket_id=ticket.pk, author=handler, reply_type=ReplyType.PUBLIC, content="On it."
    )
    services.ticket_reply(
        ticket_id=ticket.pk,
        author=handler,
        reply_type=ReplyType.INTERNAL,
        content="SECRET-NOTE: the firewall again",
    )
    return Ticket.objects.get(pk=ticket.pk)


def client_for(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_the_applicant_sees_public_replies_counted_and_no_handler_or_rule(people, worked):
    body = client_for(people["applicant"]).get(f"/api/tickets/{worked.pk}/").json()
    assert body["reply_count"] == 1
    assert body["handler_id"] is None
    assert body["sla_rule_id"] is None
    listed = client_for(people["applicant"]).get("/api/tickets/").json()["results"]
    assert [(t["id"], t["reply_count"], t["handler_id"]) for t in listed] == [(worked.pk, 1, None)]
    team = client_for(people["handlers"][1]).get(f"/api/tickets/{worked.pk}/").json()
    assert team["reply_count"] == 2
    assert team["handler_id"] == worked.handler_id
    assert team["sla_rule_id"] == SlaRule.objects.get(sort=999).pk


def test_the_applicants_records_are_the_public_story(people, worked):
    records = client_for(people["applicant"]).get(f"/api/tickets/{worked.pk}/records/").json()
    assert [r["action"] for r in records] == ["submit", "approve", "reply"]
    assert all(r["detail"].get("reply_type") in (None, "public") for r in records)
    text = str(records)
    for internal in ("internal", "strategy", "handler_id", "assign", "enter_pool"):
        assert internal not in text
    # The approver's id is not the applicant's business either; their own step keeps theirs.
    assert records[0]["actor_id"] == people["applicant"].pk
    assert records[1]["actor_id"] is None
    staff_view = client_for(StaffFactory()).get(f"/api/tickets/{worked.pk}/records/").json()
    assert [r["action"] for r in staff_view] == [
        "submit",
        "approve",
        "assign",
        "accept",
        "reply",
        "reply",
    ]


def test_approvers_outside_the_team_get_the_public_story_too(people, worked):
    body = client_for(people["approver"]).get(f"/api/tickets/{worked.pk}/").json()
    assert body["reply_count"] == 1
    replies = client_for(people["approver"]).get(f"/api/tickets/{worked.pk}/replies/").json()
    assert [r["content"] for r in replies] == ["On it."]


def test_the_applicants_page_shows_no_trace_of_the_internal_note(people, worked, client):
    client.force_login(people["applicant"])
    page = client.get(f"/console/tickets/{worked.pk}/").content.decode()
    assert "On it." in page
    # (The public reply names its author, as any help desk does.)
    for leak in ("SECRET-NOTE", "internal", "strategy", "handler id", "Catch-all", "assign"):
        assert leak not in page, leak
    client.force_login(people["handlers"][1])
    team_page = client.get(f"/console/tickets/{worked.pk}/").content.decode()
    assert "SECRET-NOTE" in team_page


def test_the_my_tickets_list_does_not_name_the_handler(people, worked, client):
    client.force_login(people["applicant"])
    page = client.get("/console/my-tickets/").content.decode()
    assert worked.bill_code in page
    assert worked.handler.username not in page


@pytest.mark.parametrize("action", ["pause", "resume"])
def test_a_colleague_cannot_pause_or_resume_the_handlers_ticket(people, worked, action):
    if action == "resume":
        services_pause(worked)
    colleague = next(h for h in people["handlers"] if h.pk != worked.handler_id)
    before = Ticket.objects.values().get(pk=worked.pk)
    records = TicketRecord.objects.filter(ticket=worked).count()
    response = client_for(colleague).post(f"/api/tickets/{worked.pk}/{action}/")
    assert response.status_code == 403
    assert Ticket.objects.values().get(pk=worked.pk) == before
    assert TicketRecord.objects.filter(ticket=worked).count() == records


def test_a_colleague_sees_no_pause_button_and_the_console_refuses_it(people, worked, client):
    colleague = next(h for h in people["handlers"] if h.pk != worked.handler_id)
    client.force_login(colleague)
    page = client.get(f"/console/tickets/{worked.pk}/").content.decode()
    assert f"/console/tickets/{worked.pk}/pause/" not in page
    response = client.post(f"/console/tickets/{worked.pk}/pause/")
    assert response.status_code == 403
    assert not Ticket.objects.get(pk=worked.pk).sla_paused


@pytest.mark.parametrize("who", ["handler", "leader", "staff"])
def test_the_handler_the_leader_and_staff_may_pause_and_resume(people, worked, who):
    user = {"handler": worked.handler, "leader": people["leader"], "staff": StaffFactory()}[who]
    assert client_for(user).post(f"/api/tickets/{worked.pk}/pause/").status_code == 200
    assert Ticket.objects.get(pk=worked.pk).sla_paused
    assert client_for(user).post(f"/api/tickets/{worked.pk}/resume/").status_code == 200
    assert not Ticket.objects.get(pk=worked.pk).sla_paused


def services_pause(ticket):
    from sla.services import sla_pause

    sla_pause(ticket_id=ticket.pk, user=ticket.handler)


@pytest.mark.parametrize("call", [("heartbeat", {}), ("state", {"state": "available"})])
def test_only_group_members_have_presence(people, call):
    path, body = call
    for outsider in (people["applicant"], people["approver"], people["leader"]):
        response = client_for(outsider).post(f"/api/presence/{path}/", body, format="json")
        assert response.status_code == 403
        assert response.json()["code"] == "permission_denied"
    assert not AgentPresence.objects.exists()
    response = client_for(people["handlers"][0]).post(f"/api/presence/{path}/", body, format="json")
    assert response.status_code == 200
    assert AgentPresence.objects.filter(pk=people["handlers"][0].pk).exists()


def test_an_applicant_lists_no_presence(people):
    assert client_for(people["applicant"]).get("/api/presence/").json() == []
