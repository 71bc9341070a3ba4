"""The mailbox API (/api/mailboxes/): staff only, secrets write-only and stored encrypted,
bad input a 400 naming the field, a mailbox with mail kept (409) rather than deleted."""

from datetime import UTC, datetime

import pytest

from handler_groups.models import GroupStatus
from mail.models import FailedMail, ImapCursor, Mailbox, MailMessage
from tests.factories import HandlerGroupFactory, StaffFactory, UserFactory
from ticketing.models import Category

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 12, 7, 10, 0, tzinfo=UTC)
URL = "/api/mailboxes/"

FIELDS = {
    "id",
    "address",
    "name",
    "handler_group_id",
    "priority",
    "category",
    "unknown_senders",
    "imap_host",
    "imap_port",
    "imap_tls",
    "imap_user",
    "imap_folder",
    "max_message_bytes",
    "active",
    "has_imap_password",
    "has_inbound_secret",
    "inbound_url",
    "last_fetched",
    "last_error",
}


@pytest.fixture
def admin_api(api):
    return api.as_user(StaffFactory(username="mail_admin"))


@pytest.fixture
def group(db):
    return HandlerGroupFactory(name="IT")


@pytest.fixture
def mailbox(group):
    box = Mailbox(address="it-help@desk.test", name="IT support", handler_group=group)
    box.imap_password = "old-password"
    box.inbound_secret = "old-secret"
    box.save()
    return box


def snapshot() -> list[dict]:
    return list(Mailbox.objects.order_by("id").values())


def field_errors(response) -> dict:
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["code"] == "invalid_argument"
    return body["errors"]


def test_staff_create_a_mailbox_and_get_it_back_without_its_secrets(admin_api, group, settings):
    Category.objects.create(name="hardware")
    response = admin_api.post(
        URL,
        {
            "address": "IT-Help@Desk.test",
            "name": "IT support",
            "handler_group_id": group.pk,
            "priority": 3,
            "category": "hardware",
            "unknown_senders": "reject",
            "imap_host": "imap.desk.test",
            "imap_port": 143,
            "imap_tls": False,
            "imap_user": "it-help",
            "imap_password": "s3cret pass",
            "inbound_secret": "hook-key",
            "imap_folder": "Support",
            "max_message_bytes": 5_000_000,
            "active": True,
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert set(body) == FIELDS
    box = Mailbox.objects.get()
    assert body["id"] == box.pk
    assert body["address"] == "it-help@desk.test"  # matched case-insensitively: stored lower
    assert body["has_imap_password"] is body["has_inbound_secret"] is True
    assert body["inbound_url"] == f"{settings.SITE_URL.rstrip('/')}/api/mail/inbound/{box.pk}/"
    assert body["last_fetched"] is None and body["last_error"] is None
    assert (body["priority"], body["unknown_senders"], body["imap_port"]) == (3, "reject", 143)
    # Encrypted at rest, readable by the desk.
    assert box.imap_password == "s3cret pass" and box.inbound_secret == "hook-key"
    assert "s3cret" not in box.imap_password_encrypted
    assert "hook-key" not in box.inbound_secret_encrypted
    assert "s3cret" not in response.content.decode()


def test_a_mailbox_needs_only_an_address_and_a_name(admin_api):
    response = admin_api.post(URL, {"address": "help@desk.test", "name": "Help"}, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["imap_host"] == "" and body["imap_folder"] == "INBOX"
    assert body["has_imap_password"] is False and body["has_inbound_secret"] is False
    assert body["active"] is True and body["unknown_senders"] == "create_applicant"


def test_list_and_get_show_the_last_fetch(admin_api, mailbox):
    ImapCursor.objects.create(
        mailbox=mailbox, folder="INBOX", fetched=NOW, last_error="LOGIN failed"
    )
    listed = admin_api.get(URL)
    assert listed.status_code == 200
    [row] = listed.json()["results"]
    assert row["last_fetched"] == "2026-12-07T10:00:00Z"
    assert row["last_error"] == "LOGIN failed"
    one = admin_api.get(f"{URL}{mailbox.pk}/").json()
    assert one == row
    assert "imap_password" not in one and "inbound_secret" not in one


def test_patch_changes_only_what_it_names_and_keeps_the_secrets(admin_api, mailbox):
    response = admin_api.patch(
        f"{URL}{mailbox.pk}/", {"name": "Helpdesk", "active": False}, format="json"
    )
    assert response.status_code == 200, response.content
    mailbox.refresh_from_db()
    assert (mailbox.name, mailbox.active) == ("Helpdesk", False)
    assert mailbox.imap_password == "old-password" and mailbox.inbound_secret == "old-secret"
    assert mailbox.address == "it-help@desk.test"


def test_patch_replaces_or_clears_a_secret(admin_api, mailbox):
    admin_api.patch(f"{URL}{mailbox.pk}/", {"inbound_secret": "new-secret"}, format="json")
    mailbox.refresh_from_db()
    assert mailbox.inbound_secret == "new-secret" and mailbox.imap_password == "old-password"
    response = admin_api.patch(f"{URL}{mailbox.pk}/", {"inbound_secret": ""}, format="json")
    assert response.json()["has_inbound_secret"] is False
    mailbox.refresh_from_db()
    assert mailbox.inbound_secret_encrypted == ""


def test_put_is_not_offered(admin_api, mailbox):
    response = admin_api.put(
        f"{URL}{mailbox.pk}/", {"address": "x@desk.test", "name": "X"}, format="json"
    )
    assert response.status_code == 405


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"address": "not-an-address"}, "address"),
        ({"address": "IT-HELP@desk.test"}, "address"),  # taken, whatever its case
        ({"name": ""}, "name"),
        ({"handler_group_id": 999_999}, "handler_group_id"),
        ({"priority": 9}, "priority"),
        ({"priority": "urgent"}, "priority"),
        ({"unknown_senders": "ignore"}, "unknown_senders"),
        ({"imap_port": 0}, "imap_port"),
        ({"imap_port": 65536}, "imap_port"),
        ({"imap_port": "imap"}, "imap_port"),
        ({"imap_host": "imap.desk.test", "imap_password": "pw"}, "imap_user"),
        ({"imap_host": "imap.desk.test", "imap_user": "u"}, "imap_password"),
        ({"max_message_bytes": 10}, "max_message_bytes"),
        ({"max_message_bytes": 10**12}, "max_message_bytes"),
        ({"imap_folder": ""}, "imap_folder"),
        ({"category": "x" * 51}, "category"),
        ({"imap_password": "x" * 1001}, "imap_password"),
        ({"active": "perhaps"}, "active"),
    ],
)
def test_bad_input_is_a_400_naming_the_field_and_creates_nothing(admin_api, mailbox, body, field):
    before = snapshot()
    response = admin_api.post(
        URL, {"address": "new@desk.test", "name": "New", **body}, format="json"
    )
    assert field in field_errors(response)
    assert snapshot() == before


