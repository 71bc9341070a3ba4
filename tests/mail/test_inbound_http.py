"""POST /api/mail/inbound/{id}/: a provider's webhook posts the raw message, signed with the
mailbox's secret (X-Signature: sha256=<HMAC-SHA256 of the body>). 202 once the desk is
responsible for it, 401 for a bad signature, 404 for no (active) mailbox, 413 over the
mailbox's size limit, 503 with Retry-After while the database is down: never a 500, and
nothing kept from a refused request."""

import hashlib
import hmac
import random
from email.message import EmailMessage

import pytest
from django.db import connection

from mail.models import FailedMail, Mailbox, MailMessage
from tests.factories import HandlerGroupFactory, UserFactory
from tests.processes import free_port
from ticketing.models import Ticket

pytestmark = pytest.mark.django_db

SECRET = "provider-shared-secret"


def message(*, message_id="<http-1@mail.example.test>", size=0):
    msg = EmailMessage()
    msg["From"] = "alice@example.test"
    msg["To"] = "it-help@desk.test"
    msg["Subject"] = "Printer on fire"
    msg["Message-ID"] = message_id
    msg.set_content("The printer on floor 3 is on fire.\n" + "x" * size)
    return msg.as_bytes()


UNPARSEABLE = b"Subject: no sender at all\r\nMessage-ID: <broken-2@x>\r\n\r\nWho wrote this?\r\n"


def sign(raw: bytes, secret: str = SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), raw, hashlib.sha256).hexdigest()


@pytest.fixture
def mailbox(db):
    group = HandlerGroupFactory(name="IT", members=[UserFactory(username="it_bob")])
    box = Mailbox(address="it-help@desk.test", name="IT support", handler_group=group)
    box.inbound_secret = SECRET
    box.save()
    return box


@pytest.fixture
def alice(db):
    return UserFactory(username="alice", email="alice@example.test")


@pytest.fixture
def post(client):
    # An address of the test's own: the throttle's history is per mailbox and address.
    address = f"10.{random.randrange(256)}.{random.randrange(256)}.{random.randrange(1, 255)}"

    def _post(mailbox_id, raw, *, signature=None, content_type="message/rfc822", **extra):
        if signature is not None:
            extra["HTTP_X_SIGNATURE"] = signature
        return client.generic(
            "POST",
            f"/api/mail/inbound/{mailbox_id}/",
            raw,
            content_type=content_type,
            REMOTE_ADDR=address,
            **extra,
        )

    return _post


def nothing_kept():
    return not (
        MailMessage.objects.exists() or FailedMail.objects.exists() or Ticket.objects.exists()
    )


def test_a_signed_message_becomes_a_ticket_202(post, mailbox, alice):
    raw = message()
    response = post(mailbox.pk, raw, signature=sign(raw))
    assert response.status_code == 202, response.content
    ticket = Ticket.objects.get()
    assert response.json() == {
        "outcome": "ticket",
        "message_id": "http-1@mail.example.test",
        "ticket_id": ticket.pk,
        "reply_id": None,
        "failed_mail_id": None,
        "detail": "",
    }
    assert ticket.creator == alice
    assert MailMessage.objects.get().mailbox == mailbox


def test_the_same_message_posted_twice_is_one_ticket_and_202_both_times(post, mailbox, alice):
    raw = message()
    assert post(mailbox.pk, raw, signature=sign(raw)).status_code == 202
    again = post(mailbox.pk, raw, signature=sign(raw))
    assert again.status_code == 202
    assert again.json()["outcome"] == "duplicate"
    assert Ticket.objects.count() == 1


@pytest.mark.parametrize("content_type", ["application/json", "text/plain", ""])
def test_the_body_is_the_message_whatever_the_content_type_says(post, mailbox, alice, content_type):
    raw = message()
    response = post(mailbox.pk, raw, signature=sign(raw), content_type=content_type)
    assert response.status_code == 202, response.content
    assert response.json()["outcome"] == "ticket"


def test_an_upper_case_signature_is_the_same_signature(post, mailbox, alice):
    raw = message()
    signature = "sha256=" + sign(raw).removeprefix("sha256=").upper()
    assert post(mailbox.pk, raw, signature=signature).status_code == 202


def test_an_unparseable_message_is_kept_in_failed_mail_and_accepted(post, mailbox):
    response = post(mailbox.pk, UNPARSEABLE, signature=sign(UNPARSEABLE))
    assert response.status_code == 202, response.content
    failed = FailedMail.objects.get()
    assert bytes(failed.raw) == UNPARSEABLE and failed.source == "http"
    body = response.json()
    assert (body["outcome"], body["detail"]) == ("kept", "unparseable")
    assert body["failed_mail_id"] == failed.pk


