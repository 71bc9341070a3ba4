"""Mail in admin: mailboxes whose secrets are written and never shown, messages read-only,
failed mail looked at, downloaded, retried (a held flood released) or dismissed."""

from datetime import UTC, datetime
from email.message import EmailMessage

import pytest

from config.errors import ConflictError
from mail.models import FailedMail, ImapCursor, Mailbox, MailMessage
from mail.services.failed import failed_mail_dismiss, failed_mail_retry
from mail.services.intake import receive
from tests.factories import HandlerGroupFactory, StaffFactory, UserFactory
from ticketing.models import Ticket

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 12, 7, 10, 0, tzinfo=UTC)
ADD = "/admin/mail/mailbox/add/"


def message(*, message_id="<adm-1@mail.example.test>", subject="Printer on fire", size=0):
    msg = EmailMessage()
    msg["From"] = "alice@example.test"
    msg["To"] = "it-help@desk.test"
    msg["Subject"] = subject
    msg["Message-ID"] = message_id
    msg.set_content("The printer on floor 3 is on fire.\n" + "x" * size)
    return msg.as_bytes()


UNPARSEABLE = b"Subject: no sender\r\nMessage-ID: <broken-3@x>\r\nX-Odd: yes\r\n\r\nbody\r\n"


@pytest.fixture
def superuser(client):
    user = StaffFactory(username="root", is_superuser=True)
    client.force_login(user)
    return user


@pytest.fixture
def group(db):
    return HandlerGroupFactory(name="IT", members=[UserFactory(username="it_bob")])


@pytest.fixture
def mailbox(group):
    box = Mailbox(address="it-help@desk.test", name="IT support", handler_group=group)
    box.imap_password = "stored-password"
    box.inbound_secret = "stored-secret"
    box.save()
    return box


@pytest.fixture
def alice(db):
    return UserFactory(username="alice", email="alice@example.test")


def form(mailbox=None, **changes) -> dict:
    data = {
        "address": "help@desk.test",
        "name": "Help",
        "handler_group": "",
        "priority": "2",
        "category": "",
        "unknown_senders": "create_applicant",
        "imap_host": "",
        "imap_port": "993",
        "imap_tls": "on",
        "imap_user": "",
        "imap_password": "",
        "inbound_secret": "",
        "imap_folder": "INBOX",
        "max_message_bytes": "1000000",
        "active": "on",
    }
    if mailbox is not None:
        data.update(
            address=mailbox.address,
            name=mailbox.name,
            handler_group=str(mailbox.handler_group_id or ""),
            imap_host=mailbox.imap_host,
            imap_user=mailbox.imap_user,
            max_message_bytes=str(mailbox.max_message_bytes),
        )
    data.update(changes)
    return {k: v for k, v in data.items() if v is not None}


def change_url(mailbox) -> str:
    return f"/admin/mail/mailbox/{mailbox.pk}/change/"


def snapshot() -> list[dict]:
    return list(Mailbox.objects.order_by("id").values())


# --- mailboxes -------------------------------------------------------------------------


def test_a_mailbox_added_in_admin_has_its_secrets_encrypted(client, superuser, group):
    response = client.post(
        ADD,
        form(
            address="Help@Desk.test",
            handler_group=str(group.pk),
            imap_host="imap.desk.test",
            imap_user="help",
            imap_password="p4ss",
            inbound_secret="hook",
        ),
    )
    assert response.status_code == 302, response.context["adminform"].form.errors
    box = Mailbox.objects.get()
    assert box.address == "help@desk.test"
    assert (box.imap_password, box.inbound_secret) == ("p4ss", "hook")
    assert "p4ss" not in box.imap_password_encrypted


def test_the_change_page_never_shows_a_stored_secret(client, superuser, mailbox):
    page = client.get(change_url(mailbox)).content.decode()
    assert 'type="password" name="imap_password"' in page
    assert 'type="password" name="inbound_secret"' in page
    assert "stored-password" not in page and "stored-secret" not in page
    assert "One is stored" in page
    assert f"/api/mail/inbound/{mailbox.pk}/" in page


def test_secrets_left_empty_are_kept_a_new_one_replaces_a_tick_clears(client, superuser, mailbox):
    response = client.post(change_url(mailbox), form(mailbox, name="Helpdesk"))
    assert response.status_code == 302
    mailbox.refresh_from_db()
    assert mailbox.name == "Helpdesk"
    assert (mailbox.imap_password, mailbox.inbound_secret) == ("stored-password", "stored-secret")

    client.post(change_url(mailbox), form(mailbox, inbound_secret="new-secret"))
    mailbox.refresh_from_db()
    assert (mailbox.imap_password, mailbox.inbound_secret) == ("stored-password", "new-secret")

    client.post(change_url(mailbox), form(mailbox, clear_inbound_secret="on"))
    mailbox.refresh_from_db()
    assert mailbox.inbound_secret_encrypted == "" and mailbox.imap_password == "stored-password"


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"address": "IT-HELP@desk.test"}, "address"),  # another's, in other letters
        ({"imap_host": "imap.desk.test"}, "imap_user"),
        ({"imap_host": "imap.desk.test", "imap_user": "u"}, "imap_password"),
        ({"imap_port": "70000"}, "imap_port"),
        ({"max_message_bytes": "10"}, "max_message_bytes"),
    ],
)
def test_refused_input_is_shown_on_its_field_and_nothing_is_added(
    client, superuser, mailbox, changes, field
):
    before = snapshot()
    response = client.post(ADD, form(**changes))
    assert response.status_code == 200
    assert field in response.context["adminform"].form.errors
    assert snapshot() == before


