"""IMAP mail-in (mail.services.fetching) against a real Dovecot: new mail becomes tickets,
each message is marked only once committed, a crash or an outage between fetch and commit
loses and duplicates nothing, and one mailbox's failure never stops the others."""

import importlib
import threading

import pytest
from celery.exceptions import SoftTimeLimitExceeded
from django.apps import apps
from django.db import OperationalError
from django_celery_beat.models import PeriodicTask

from mail import tasks
from mail.models import ImapCursor, MailMessage
from mail.services import fetching, intake
from tests.factories import HandlerGroupFactory, UserFactory
from tests.mail import imap_fixtures
from tests.mail.imap_fixtures import NOW, rfc822, server_ssl_context
from ticketing.models import Category, Ticket, TicketReply

dovecot = imap_fixtures.dovecot
imap_account = imap_fixtures.imap_account


@pytest.fixture
def people(db):
    handler = UserFactory(username="it_bob", email="bob@desk.test")
    group = HandlerGroupFactory(name="IT", members=[handler])
    alice = UserFactory(username="alice", email="alice@example.test")
    return group, alice


@pytest.fixture
def mailbox(imap_account, people):
    group, _ = people
    Category.objects.get_or_create(name="hardware")
    return imap_account.mailbox(handler_group=group, priority=3, category="hardware")


def test_a_new_message_in_the_folder_is_a_ticket_after_one_fetch(imap_account, mailbox, people):
    _, alice = people
    uid = imap_account.append(rfc822(message_id="<first@example.test>"))

    result = fetching.fetch_mailbox(mailbox_id=mailbox.pk, now=NOW)

    assert (result.fetched, result.ticket, result.errors, result.more) == (1, 1, 0, False)
    ticket = Ticket.objects.get()
    assert ticket.title == "Printer on fire"
    assert ticket.creator_id == alice.pk
    message = MailMessage.objects.get(message_id="first@example.test")
    assert (message.ticket_id, message.outcome, message.mailbox_id) == (
        ticket.pk,
        "ticket",
        mailbox.pk,
    )
    assert imap_account.seen(uid)
    cursor = ImapCursor.objects.get(mailbox=mailbox)
    assert (cursor.last_uid, cursor.uidvalidity) == (uid, imap_account.uidvalidity())
    assert (cursor.fetched, cursor.last_error) == (NOW, "")

    again = fetching.fetch_mailbox(mailbox_id=mailbox.pk, now=NOW)
    assert (again.fetched, again.processed) == (0, 0)
    assert Ticket.objects.count() == 1


def test_a_reply_in_the_folder_threads_onto_its_ticket(imap_account, mailbox, people):
    imap_account.append(rfc822(message_id="<start@example.test>"))
    imap_account.append(
        rfc822(
            message_id="<answer@example.test>",
            subject="Re: Printer on fire",
            body="Still burning.\n",
            in_reply_to="<start@example.test>",
        )
    )

    result = fetching.fetch_mailbox(mailbox_id=mailbox.pk, now=NOW)

    assert (result.fetched, result.ticket, result.reply) == (2, 1, 1)
    ticket = Ticket.objects.get()
    assert TicketReply.objects.get(ticket=ticket).content.strip().startswith("Still burning.")


def test_a_message_is_marked_seen_only_after_what_it_became_is_committed(
    imap_account, mailbox, monkeypatch
):
    uid = imap_account.append(rfc822(message_id="<mark@example.test>"))
    during: dict = {}
    real_receive = intake.receive

    def receive(**kwargs):
        during["seen"] = imap_account.seen(uid)  # read with BODY.PEEK: not marked
        got = real_receive(**kwargs)
        during["seen_after_commit"] = imap_account.seen(uid)
        return got

    monkeypatch.setattr(fetching.intake, "receive", receive)
    fetching.fetch_mailbox(mailbox_id=mailbox.pk, now=NOW)

    assert during == {"seen": False, "seen_after_commit": False}
    assert imap_account.seen(uid)