@pytest.mark.parametrize(
    "signature",
    [
        None,
        "",
        "sha256=",
        "sha256=deadbeef",
        "sha1=" + hmac.new(SECRET.encode(), message(), hashlib.sha1).hexdigest(),
        sign(message(), "another-secret"),
        sign(message() + b" "),  # the body changed after signing
        "sha256=é" + sign(message())[8:],  # not even ASCII
    ],
)
def test_a_bad_or_missing_signature_is_401_and_keeps_nothing(post, mailbox, alice, signature):
    response = post(mailbox.pk, message(), signature=signature)
    assert response.status_code == 401
    assert response.json()["code"] == "not_authenticated"
    assert response["WWW-Authenticate"].startswith("Signature")
    assert nothing_kept()


def test_a_mailbox_without_a_secret_refuses_every_message(post, mailbox, alice):
    Mailbox.objects.filter(pk=mailbox.pk).update(inbound_secret_encrypted="")
    raw = message()
    for signature in (sign(raw, ""), sign(raw)):
        assert post(mailbox.pk, raw, signature=signature).status_code == 401
    assert nothing_kept()


def test_an_account_is_no_authentication(api, mailbox, alice):
    from tests.factories import StaffFactory

    raw = message()
    client = api.as_user(StaffFactory(username="root", is_superuser=True))
    response = client.generic(
        "POST", f"/api/mail/inbound/{mailbox.pk}/", raw, content_type="message/rfc822"
    )
    assert response.status_code == 401
    assert nothing_kept()


def test_an_unknown_or_inactive_mailbox_is_404(post, mailbox, alice):
    raw = message()
    assert post(999_999, raw, signature=sign(raw)).status_code == 404
    Mailbox.objects.filter(pk=mailbox.pk).update(active=False)
    response = post(mailbox.pk, raw, signature=sign(raw))
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"
    assert nothing_kept()


def test_over_the_mailboxs_limit_is_413_and_keeps_nothing(post, mailbox, alice):
    Mailbox.objects.filter(pk=mailbox.pk).update(max_message_bytes=4096)
    raw = message(size=5000)
    response = post(mailbox.pk, raw, signature=sign(raw))
    assert response.status_code == 413
    assert response.json()["code"] == "payload_too_large"
    assert "4096" in response.json()["detail"]
    assert nothing_kept()


def test_a_message_larger_than_other_api_bodies_but_within_the_mailbox_limit_is_taken(
    post, mailbox, alice, settings
):
    """The API's body limit (API_MAX_BODY_BYTES) and the pages' (DATA_UPLOAD_MAX_MEMORY_SIZE)
    are not this endpoint's: a 10 MB attachment is ordinary mail."""
    raw = message(size=max(settings.API_MAX_BODY_BYTES, settings.DATA_UPLOAD_MAX_MEMORY_SIZE) + 1)
    assert len(raw) < mailbox.max_message_bytes
    response = post(mailbox.pk, raw, signature=sign(raw))
    assert response.status_code == 202, response.content
    assert response.json()["outcome"] == "ticket"


def test_an_empty_body_is_400(post, mailbox):
    response = post(mailbox.pk, b"", signature=sign(b""))
    assert response.status_code == 400
    assert "body" in response.json()["errors"]
    assert nothing_kept()


@pytest.mark.django_db(transaction=True)
def test_the_database_down_is_503_with_retry_after(post, mailbox, alice):
    raw = message()
    saved = connection.settings_dict["PORT"]
    connection.close()
    connection.settings_dict["PORT"] = str(free_port())  # nothing listens there
    try:
        response = post(mailbox.pk, raw, signature=sign(raw))
    finally:
        connection.close()
        connection.settings_dict["PORT"] = saved
    assert response.status_code == 503
    assert response.json()["code"] == "unavailable"
    assert int(response["Retry-After"]) > 0
    assert nothing_kept()
    # The provider's retry, once it is back, is taken.
    assert post(mailbox.pk, raw, signature=sign(raw)).status_code == 202


def test_the_throttle_is_per_mailbox_not_the_anonymous_rate(post, mailbox, alice, settings):
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "anon": "1/min", "mail_inbound": "3/min"}
    other = Mailbox(address="hr@desk.test", name="HR")
    other.inbound_secret = SECRET
    other.save()
    statuses = []
    for n in range(4):
        raw = message(message_id=f"<t{n}@x>")
        statuses.append(post(mailbox.pk, raw, signature=sign(raw)).status_code)
    assert statuses == [202, 202, 202, 429]
    raw = message(message_id="<t4@x>")
    limited = post(mailbox.pk, raw, signature=sign(raw))
    assert limited.status_code == 429 and int(limited["Retry-After"]) > 0
    assert post(other.pk, raw, signature=sign(raw)).status_code == 202
    assert not MailMessage.objects.filter(message_id="t3@x").exists()