def test_a_disabled_group_is_refused_on_its_field(client, superuser, mailbox):
    from handler_groups.models import GroupStatus

    off = HandlerGroupFactory(name="Off", status=GroupStatus.DISABLED)
    before = snapshot()
    response = client.post(change_url(mailbox), form(mailbox, handler_group=str(off.pk)))
    assert response.status_code == 200
    assert "handler_group" in response.context["adminform"].form.errors
    assert snapshot() == before


def test_the_list_shows_address_group_active_and_the_last_fetch(client, superuser, mailbox):
    ImapCursor.objects.create(
        mailbox=mailbox, folder="INBOX", fetched=NOW, last_error="AUTHENTICATIONFAILED"
    )
    Mailbox.objects.create(address="quiet@desk.test", name="Quiet")  # never fetched
    page = client.get("/admin/mail/mailbox/").content.decode()
    assert "it-help@desk.test" in page and "quiet@desk.test" in page
    assert "AUTHENTICATIONFAILED" in page and ">IT<" in page


def test_a_mailbox_with_mail_cannot_be_deleted_one_without_can(client, superuser, mailbox):
    MailMessage.objects.create(
        message_id="m@x", direction="in", outcome="ticket", mailbox=mailbox, address="a@x", at=NOW
    )
    url = f"/admin/mail/mailbox/{mailbox.pk}/delete/"
    assert client.post(url, {"post": "yes"}).status_code == 403
    assert Mailbox.objects.filter(pk=mailbox.pk).exists()
    empty = Mailbox.objects.create(address="typo@desk.test", name="Typo")
    response = client.post(f"/admin/mail/mailbox/{empty.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not Mailbox.objects.filter(pk=empty.pk).exists()


# --- messages --------------------------------------------------------------------------


def test_messages_are_read_only_searchable_and_filtered(client, superuser, mailbox, alice):
    receive(mailbox=mailbox, raw=message(), source="pipe", now=NOW)
    receive(
        mailbox=mailbox,
        raw=message(message_id="<adm-2@x>", subject="Toner low"),
        source="pipe",
        now=NOW,
    )
    row = MailMessage.objects.get(message_id="adm-1@mail.example.test")
    assert client.get("/admin/mail/mailmessage/add/").status_code == 403
    page = client.get(f"/admin/mail/mailmessage/{row.pk}/change/")
    assert page.status_code == 200
    assert 'name="_save"' not in page.content.decode()
    deleted = client.post(f"/admin/mail/mailmessage/{row.pk}/delete/", {"post": "yes"})
    assert deleted.status_code == 403
    assert MailMessage.objects.count() == 2

    found = client.get("/admin/mail/mailmessage/", {"q": "<adm-1@mail.example.test>"})
    assert list(found.context["cl"].result_list) == [row]
    by_subject = client.get("/admin/mail/mailmessage/", {"q": "toner"})
    assert [m.message_id for m in by_subject.context["cl"].result_list] == ["adm-2@x"]
    filtered = client.get("/admin/mail/mailmessage/", {"direction": "in", "outcome": "ticket"})
    assert len(filtered.context["cl"].result_list) == 2
    none = client.get("/admin/mail/mailmessage/", {"outcome": "bounce"})
    assert list(none.context["cl"].result_list) == []


# --- failed mail -----------------------------------------------------------------------


@pytest.fixture
def unparseable(mailbox):
    got = receive(mailbox=mailbox, raw=UNPARSEABLE, source="http", now=NOW)
    return FailedMail.objects.get(pk=got.failed_mail_id)


def test_failed_mail_lists_reason_sender_subject_received_status(client, superuser, unparseable):
    page = client.get("/admin/mail/failedmail/").content.decode()
    assert "no sender" in page and "cannot be parsed" in page and "waiting" in page
    assert client.get("/admin/mail/failedmail/add/").status_code == 403


def test_the_detail_shows_the_headers_and_downloads_the_raw_message(client, superuser, unparseable):
    page = client.get(f"/admin/mail/failedmail/{unparseable.pk}/change/").content.decode()
    assert "X-Odd: yes" in page and "Subject: no sender" in page
    assert 'name="_save"' not in page
    assert f"/admin/mail/failedmail/{unparseable.pk}/retry/" in page
    raw = client.get(f"/admin/mail/failedmail/{unparseable.pk}/raw/")
    assert raw.status_code == 200
    assert raw["Content-Type"] == "message/rfc822"
    assert raw["Content-Disposition"] == f'attachment; filename="failed-mail-{unparseable.pk}.eml"'
    assert raw.content == UNPARSEABLE


def test_only_staff_with_the_permission_download_or_retry(client, unparseable):
    client.force_login(StaffFactory(username="plain_staff"))
    assert client.get(f"/admin/mail/failedmail/{unparseable.pk}/raw/").status_code == 403
    assert client.post(f"/admin/mail/failedmail/{unparseable.pk}/retry/").status_code == 403
    unparseable.refresh_from_db()
    assert unparseable.status == "waiting" and unparseable.retried is None


def test_retry_after_the_fix_receives_it_and_marks_it_retried(client, superuser, mailbox, alice):
    Mailbox.objects.filter(pk=mailbox.pk).update(max_message_bytes=4096)
    got = receive(mailbox=Mailbox.objects.get(), raw=message(size=5000), source="imap", now=NOW)
    assert got.detail == "too_large"
    Mailbox.objects.filter(pk=mailbox.pk).update(max_message_bytes=1_000_000)  # the fix
    response = client.post(
        "/admin/mail/failedmail/", {"action": "retry", "_selected_action": [got.failed_mail_id]}
    )
    assert response.status_code == 302
    failed = FailedMail.objects.get()
    assert failed.status == "retried" and failed.retried is not None
    ticket = Ticket.objects.get()
    assert ticket.creator == alice
    assert MailMessage.objects.get().ticket == ticket


def test_a_retry_that_fails_again_keeps_it_waiting(client, superuser, unparseable):
    response = client.post(f"/admin/mail/failedmail/{unparseable.pk}/retry/")
    assert response.status_code == 302
    assert response["Location"] == f"/admin/mail/failedmail/{unparseable.pk}/change/"
    assert FailedMail.objects.count() == 1
    unparseable.refresh_from_db()
    assert unparseable.status == "waiting" and unparseable.reason == "unparseable"
    assert unparseable.retried is not None
    assert not Ticket.objects.exists()


def test_the_retry_command_takes_only_a_post(client, superuser, unparseable):
    assert client.get(f"/admin/mail/failedmail/{unparseable.pk}/retry/").status_code == 405
    unparseable.refresh_from_db()
    assert unparseable.retried is None


def test_a_held_flood_is_released_by_a_retry(mailbox, alice, settings):
    settings.MAIL_FLOOD_PER_HOUR = 1
    first = receive(mailbox=mailbox, raw=message(), source="imap", now=NOW)
    held = receive(mailbox=mailbox, raw=message(message_id="<adm-2@x>"), source="imap", now=NOW)
    assert (first.outcome, held.outcome, held.detail) == ("ticket", "kept", "flood")
    result = failed_mail_retry(failed_mail_id=held.failed_mail_id, now=NOW)
    assert result.outcome == "ticket"
    assert Ticket.objects.count() == 2
    assert FailedMail.objects.get().status == "retried"


def test_a_message_that_arrived_meanwhile_makes_the_retry_a_duplicate(mailbox, alice, settings):
    settings.MAIL_FLOOD_PER_HOUR = 0
    held = receive(mailbox=mailbox, raw=message(), source="imap", now=NOW)
    assert held.detail == "flood"
    settings.MAIL_FLOOD_PER_HOUR = 20
    FailedMail.objects.update(status="dismissed")  # out of the way: the message comes again
    receive(mailbox=mailbox, raw=message(), source="pipe", now=NOW)
    FailedMail.objects.update(status="waiting")
    result = failed_mail_retry(failed_mail_id=held.failed_mail_id, now=NOW)
    assert result.outcome == "duplicate"
    assert Ticket.objects.count() == 1
    assert FailedMail.objects.get().status == "retried"


def test_dismissed_mail_is_neither_retried_nor_dismissed_again(client, superuser, unparseable):
    response = client.post(
        "/admin/mail/failedmail/", {"action": "dismiss", "_selected_action": [unparseable.pk]}
    )
    assert response.status_code == 302
    unparseable.refresh_from_db()
    assert unparseable.status == "dismissed"
    before = list(FailedMail.objects.values())
    with pytest.raises(ConflictError):
        failed_mail_retry(failed_mail_id=unparseable.pk, now=NOW)
    with pytest.raises(ConflictError):
        failed_mail_dismiss(failed_mail_id=unparseable.pk)
    client.post(
        "/admin/mail/failedmail/", {"action": "retry", "_selected_action": [unparseable.pk]}
    )
    assert list(FailedMail.objects.values()) == before
    page = client.get(f"/admin/mail/failedmail/{unparseable.pk}/change/").content.decode()
    assert "/retry/" not in page


def test_every_mail_admin_page_renders(client, superuser, mailbox, unparseable, alice):
    receive(mailbox=mailbox, raw=message(), source="pipe", now=NOW)
    for name in ("mailbox", "mailmessage", "failedmail"):
        assert client.get(f"/admin/mail/{name}/").status_code == 200, name
    assert client.get(ADD).status_code == 200
    assert client.get(change_url(mailbox)).status_code == 200
    message_row = MailMessage.objects.get()
    assert client.get(f"/admin/mail/mailmessage/{message_row.pk}/change/").status_code == 200
