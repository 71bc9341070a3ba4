"""The ticket lifecycle as a client drives it through the API."""

import pytest

from tests.factories import UserFactory
from ticketing.models import Category, ProcessStatus, Ticket, TicketStatus

pytestmark = pytest.mark.django_db


def test_submit_creates_a_ticket_awaiting_approval(api, applicant, group):
    Category.objects.create(name="network")
    response = api.as_user(applicant).post(
        "/api/tickets/",
        {
            "title": "VPN down",
            "content": "Cannot connect",
            "priority": 3,
            "category": "network",
            "handler_group_id": group.pk,
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["ticket_status"] == 0
    assert body["process_status"] == 1
    assert body["submitted_time"]
    assert body["bill_code"].startswith("TK")
    assert body["priority_label"] == "high"
    assert body["handler_group_id"] == group.pk


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"content": "x", "priority": 2}, "title"),
        ({"title": "x", "priority": 2}, "content"),
        ({"title": "x", "content": "y", "priority": 9}, "priority"),
        ({"title": "x", "content": "y", "priority": "high"}, "priority"),
        (
            {"title": "x", "content": "y", "priority": 2, "handler_group_id": 999999},
            "handler_group_id",
        ),
        (
            {"title": "x", "content": "y", "priority": 2, "handler_group_id": "abc"},
            "handler_group_id",
        ),
        ({"title": "x", "content": "y", "priority": 2, "category": "has spaces!"}, "category"),
    ],
)
def test_bad_submissions_get_400_naming_the_field(api, applicant, payload, field):
    response = api.as_user(applicant).post("/api/tickets/", payload, format="json")
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_argument"
    assert field in response.json()["errors"]
    assert Ticket.objects.count() == 0