def test_an_outage_between_fetch_and_commit_loses_nothing_and_duplicates_nothing(
    imap_account, mailbox, monkeypatch
):
    first = imap_account.append(rfc822(message_id="<one@example.test>", subject="One"))
    second = imap_account.append(rfc822(message_id="<two@example.test>", subject="Two"))
    third = imap_account.append(rfc822(message_id="<three@example.test>", subject="Three"))
    real_receive = intake.receive

    def database_down_for_the_second(**kwargs):
        if b"<two@example.test>" in kwargs["raw"]:
            raise OperationalError("connection to server was lost")
        return real_receive(**kwargs)

    monkeypatch.setattr(fetching.intake, "receive", database_down_for_the_second)
    result = fetching.fetch_mailbox(mailbox_id=mailbox.pk, now=NOW)

    assert (result.fetched, result.ticket, result.errors) == (2, 1, 1)
    assert "OperationalError" in result.error
    assert list(Ticket.objects.values_list("title", flat=True)) == ["One"]
    assert imap_account.seen(first)
    assert not imap_account.seen(second)
    assert not imap_account.seen(third)  # the fetch stopped at the outage
    cursor = ImapCursor.objects.get(mailbox=mailbox)
    assert cursor.last_uid == first
    assert "OperationalError" in cursor.last_error

    monkeypatch.setattr(fetching.intake, "receive", real_receive)
    result = fetching.fetch_mailbox(mailbox_id=mailbox.pk, now=NOW)

    assert (result.fetched, result.ticket, result.duplicate, result.errors) == (2, 2, 0, 0)
    assert sorted(Ticket.objects.values_list("title", flat=True)) == ["One", "Three", "Two"]
    assert MailMessage.objects.count() == 3
    assert imap_account.seen(second) and imap_account.seen(third)
    cursor.refresh_from_db()
    assert (cursor.last_uid, cursor.last_error) == (third, "")


def test_a_crash_after_the_commit_but_before_the_mark_reads_the_message_again_as_a_duplicate(
    imap_account, mailbox, monkeypatch
):
    uid = imap_account.append(rfc822(message_id="<once@example.test>"))
    real_receive = intake.receive

    def committed_then_the_worker_dies(**kwargs):
        real_receive(**kwargs)
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(fetching.intake, "receive", committed_then_the_worker_dies)
    fetching.fetch_mailbox(mailbox_id=mailbox.pk, now=NOW)
    assert not imap_account.seen(uid)
    assert ImapCursor.objects.get(mailbox=mailbox).last_uid == 0

    monkeypatch.setattr(fetching.intake, "receive", real_receive)
    result = fetching.fetch_mailbox(mailbox_id=mailbox.pk, now=NOW)

    assert (result.fetched, result.duplicate, result.ticket) == (1, 1, 0)
    assert Ticket.objects.count() == 1
    assert imap_account.seen(uid)
    assert ImapCursor.objects.get(mailbox=mailbox).last_uid == uid


def test_the_same_message_id_appended_twice_is_one_ticket(imap_account, mailbox):
    raw = rfc822(message_id="<twice@example.test>")
    first = imap_account.append(raw)
    second = imap_account.append(raw)

    result = fetching.fetch_mailbox(mailbox_id=mailbox.pk, now=NOW)

    assert (result.fetched, result.ticket, result.duplicate) == (2, 1, 1)
    assert Ticket.objects.count() == 1
    assert MailMessage.objects.filter(message_id="twice@example.test").count() == 1
    assert imap_account.seen(first) and imap_account.seen(second)


def test_a_new_uidvalidity_reads_the_folder_again_and_skips_what_was_received(imap_account, people):
    group, _ = people
    mailbox = imap_account.mailbox(handler_group=group, imap_folder="Support desk")
    imap_account.append(rfc822(message_id="<before@example.test>"), folder="Support desk")
    fetching.fetch_mailbox(mailbox_id=mailbox.pk, now=NOW)
    old = ImapCursor.objects.get(mailbox=mailbox)
    assert old.last_uid == 1

    # The folder is recreated (a server migration): UIDs start again at 1.
    imap_account.recreate("Support desk")
    imap_account.append(rfc822(message_id="<before@example.test>"), folder="Support desk")
    new_uid = imap_account.append(
        rfc822(message_id="<after@example.test>", subject="Screen dark"), folder="Support desk"
    )
    assert new_uid == 2

    result = fetching.fetch_mailbox(mailbox_id=mailbox.pk, now=NOW)

    assert (result.fetched, result.duplicate, result.ticket) == (2, 1, 1)
    cursor = ImapCursor.objects.get(mailbox=mailbox)
    assert cursor.uidvalidity == imap_account.uidvalidity("Support desk") != old.uidvalidity
    assert cursor.last_uid == 2
    assert sorted(Ticket.objects.values_list("title", flat=True)) == [
        "Printer on fire",
        "Screen dark",
    ]
    assert imap_account.seen(1, folder="Support desk")


