"""`manage.py mail_in --mailbox ADDRESS < message.eml`, run as an MTA runs it: a real
process on the test database, its exit status what the MTA acts on (0 taken, 75 try again
later, 65 unreadable, 67 no such mailbox), one line on stderr."""

import subprocess
import sys
from email.message import EmailMessage
from io import BytesIO

import pytest
from django.core.management import call_command
from django.db import connection, connections

from mail.models import FailedMail, Mailbox, MailMessage
from tests.factories import HandlerGroupFactory, UserFactory
from tests.processes import ROOT, database_url, free_port
from ticketing.models import Ticket

pytestmark = pytest.mark.django_db(transaction=True)

ADDRESS = "it-help@desk.test"


def message(*, message_id="<pipe-1@mail.example.test>", sender="alice@example.test", headers=None):
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = ADDRESS
    msg["Subject"] = "Printer on fire"
    msg["Message-ID"] = message_id
    for name, value in (headers or {}).items():
        msg[name] = value
    msg.set_content("The printer on floor 3 is on fire.\n")
    return msg.as_bytes()


UNPARSEABLE = b"Subject: no sender at all\r\nMessage-ID: <broken-1@x>\r\n\r\nWho wrote this?\r\n"


@pytest.fixture
def mailbox(db):
    group = HandlerGroupFactory(name="IT", members=[UserFactory(username="it_bob")])
    return Mailbox.objects.create(address=ADDRESS, name="IT support", handler_group=group)


@pytest.fixture
def alice(db):
    return UserFactory(username="alice", email="alice@example.test")


def mail_in(raw: bytes, address: str = ADDRESS, **env: str) -> subprocess.CompletedProcess:
    import os

    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": database_url(),
        "LOG_LEVEL": "ERROR",
        **env,
    }
    return subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "mail_in", "--mailbox", address],
        input=raw,
        capture_output=True,
        env=environment,
        cwd=ROOT,
        timeout=120,
    )


def line(result: subprocess.CompletedProcess) -> str:
    lines = result.stderr.decode().strip().splitlines()
    assert len(lines) == 1, result.stderr.decode()
    assert lines[0].startswith("mail_in: ")
    return lines[0]


def test_a_message_becomes_a_ticket_and_exits_0(mailbox, alice):
    result = mail_in(message())
    assert result.returncode == 0, result.stderr.decode()
    ticket = Ticket.objects.get()
    assert ticket.creator == alice and ticket.handler_group_id == mailbox.handler_group_id
    assert line(result) == f"mail_in: ticket pipe-1@mail.example.test ticket={ticket.pk}"
    assert MailMessage.objects.get().mailbox == mailbox


def test_the_same_message_piped_twice_is_one_ticket_and_exits_0_both_times(mailbox, alice):
    assert mail_in(message()).returncode == 0
    again = mail_in(message())
    assert again.returncode == 0, again.stderr.decode()
    assert line(again) == "mail_in: duplicate pipe-1@mail.example.test"
    assert Ticket.objects.count() == 1


def test_the_mailbox_address_is_matched_whatever_its_case(mailbox, alice):
    assert mail_in(message(), address="IT-Help@Desk.TEST").returncode == 0
    assert Ticket.objects.count() == 1


def test_an_automatic_reply_is_taken_without_a_ticket_and_exits_0(mailbox, alice):
    result = mail_in(message(headers={"Auto-Submitted": "auto-replied"}))
    assert result.returncode == 0, result.stderr.decode()
    assert line(result).startswith("mail_in: automatic pipe-1@mail.example.test")
    assert not Ticket.objects.exists()


def test_a_refused_sender_exits_0(mailbox):
    Mailbox.objects.filter(pk=mailbox.pk).update(unknown_senders="reject")
    result = mail_in(message(sender="stranger@elsewhere.test"))
    assert result.returncode == 0, result.stderr.decode()
    assert line(result).startswith("mail_in: refused")
    assert not Ticket.objects.exists()


def test_an_unparseable_message_is_kept_and_exits_65(mailbox):
    result = mail_in(UNPARSEABLE)
    assert result.returncode == 65, result.stderr.decode()
    failed = FailedMail.objects.get()
    assert bytes(failed.raw) == UNPARSEABLE and failed.reason == "unparseable"
    assert failed.source == "pipe" and failed.mailbox == mailbox
    assert line(result) == f"mail_in: kept broken-1@x failed_mail={failed.pk} (unparseable)"
    assert not Ticket.objects.exists()


def test_an_oversized_message_is_kept_and_exits_0(mailbox, alice):
    Mailbox.objects.filter(pk=mailbox.pk).update(max_message_bytes=4096)
    raw = message() + b"x" * 5000
    result = mail_in(raw)
    assert result.returncode == 0, result.stderr.decode()
    assert FailedMail.objects.get().reason == "too_large"
    assert line(result).endswith("(too_large)")


@pytest.mark.parametrize("address", ["nobody@desk.test", "not an address"])
def test_an_unknown_mailbox_exits_67_and_keeps_nothing(mailbox, alice, address):
    result = mail_in(message(), address=address)
    assert result.returncode == 67
    assert "no active mailbox" in line(result)
    assert not MailMessage.objects.exists() and not FailedMail.objects.exists()
    assert not Ticket.objects.exists()


def test_an_inactive_mailbox_exits_67(mailbox, alice):
    Mailbox.objects.filter(pk=mailbox.pk).update(active=False)
    result = mail_in(message())
    assert result.returncode == 67
    assert not Ticket.objects.exists() and not FailedMail.objects.exists()


def test_the_database_down_exits_75_so_the_mta_retries(mailbox, alice):
    closed = f"postgres://postgres@127.0.0.1:{free_port()}/nowhere"
    result = mail_in(message(), DATABASE_URL=closed)
    assert result.returncode == 75, result.stderr.decode()
    assert line(result).startswith("mail_in: tempfail: database: OperationalError")
    # And the MTA's retry, once it is back, delivers it.
    assert not Ticket.objects.exists()
    assert mail_in(message()).returncode == 0
    assert Ticket.objects.count() == 1


def test_redis_down_exits_75_and_keeps_nothing(mailbox, alice):
    closed = f"redis://127.0.0.1:{free_port()}/0"
    result = mail_in(message(), REDIS_URL=closed, CELERY_BROKER_URL=closed)
    assert result.returncode == 75, result.stderr.decode()
    assert line(result).startswith("mail_in: tempfail: redis: ConnectionError")
    assert not MailMessage.objects.exists() and not FailedMail.objects.exists()
    assert not Ticket.objects.exists()


class DatabaseDiesWhileReading(BytesIO):
    """Standard input whose reading ends the command's database session (as a database
    restart would), after the checks passed and before the message is received."""

    def read(self, *args):
        pid = connection.connection.info.backend_pid
        other = connections.create_connection("default")
        try:
            with other.cursor() as cursor:
                cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
        finally:
            other.close()
        return super().read(*args)


def test_the_database_failing_during_receive_exits_75(mailbox, alice):
    from io import StringIO

    stderr = StringIO()
    with pytest.raises(SystemExit) as exited:
        call_command(
            "mail_in", mailbox=ADDRESS, stdin=DatabaseDiesWhileReading(message()), stderr=stderr
        )
    assert exited.value.code == 75
    assert stderr.getvalue().startswith("mail_in: tempfail: database: ")
    connection.close()  # the terminated session; the next query opens a new one
    assert not Ticket.objects.exists() and not MailMessage.objects.exists()