def test_malformed_json_is_a_400_not_a_500(api, applicant):
    response = api.as_user(applicant).post(
        "/api/tickets/", data="{not json", content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_argument"


def test_unauthenticated_requests_are_rejected(api):
    assert api.get("/api/tickets/pool/").status_code == 401
    assert api.post("/api/tickets/", {}, format="json").status_code == 401


def test_token_login(api, applicant):
    response = api.post(
        "/api/auth/token/", {"username": "applicant", "password": "pw"}, format="json"
    )
    assert response.status_code == 200
    token = response.json()["token"]
    api.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert api.get("/api/tickets/pool/").status_code == 200


def test_token_login_with_a_wrong_password_is_a_400(api, applicant):
    response = api.post(
        "/api/auth/token/", {"username": "applicant", "password": "no"}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_argument"


def test_approval_into_a_manual_group_leaves_the_ticket_in_the_pool(api, submit, group, approver):
    ticket = submit(handler_group_id=group.pk)
    response = api.as_user(approver).post(f"/api/tickets/{ticket.pk}/approve/")
    assert response.status_code == 200
    body = response.json()
    assert body["process_status"] == ProcessStatus.APPROVED
    assert body["ticket_status"] == TicketStatus.PENDING_ASSIGN
    assert body["approved_time"]
    assert body["handler_id"] is None


def test_only_approvers_approve(api, submit, group, handlers):
    ticket = submit(handler_group_id=group.pk)
    response = api.as_user(handlers[0]).post(f"/api/tickets/{ticket.pk}/approve/")
    # A handler cannot even see an unapproved ticket of their group.
    assert response.status_code == 404
    outsider = UserFactory()
    assert api.as_user(outsider).post(f"/api/tickets/{ticket.pk}/approve/").status_code == 404
    ticket.refresh_from_db()
    assert ticket.process_status == ProcessStatus.APPROVING


def test_applicant_cannot_approve_their_own_ticket(api, submit, applicant):
    ticket = submit()
    response = api.as_user(applicant).post(f"/api/tickets/{ticket.pk}/approve/")
    assert response.status_code == 403
    assert response.json()["code"] == "permission_denied"


def test_approving_twice_is_a_409_and_changes_nothing(api, pooled, approver):
    records_before = pooled.records.count()
    response = api.as_user(approver).post(f"/api/tickets/{pooled.pk}/approve/")
    assert response.status_code == 409
    assert response.json()["code"] == "conflict"
    assert "approv" in response.json()["detail"]
    assert pooled.records.count() == records_before


def test_reject_needs_a_reason_and_ends_the_ticket(api, submit, approver):
    ticket = submit()
    missing = api.as_user(approver).post(f"/api/tickets/{ticket.pk}/reject/", {}, format="json")
    assert missing.status_code == 400
    assert "reason" in missing.json()["errors"]
    response = api.as_user(approver).post(
        f"/api/tickets/{ticket.pk}/reject/", {"reason": "duplicate"}, format="json"
    )
    assert response.status_code == 200
    assert response.json()["process_status"] == ProcessStatus.REJECTED
    assert api.as_user(approver).post(f"/api/tickets/{ticket.pk}/approve/").status_code == 409
    reject = ticket.records.get(action="reject")
    assert reject.detail["reason"] == "duplicate"


def test_full_lifecycle_accept_reply_complete_close(api, pooled, handlers, applicant):
    handler = handlers[1]
    accept = api.as_user(handler).post(f"/api/tickets/{pooled.pk}/accept/")
    assert accept.status_code == 200
    assert accept.json()["ticket_status"] == TicketStatus.PROCESSING
    assert accept.json()["handler_id"] == handler.pk
    assert accept.json()["accepted_time"]

    reply = api.as_user(handler).post(
        f"/api/tickets/{pooled.pk}/replies/",
        {"reply_type": "public", "content": "On it"},
        format="json",
    )
    assert reply.status_code == 201
    note = api.as_user(handler).post(
        f"/api/tickets/{pooled.pk}/replies/",
        {"reply_type": "internal", "content": "Blame DNS"},
        format="json",
    )
    assert note.status_code == 201

    complete = api.as_user(handler).post(f"/api/tickets/{pooled.pk}/complete/")
    assert complete.status_code == 200
    assert complete.json()["ticket_status"] == TicketStatus.COMPLETED
    assert complete.json()["reply_count"] == 2

    close = api.as_user(applicant).post(f"/api/tickets/{pooled.pk}/close/")
    assert close.status_code == 200
    assert close.json()["ticket_status"] == TicketStatus.CLOSED
    assert close.json()["closed_time"]

    records = api.as_user(handler).get(f"/api/tickets/{pooled.pk}/records/").json()
    assert [r["action"] for r in records] == [
        "submit",
        "approve",
        "enter_pool",
        "accept",
        "reply",
        "reply",
        "complete",
        "close",
    ]
    assert records[3]["from_status"] == TicketStatus.PENDING_ASSIGN
    assert records[3]["to_status"] == TicketStatus.PROCESSING


def test_internal_replies_are_hidden_from_the_applicant(api, pooled, handlers, applicant):
    handler = handlers[0]
    api.as_user(handler).post(f"/api/tickets/{pooled.pk}/accept/")
    api.as_user(handler).post(
        f"/api/tickets/{pooled.pk}/replies/",
        {"reply_type": "internal", "content": "secret"},
        format="json",
    )
    api.as_user(handler).post(
        f"/api/tickets/{pooled.pk}/replies/",
        {"reply_type": "public", "content": "hello"},
        format="json",
    )
    seen_by_applicant = api.as_user(applicant).get(f"/api/tickets/{pooled.pk}/replies/").json()
    assert [r["content"] for r in seen_by_applicant] == ["hello"]
    seen_by_handler = api.as_user(handler).get(f"/api/tickets/{pooled.pk}/replies/").json()
    assert [r["reply_type"] for r in seen_by_handler] == ["internal", "public"]


def test_applicant_cannot_write_internal_replies(api, pooled, applicant):
    response = api.as_user(applicant).post(
        f"/api/tickets/{pooled.pk}/replies/",
        {"reply_type": "internal", "content": "psst"},
        format="json",
    )
    assert response.status_code == 403
    assert pooled.replies.count() == 0


def test_bad_reply_type_is_a_400(api, pooled, applicant):
    response = api.as_user(applicant).post(
        f"/api/tickets/{pooled.pk}/replies/",
        {"reply_type": "shout", "content": "x"},
        format="json",
    )
    assert response.status_code == 400
    assert "reply_type" in response.json()["errors"]


def test_replying_to_a_closed_ticket_is_a_409(api, pooled, applicant):
    api.as_user(applicant).post(f"/api/tickets/{pooled.pk}/close/")
    response = api.as_user(applicant).post(
        f"/api/tickets/{pooled.pk}/replies/", {"content": "hello?"}, format="json"
    )
    assert response.status_code == 409
    pooled.refresh_from_db()
    assert pooled.reply_count == 0


def test_only_the_handler_completes(api, pooled, handlers):
    api.as_user(handlers[0]).post(f"/api/tickets/{pooled.pk}/accept/")
    assert api.as_user(handlers[1]).post(f"/api/tickets/{pooled.pk}/complete/").status_code == 403
    pooled.refresh_from_db()
    assert pooled.ticket_status == TicketStatus.PROCESSING


def test_completing_a_ticket_not_yet_accepted_is_a_409(api, submit, approver, handlers):
    from handler_groups.models import HandlerGroup

    group = HandlerGroup.objects.create(name="rr", assign_strategy=1)
    group.member_ids = [handlers[0].pk]
    group.save()
    ticket = submit(handler_group_id=group.pk)
    assigned = api.as_user(approver).post(f"/api/tickets/{ticket.pk}/approve/").json()
    assert assigned["ticket_status"] == TicketStatus.PENDING_PROCESS
    response = api.as_user(handlers[0]).post(f"/api/tickets/{ticket.pk}/complete/")
    assert response.status_code == 409
    assert "pending process" in response.json()["detail"]


def test_a_member_cannot_take_a_ticket_assigned_to_someone_else(api, submit, approver, handlers):
    from handler_groups.models import HandlerGroup

    group = HandlerGroup.objects.create(name="rr", assign_strategy=1)
    group.member_ids = [h.pk for h in handlers]
    group.save()
    ticket = submit(handler_group_id=group.pk)
    api.as_user(approver).post(f"/api/tickets/{ticket.pk}/approve/")
    ticket.refresh_from_db()
    assert ticket.handler_id == handlers[0].pk
    response = api.as_user(handlers[1]).post(f"/api/tickets/{ticket.pk}/accept/")
    assert response.status_code == 409
    assert "another handler" in response.json()["detail"]
    assert api.as_user(handlers[0]).post(f"/api/tickets/{ticket.pk}/accept/").status_code == 200


def test_only_the_applicant_or_staff_close(api, pooled, handlers, staff):
    assert api.as_user(handlers[0]).post(f"/api/tickets/{pooled.pk}/close/").status_code == 403
    assert api.as_user(staff).post(f"/api/tickets/{pooled.pk}/close/").status_code == 200


def test_applicant_cancels_before_approval(api, submit, applicant, approver):
    ticket = submit()
    assert api.as_user(applicant).post(f"/api/tickets/{ticket.pk}/cancel/").status_code == 200
    ticket.refresh_from_db()
    assert ticket.process_status == ProcessStatus.CANCELLED
    assert api.as_user(approver).post(f"/api/tickets/{ticket.pk}/approve/").status_code == 409


def test_ticket_detail_includes_sla_fields_and_labels(api, pooled, applicant):
    body = api.as_user(applicant).get(f"/api/tickets/{pooled.pk}/").json()
    for field in (
        "response_deadline",
        "resolve_deadline",
        "response_timeout",
        "resolve_timeout",
        "ticket_status_label",
        "process_status_label",
    ):
        assert field in body
    assert body["ticket_status_label"] == "pending assign"


def test_unknown_ticket_is_a_404_with_the_error_shape(api, applicant):
    response = api.as_user(applicant).get("/api/tickets/999999/")
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"


def test_request_id_is_echoed_or_generated(api, applicant):
    given = api.as_user(applicant).get("/api/tickets/pool/", HTTP_X_REQUEST_ID="abc-123")
    assert given["X-Request-ID"] == "abc-123"
    generated = api.as_user(applicant).get("/api/tickets/pool/")
    assert len(generated["X-Request-ID"]) == 32


def test_approvers_have_a_queue_of_submitted_tickets(api, submit, approver, applicant, client):
    first, second = submit(title="first"), submit(title="second")
    body = api.as_user(approver).get("/api/tickets/awaiting-approval/").json()
    assert [t["id"] for t in body["results"]] == [first.pk, second.pk]
    assert api.as_user(applicant).get("/api/tickets/awaiting-approval/").status_code == 403
    client.force_login(approver)
    page = client.get("/console/approvals/")
    assert page.status_code == 200 and b"second" in page.content
    client.force_login(applicant)
    assert client.get("/console/approvals/").status_code == 403