def test_a_folder_with_a_non_ascii_name_is_read(imap_account, people):
    group, _ = people
    mailbox = imap_account.mailbox(handler_group=group, imap_folder="工单 & requests")
    # The name on the wire, in modified UTF-7 (RFC 3501 5.1.3): 工单 is U+5DE5 U+5355.
    imap_account.append(rfc822(message_id="<cjk@example.test>"), folder="&XeVTVQ- &- requests")

    result = fetching.fetch_mailbox(mailbox_id=mailbox.pk, now=NOW)

    assert (result.fetched, result.ticket, result.error) == (1, 1, "")


def test_a_tls_mailbox_reads_over_imaps_trusting_the_configured_ca(
    imap_account, dovecot, people, settings
):
    group, _ = people
    mailbox = imap_account.mailbox(handler_group=group, tls=True)
    uid = imap_account.append(rfc822(message_id="<tls@example.test>"))

    untrusted = fetching.fetch_mailbox(mailbox_id=mailbox.pk, now=NOW)
    assert (untrusted.fetched, untrusted.errors) == (0, 1)
    assert "CERTIFICATE_VERIFY_FAILED" in untrusted.error
    assert not imap_account.seen(uid)
    assert Ticket.objects.count() == 0

    settings.MAIL_IMAP_CA_FILE = str(dovecot.cert_file)
    result = fetching.fetch_mailbox(mailbox_id=mailbox.pk, now=NOW)

    assert (result.fetched, result.ticket, result.errors) == (1, 1, 0)
    assert imap_account.seen(uid)
    assert ImapCursor.objects.get(mailbox=mailbox).last_error == ""


def test_an_ssl_context_given_to_the_fetch_is_used(imap_account, dovecot, people):
    group, _ = people
    mailbox = imap_account.mailbox(handler_group=group, tls=True)
    imap_account.append(rfc822(message_id="<ctx@example.test>"))

    result = fetching.fetch_mailbox(
        mailbox_id=mailbox.pk, now=NOW, ssl_context=server_ssl_context(dovecot)
    )

    assert (result.ticket, result.errors) == (1, 0)


def test_a_wrong_password_is_recorded_and_the_other_mailboxes_are_still_fetched(
    imap_account, dovecot, people
):
    group, _ = people
    broken = imap_account.mailbox(address="broken@desk.test", handler_group=group)
    broken.imap_password = "not-the-password"
    broken.save()
    uid = imap_account.append(rfc822(message_id="<pw@example.test>"))
    from tests.mail.imap_fixtures import ImapAccount

    other_account = ImapAccount(server=dovecot, user="desk-other", password="other-secret")
    dovecot.add_user(other_account.user, other_account.password)
    working = other_account.mailbox(address="it-help@desk.test", handler_group=group)
    other_uid = other_account.append(rfc822(message_id="<ok@example.test>"))

    results = {r.mailbox_id: r for r in fetching.fetch_all(now=NOW)}

    assert results[broken.pk].errors == 1
    assert "AUTHENTICATIONFAILED" in results[broken.pk].error
    assert "AUTHENTICATIONFAILED" in ImapCursor.objects.get(mailbox=broken).last_error
    assert not imap_account.seen(uid)
    assert (results[working.pk].ticket, results[working.pk].errors) == (1, 0)
    assert other_account.seen(other_uid)
    assert list(MailMessage.objects.values_list("message_id", flat=True)) == ["ok@example.test"]

    broken.imap_password = imap_account.password
    broken.save()
    results = {r.mailbox_id: r for r in fetching.fetch_all(now=NOW)}
    assert (results[broken.pk].ticket, results[broken.pk].errors) == (1, 0)
    assert ImapCursor.objects.get(mailbox=broken).last_error == ""


def test_an_unreachable_server_is_recorded_not_raised(imap_account, people):
    group, _ = people
    mailbox = imap_account.mailbox(handler_group=group)
    mailbox.imap_port = 1  # nothing listens there
    mailbox.save()

    [result] = fetching.fetch_all(now=NOW)

    assert result.errors == 1
    assert "refused" in ImapCursor.objects.get(mailbox=mailbox).last_error.lower()


def test_an_inactive_mailbox_is_not_fetched(imap_account, people):
    group, _ = people
    mailbox = imap_account.mailbox(handler_group=group, active=False)
    uid = imap_account.append(rfc822(message_id="<asleep@example.test>"))

    assert fetching.fetch_all(now=NOW) == []
    assert fetching.fetch_mailbox(mailbox_id=mailbox.pk, now=NOW).skipped == "inactive"

    assert not imap_account.seen(uid)
    assert Ticket.objects.count() == 0
    assert not ImapCursor.objects.filter(mailbox=mailbox).exists()


