"""Idempotency-Key on POST /api/tickets/ and POST /api/tickets/{id}/replies/: the same key
from the same caller within 24 hours answers the first answer and creates nothing new."""

from datetime import timedelta

import pytest
import requests
from django.utils import timezone
from knox.models import AuthToken

from idempotency.models import IdempotencyRecord
from idempotency.services import idempotency_purge
from idempotency.tasks import purge
from tests.concurrency import run_in_parallel
from tests.factories import UserFactory
from ticketing.models import Ticket, TicketReply

BODY = {"title": "Printer on fire", "content": "It is on fire.", "priority": 3}


def _submit(api, user, key, body=BODY):
    return api.as_user(user).post(
        "/api/tickets/", body, format="json", headers={"Idempotency-Key": key}
    )


@pytest.mark.django_db
def test_a_retried_submit_answers_the_first_answer_and_creates_nothing(api, applicant):
    first = _submit(api, applicant, "order-1")
    again = _submit(api, applicant, "order-1")
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    assert again["Idempotent-Replayed"] == "true" and "Idempotent-Replayed" not in first
    assert Ticket.objects.filter(creator=applicant).count() == 1
    # Without a key, or with another one, a submit is a new ticket.
    assert api.post("/api/tickets/", BODY, format="json").status_code == 201
    assert _submit(api, applicant, "order-2").json()["id"] != first.json()["id"]
    assert Ticket.objects.filter(creator=applicant).count() == 3


@pytest.mark.django_db
def test_a_retried_reply_answers_the_first_answer_and_creates_nothing(api, applicant, submit):
    ticket = submit()
    url = f"/api/tickets/{ticket.pk}/replies/"
    headers = {"Idempotency-Key": "reply-1"}
    client = api.as_user(applicant)
    first = client.post(url, {"content": "Still burning."}, format="json", headers=headers)
    again = client.post(url, {"content": "Still burning."}, format="json", headers=headers)
    assert first.status_code == again.status_code == 201 and again.json() == first.json()
    assert TicketReply.objects.filter(ticket=ticket).count() == 1
    # The same key on another route is another request: refused, nothing created.
    other = client.post("/api/tickets/", BODY, format="json", headers=headers)
    assert other.status_code == 422
    assert not Ticket.objects.exclude(pk=ticket.pk).exists()


@pytest.mark.django_db
def test_the_same_key_with_another_body_is_a_422_naming_the_header(api, applicant):
    first = _submit(api, applicant, "order-1")
    changed = _submit(api, applicant, "order-1", {**BODY, "title": "Printer smoking"})
    assert changed.status_code == 422
    assert changed.json()["code"] == "idempotency_key_reused"
    assert "Idempotency-Key" in changed.json()["detail"]
    assert list(Ticket.objects.values_list("pk", "title")) == [
        (first.json()["id"], "Printer on fire")
    ]


@pytest.mark.django_db
def test_keys_are_per_caller(api, applicant):
    other = UserFactory()
    mine, theirs = _submit(api, applicant, "k"), _submit(api, other, "k")
    assert mine.status_code == theirs.status_code == 201
    assert mine.json()["id"] != theirs.json()["id"]
    assert IdempotencyRecord.objects.count() == 2


@pytest.mark.django_db
@pytest.mark.parametrize("key", ["", "   ", "k" * 256])
def test_a_bad_key_is_a_400_naming_the_header_and_creates_nothing(api, applicant, key):
    response = _submit(api, applicant, key)
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_argument"
    assert list(response.json()["errors"]) == ["Idempotency-Key"]
    assert not Ticket.objects.exists() and not IdempotencyRecord.objects.exists()


@pytest.mark.django_db
def test_the_longest_key_is_accepted(api, applicant):
    assert _submit(api, applicant, "k" * 255).status_code == 201


@pytest.mark.django_db
def test_a_refused_request_is_not_remembered(api, applicant):
    refused = _submit(api, applicant, "order-1", {**BODY, "title": ""})
    assert refused.status_code == 400 and not IdempotencyRecord.objects.exists()
    fixed = _submit(api, applicant, "order-1", BODY)  # the client corrects it, same key
    assert fixed.status_code == 201 and Ticket.objects.count() == 1


@pytest.mark.django_db
def test_keys_older_than_a_day_are_purged_by_the_sweep_and_may_be_used_again(api, applicant):
    old = _submit(api, applicant, "old")
    recent = _submit(api, applicant, "recent")
    now = timezone.now()
    IdempotencyRecord.objects.filter(key="old").update(created=now - timedelta(hours=24, seconds=1))
    IdempotencyRecord.objects.filter(key="recent").update(created=now - timedelta(hours=23))
    # Before the sweep has run, a key past its day is a new request.
    fresh = _submit(api, applicant, "old")
    assert fresh.status_code == 201 and fresh.json()["id"] != old.json()["id"]
    IdempotencyRecord.objects.filter(key="old").update(created=now - timedelta(hours=25))
    assert idempotency_purge(now=now) == 1
    assert set(IdempotencyRecord.objects.values_list("key", flat=True)) == {"recent"}
    assert _submit(api, applicant, "recent").json() == recent.json()
    assert purge() == 0  # the task (hourly in beat's schedule): nothing left to purge


@pytest.mark.django_db(transaction=True)
def test_concurrent_requests_with_one_key_create_exactly_one_ticket(live_server):
    applicant = UserFactory()
    token = AuthToken.objects.create(user=applicant)[1]
    headers = {"Authorization": f"Token {token}", "Idempotency-Key": "burst"}

    def post():
        return requests.post(
            f"{live_server.url}/api/tickets/", json=BODY, headers=headers, timeout=30
        )

    answers = run_in_parallel([post] * 6)
    assert [a.status_code for a in answers] == [201] * 6, [getattr(a, "text", a) for a in answers]
    assert len({a.json()["id"] for a in answers}) == 1
    assert sum(a.headers.get("Idempotent-Replayed") == "true" for a in answers) == 5
    assert Ticket.objects.filter(creator=applicant).count() == 1


@pytest.mark.django_db
def test_the_schema_shows_the_header_on_both_operations(api, staff):
    schema = api.as_user(staff).get("/api/schema/?format=json").json()
    for path in ("/api/tickets/", "/api/tickets/{id}/replies/"):
        operation = schema["paths"][path]["post"]
        headers = [p for p in operation["parameters"] if p["in"] == "header"]
        assert [p["name"] for p in headers] == ["Idempotency-Key"], path
        assert "422" in operation["responses"]
