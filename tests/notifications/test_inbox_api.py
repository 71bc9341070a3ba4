import pytest

from notifications.sending import send
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

PARAMS = {"billCode": "TK1", "title": "VPN", "type": "resolve", "deadline": "17:00"}


@pytest.fixture
def alice():
    return UserFactory(username="alice")


@pytest.fixture
def bob():
    return UserFactory(username="bob")


def notify(user, key):
    return send(recipients=[user], template_code="ticket-sla-warn", params=PARAMS, dedupe_key=key)[
        0
    ]


def test_inbox_lists_mine_newest_first_with_unread_filter(api, alice, bob):
    first, second = notify(alice, "a1"), notify(alice, "a2")
    notify(bob, "b1")
    client = api.as_user(alice)
    body = client.get("/api/notifications/").json()
    assert [n["id"] for n in body["results"]] == [second.pk, first.pk]
    client.post(f"/api/notifications/{second.pk}/read/")
    unread = client.get("/api/notifications/?unread=1").json()
    assert [n["id"] for n in unread["results"]] == [first.pk]


def test_unread_count_read_and_read_all(api, alice):
    n1 = notify(alice, "a1")
    notify(alice, "a2")
    client = api.as_user(alice)
    assert client.get("/api/notifications/unread-count/").json()["unread"] == 2
    read = client.post(f"/api/notifications/{n1.pk}/read/")
    assert read.status_code == 200 and read.json()["is_read"] is True
    assert client.get("/api/notifications/unread-count/").json()["unread"] == 1
    assert client.post("/api/notifications/read-all/").json() == {"marked": 1}
    assert client.get("/api/notifications/unread-count/").json()["unread"] == 0


def test_unread_count_body(api, alice):
    notify(alice, "a1")
    assert api.as_user(alice).get("/api/notifications/unread-count/").json() == {
        "unread": 1,
        "count": 1,
    }


def test_nobody_sees_or_marks_another_users_messages(api, alice, bob):
    theirs = notify(bob, "b1")
    client = api.as_user(alice)
    assert client.get(f"/api/notifications/{theirs.pk}/").status_code == 404
    assert client.get("/api/notifications/").json()["results"] == []
    assert client.post(f"/api/notifications/{theirs.pk}/read/").status_code == 404
    assert client.post("/api/notifications/read-all/").json() == {"marked": 0}
    theirs.refresh_from_db()
    assert theirs.read_at is None
    assert api.as_user(bob).get("/api/notifications/unread-count/").json()["unread"] == 1
    assert api.as_user(bob).get(f"/api/notifications/{theirs.pk}/").json()["id"] == theirs.pk


def test_inbox_needs_authentication(api):
    assert api.get("/api/notifications/").status_code == 401
    assert api.get("/api/notifications/unread-count/").status_code == 401


def test_bad_unread_filter_is_a_400(api, alice):
    response = api.as_user(alice).get("/api/notifications/?unread=maybe")
    assert response.status_code == 400
    assert "unread" in response.json()["errors"]


def test_lifecycle_events_reach_the_inbox(api, applicant, approver):
    from tests.factories import HandlerGroupFactory
    from workflow import services

    handler = UserFactory(username="handler")
    group = HandlerGroupFactory(members=[handler], assign_strategy=1)
    ticket = services.ticket_submit(
        creator=applicant, title="Broken", content="c", priority=2, handler_group_id=group.pk
    )
    services.ticket_approve(ticket_id=ticket.pk, approver=approver)
    inbox = api.as_user(handler).get("/api/notifications/").json()["results"]
    assert [n["template_code"] for n in inbox] == ["ticket-assigned"]
    assert ticket.bill_code in inbox[0]["title"]

    services.ticket_accept(ticket_id=ticket.pk, handler=handler)
    services.ticket_reply(ticket_id=ticket.pk, author=handler, reply_type=1, content="hi")
    services.ticket_complete(ticket_id=ticket.pk, handler=handler)
    mine = api.as_user(applicant).get("/api/notifications/").json()["results"]
    # Newest first: the completion asks how it went (satisfaction) in a notice of its own.
    assert [n["template_code"] for n in mine] == [
        "ticket-survey",
        "ticket-completed",
        "ticket-replied",
    ]


def test_delivery_state_is_visible_on_the_message(api, alice, monkeypatch):
    from notifications import sending

    monkeypatch.setattr(sending, "enqueue_deliveries", lambda ids: None)
    alice.email = "alice@example.test"
    alice.save()
    notify(alice, "a1")
    (message,) = api.as_user(alice).get("/api/notifications/").json()["results"]
    assert message["deliveries"] == [
        {
            "channel": "email",
            "status": "pending",
            "attempts": 0,
            "next_attempt_at": message["deliveries"][0]["next_attempt_at"],
            "sent_at": None,
            "last_error": "",
        }
    ]


def test_taking_a_ticket_from_the_pool_lands_in_the_takers_inbox(api, applicant, approver):
    from tests.factories import HandlerGroupFactory
    from workflow import services

    handler = UserFactory(username="grabber")
    group = HandlerGroupFactory(members=[handler], assign_strategy=0)
    ticket = services.ticket_submit(
        creator=applicant, title="Pool", content="c", priority=2, handler_group_id=group.pk
    )
    services.ticket_approve(ticket_id=ticket.pk, approver=approver)
    client = api.as_user(handler)
    assert client.get("/api/notifications/unread-count/").json()["unread"] == 0
    assert client.post(f"/api/tickets/{ticket.pk}/accept/").status_code == 200
    assert client.get("/api/notifications/unread-count/").json()["unread"] == 1
    (message,) = client.get("/api/notifications/").json()["results"]
    assert message["template_code"] == "ticket-assigned"
    assert message["ticket_id"] == ticket.pk