def test_a_backlog_is_read_in_batches_until_it_is_done(imap_account, mailbox):
    uids = [
        imap_account.append(rfc822(message_id=f"<b{i}@example.test>", subject=f"Issue {i}"))
        for i in range(5)
    ]

    first = fetching.fetch_mailbox(mailbox_id=mailbox.pk, now=NOW, batch=2)
    assert (first.fetched, first.more) == (2, True)
    assert ImapCursor.objects.get(mailbox=mailbox).last_uid == uids[1]

    [rest] = fetching.fetch_all(now=NOW, batch=2)
    assert (rest.fetched, rest.ticket, rest.more) == (3, 3, False)
    assert Ticket.objects.count() == 5
    assert all(imap_account.seen(uid) for uid in uids)


def test_the_tasks_time_limit_stops_the_fetch_with_nothing_marked_and_the_lock_free(
    imap_account, mailbox, monkeypatch
):
    uid = imap_account.append(rfc822(message_id="<late@example.test>"))
    real_receive = intake.receive

    def time_is_up(**kwargs):
        raise SoftTimeLimitExceeded()

    monkeypatch.setattr(fetching.intake, "receive", time_is_up)
    with pytest.raises(SoftTimeLimitExceeded):
        fetching.fetch_all(now=NOW)
    assert not imap_account.seen(uid)
    assert ImapCursor.objects.get(mailbox=mailbox).last_uid == 0

    monkeypatch.setattr(fetching.intake, "receive", real_receive)
    result = fetching.fetch_mailbox(mailbox_id=mailbox.pk, now=NOW)
    assert (result.skipped, result.ticket) == ("", 1)
    assert imap_account.seen(uid)


def test_the_task_fetches_every_mailbox(imap_account, mailbox):
    imap_account.append(rfc822(message_id="<task@example.test>"))

    [result] = tasks.fetch_all()

    assert (result["mailbox_id"], result["ticket"], result["errors"]) == (mailbox.pk, 1, 0)


def test_the_fetch_is_scheduled_every_30_seconds_off_the_critical_queue(db):
    importlib.import_module("mail.migrations.0002_fetch_schedule").install(apps, None)
    task = PeriodicTask.objects.get(task=tasks.FETCH_ALL_TASK)
    assert (task.interval.every, task.interval.period, task.expire_seconds) == (30, "seconds", 25)
    assert tasks.fetch_all.soft_time_limit > fetching.FETCH_ALL_BUDGET_SECONDS
    assert tasks.fetch_all.time_limit > tasks.fetch_all.soft_time_limit


@pytest.mark.django_db(transaction=True)
def test_two_workers_never_fetch_one_mailbox_at_once(imap_account, monkeypatch):
    """Worker A is inside intake with the mailbox's first message when worker B starts: B
    skips the mailbox, A reads everything, each message once."""
    mailbox = imap_account.mailbox()
    for i in range(3):
        imap_account.append(rfc822(message_id=f"<w{i}@example.test>", subject=f"Issue {i}"))
    a_inside, b_done = threading.Event(), threading.Event()
    real_receive = intake.receive

    def receive(**kwargs):
        if threading.current_thread().name == "worker-a" and not a_inside.is_set():
            a_inside.set()
            assert b_done.wait(20)
        return real_receive(**kwargs)

    monkeypatch.setattr(fetching.intake, "receive", receive)
    results = {}

    def worker(name):
        from django.db import connection

        try:
            results[name] = fetching.fetch_mailbox(mailbox_id=mailbox.pk)
        finally:
            connection.close()

    a = threading.Thread(target=worker, args=("a",), name="worker-a")
    a.start()
    assert a_inside.wait(20)
    b = threading.Thread(target=worker, args=("b",), name="worker-b")
    b.start()
    b.join(20)
    b_done.set()
    a.join(20)

    assert results["b"].skipped == "locked" and results["b"].fetched == 0
    assert (results["a"].fetched, results["a"].ticket, results["a"].errors) == (3, 3, 0)
    assert Ticket.objects.count() == 3
    assert MailMessage.objects.count() == 3
    # The lock is free again: a later fetch runs (and finds nothing new).
    later = fetching.fetch_mailbox(mailbox_id=mailbox.pk)
    assert (later.skipped, later.fetched) == ("", 0)