def test_a_disabled_group_is_refused_on_create(admin_api, mailbox):
    disabled = HandlerGroupFactory(name="Old", status=GroupStatus.DISABLED)
    before = snapshot()
    response = admin_api.post(
        URL,
        {"address": "new@desk.test", "name": "New", "handler_group_id": disabled.pk},
        format="json",
    )
    assert "handler_group_id" in field_errors(response)
    assert snapshot() == before


def test_a_group_disabled_later_does_not_block_other_changes(admin_api, mailbox, group):
    group.status = GroupStatus.DISABLED
    group.save(update_fields=["status"])
    response = admin_api.patch(f"{URL}{mailbox.pk}/", {"name": "Renamed"}, format="json")
    assert response.status_code == 200, response.content
    other = HandlerGroupFactory(name="Also off", status=GroupStatus.DISABLED)
    before = snapshot()
    response = admin_api.patch(f"{URL}{mailbox.pk}/", {"handler_group_id": other.pk}, format="json")
    assert "handler_group_id" in field_errors(response)
    assert snapshot() == before


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"imap_host": "imap.desk.test"}, "imap_user"),  # the stored password is not enough
        ({"address": "taken@desk.test"}, "address"),
        ({"imap_port": -1}, "imap_port"),
        ({"priority": None}, "priority"),
    ],
)
def test_bad_changes_are_a_400_naming_the_field_and_change_nothing(admin_api, mailbox, body, field):
    Mailbox.objects.create(address="taken@desk.test", name="Taken")
    before = snapshot()
    response = admin_api.patch(f"{URL}{mailbox.pk}/", body, format="json")
    assert field in field_errors(response)
    assert snapshot() == before


def test_an_imap_host_with_user_and_the_stored_password_is_accepted(admin_api, mailbox):
    response = admin_api.patch(
        f"{URL}{mailbox.pk}/", {"imap_host": "imap.desk.test", "imap_user": "it"}, format="json"
    )
    assert response.status_code == 200, response.content
    mailbox.refresh_from_db()
    assert mailbox.uses_imap and mailbox.imap_password == "old-password"


def test_clearing_the_password_of_an_imap_mailbox_is_refused(admin_api, mailbox):
    Mailbox.objects.filter(pk=mailbox.pk).update(imap_host="imap.desk.test", imap_user="it")
    before = snapshot()
    response = admin_api.patch(f"{URL}{mailbox.pk}/", {"imap_password": ""}, format="json")
    assert "imap_password" in field_errors(response)
    assert snapshot() == before


def test_a_mailbox_without_mail_is_deleted(admin_api, mailbox):
    ImapCursor.objects.create(mailbox=mailbox, folder="INBOX")
    response = admin_api.delete(f"{URL}{mailbox.pk}/")
    assert response.status_code == 204
    assert not Mailbox.objects.exists() and not ImapCursor.objects.exists()


@pytest.mark.parametrize("kind", ["message", "failed"])
def test_a_mailbox_with_mail_is_a_409_and_stays(admin_api, mailbox, kind):
    if kind == "message":
        MailMessage.objects.create(
            message_id="m1@x",
            direction="in",
            outcome="ticket",
            mailbox=mailbox,
            address="a@x",
            at=NOW,
        )
    else:
        FailedMail.objects.create(
            mailbox=mailbox, raw=b"x", size=1, reason="unparseable", source="pipe", received=NOW
        )
    before = snapshot()
    response = admin_api.delete(f"{URL}{mailbox.pk}/")
    assert response.status_code == 409
    assert response.json()["code"] == "conflict"
    assert "active" in response.json()["detail"]
    assert snapshot() == before


def test_anonymous_callers_get_401_and_others_403_and_nothing_changes(api, mailbox):
    before = snapshot()
    detail = f"{URL}{mailbox.pk}/"
    for method, url in [("get", URL), ("post", URL), ("get", detail), ("patch", detail)]:
        assert getattr(api, method)(url, {}, format="json").status_code == 401
    assert api.delete(detail).status_code == 401
    api.as_user(UserFactory(username="someone"))
    for method, url in [("get", URL), ("post", URL), ("get", detail), ("patch", detail)]:
        response = getattr(api, method)(url, {"name": "Mine"}, format="json")
        assert response.status_code == 403, (method, url)
    assert api.delete(detail).status_code == 403
    assert snapshot() == before


def test_unknown_ids_are_404(admin_api):
    assert admin_api.get(f"{URL}999999/").status_code == 404
    assert admin_api.patch(f"{URL}999999/", {}, format="json").status_code == 404
    assert admin_api.delete(f"{URL}999999/").status_code == 404
    assert admin_api.get(f"{URL}abc/").status_code == 404


def test_the_schema_documents_the_mailboxes_and_the_inbound_endpoint(client):
    schema = client.get("/api/schema/?format=json").json()
    paths = schema["paths"]
    assert set(paths["/api/mailboxes/"]) == {"get", "post"}
    assert set(paths["/api/mailboxes/{id}/"]) == {"get", "patch", "delete"}
    assert set(paths["/api/mailboxes/{id}/"]["delete"]["responses"]) >= {"204", "409"}
    components = schema["components"]["schemas"]
    # The secrets are in what is written, never in what is read.
    assert {"imap_password", "inbound_secret"} <= set(components["MailboxRequest"]["properties"])
    read = components["Mailbox"]["properties"]
    assert "imap_password" not in read and "inbound_secret" not in read
    assert read["has_inbound_secret"]["readOnly"] is True
    assert components["MailboxRequest"]["required"] == ["address", "name"]
    inbound = paths["/api/mail/inbound/{id}/"]["post"]
    assert "message/rfc822" in inbound["requestBody"]["content"]
    assert {"202", "401", "404", "413", "503"} <= set(inbound["responses"])
    parameters = {p["name"]: p for p in inbound["parameters"]}
    assert set(parameters) == {"id", "X-Signature"}
    assert parameters["X-Signature"]["in"] == "header" and parameters["X-Signature"]["required"]
    assert "security" not in inbound and "security" not in schema  # no account: the signature
