"""Mail in (mail.services.intake): what each received message becomes, through `receive`."""

import threading
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime

import pytest
from django.db import connection

from collaboration.models import Watcher
from mail.models import FailedMail, Mailbox, MailMessage
from mail.services.intake import receive
from tests.factories import ApproverFactory, HandlerGroupFactory, StaffFactory, UserFactory
from ticketing.models import (
    Category,
    ProcessStatus,
    ReplyType,
    Ticket,
    TicketRecord,
    TicketReply,
    TicketStatus,
)
from workflow import services as workflow

NOW = datetime(2026, 12, 7, 10, 0, tzinfo=UTC)


def message(
    *,
    sender="alice@example.test",
    to="it-help@desk.test",
    subject="Printer on fire",
    body="The printer on floor 3 is on fire.\n",
    message_id=None,
    in_reply_to=None,
    references=None,
    cc=None,
    headers=None,
    attachments=(),
) -> bytes:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = to
    if cc:
        msg["Cc"] = cc
    msg["Subject"] = subject
    msg["Date"] = format_datetime(NOW)
    msg["Message-ID"] = message_id or f"<{abs(hash((sender, subject, body)))}@mail.example.test>"
    if in_reply_to:
        msg["In-Reply-To"] = in_reply_to
    if references:
        msg["References"] = references
    for name, value in (headers or {}).items():
        msg[name] = value
    msg.set_content(body)
    for filename, content_type, data in attachments:
        maintype, subtype = content_type.split("/")
        msg.add_attachment(data, maintype=maintype, subtype=subtype, filename=filename)
    return msg.as_bytes()


@pytest.fixture
def group(db):
    handler = UserFactory(username="it_bob", email="bob@desk.test")
    return HandlerGroupFactory(name="IT", members=[handler])


@pytest.fixture
def mailbox(group):
    Category.objects.get_or_create(name="hardware")
    return Mailbox.objects.create(
        address="it-help@desk.test",
        name="IT support",
        handler_group=group,
        priority=3,
        category="hardware",
    )


@pytest.fixture
def alice(db):
    return UserFactory(username="alice", email="Alice@Example.test")


def test_a_message_from_a_known_person_opens_a_ticket_with_the_mailboxes_settings(mailbox, alice):
    got = receive(mailbox=mailbox, raw=message(message_id="<m1@x>"), source="pipe", now=NOW)

    assert got.outcome == "ticket"
    ticket = Ticket.objects.get(pk=got.ticket_id)
    assert (ticket.creator_id, ticket.title) == (alice.pk, "Printer on fire")
    assert ticket.content.startswith("The printer on floor 3 is on fire.")
    assert (ticket.handler_group_id, ticket.priority, ticket.category) == (
        mailbox.handler_group_id,
        3,
        "hardware",
    )
    row = MailMessage.objects.get(message_id="m1@x")
    assert (row.direction, row.outcome, row.ticket_id, row.address) == (
        "in",
        "ticket",
        ticket.pk,
        "alice@example.test",
    )
    assert TicketRecord.objects.filter(ticket=ticket, action="mail_received").count() == 1


def test_the_same_message_received_twice_is_one_ticket(mailbox, alice):
    raw = message(message_id="<twice@x>")
    first = receive(mailbox=mailbox, raw=raw, source="imap", now=NOW)
    second = receive(mailbox=mailbox, raw=raw, source="http", now=NOW)

    assert (first.outcome, second.outcome) == ("ticket", "duplicate")
    assert Ticket.objects.count() == 1
    assert MailMessage.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_two_deliveries_of_one_message_at_the_same_instant_make_one_ticket():
    group = HandlerGroupFactory(name="IT")
    mailbox = Mailbox.objects.create(address="it-help@desk.test", name="IT", handler_group=group)
    UserFactory(username="alice", email="alice@example.test")
    raw = message(message_id="<race@x>")
    barrier = threading.Barrier(2)
    outcomes = []

    def deliver():
        try:
            barrier.wait()
            outcomes.append(receive(mailbox=mailbox, raw=raw, source="imap", now=NOW).outcome)
        finally:
            connection.close()

    threads = [threading.Thread(target=deliver) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert sorted(outcomes) == ["duplicate", "ticket"]
    assert Ticket.objects.count() == 1


def test_an_unknown_sender_gets_an_applicant_account_without_a_password(mailbox):
    got = receive(
        mailbox=mailbox,
        raw=message(sender="Carol Chen <carol@outside.test>", message_id="<c@x>"),
        source="pipe",
        now=NOW,
    )

    ticket = Ticket.objects.get(pk=got.ticket_id)
    assert ticket.creator.email == "carol@outside.test"
    assert (ticket.creator.first_name, ticket.creator.last_name) == ("Carol", "Chen")
    assert not ticket.creator.has_usable_password()


def test_a_mailbox_that_rejects_unknown_senders_opens_nothing(mailbox, django_user_model):
    mailbox.unknown_senders = "reject"
    mailbox.save()
    people = django_user_model.objects.count()

    got = receive(mailbox=mailbox, raw=message(sender="eve@outside.test"), source="pipe", now=NOW)

    assert got.outcome == "refused"
    assert Ticket.objects.count() == 0
    assert django_user_model.objects.count() == people


def test_a_reply_naming_our_message_is_a_public_reply_without_its_quoted_history(mailbox, alice):
    opened = receive(mailbox=mailbox, raw=message(message_id="<first@x>"), source="imap", now=NOW)

    answer = receive(
        mailbox=mailbox,
        raw=message(
            subject="Re: Printer on fire",
            body="It is out now.\n\nOn Mon, 7 Dec 2026 Alice wrote:\n> The printer is on fire.\n",
            message_id="<second@x>",
            in_reply_to="<first@x>",
            references="<first@x>",
        ),
        source="imap",
        now=NOW + timedelta(minutes=5),
    )

    assert (answer.outcome, answer.ticket_id) == ("reply", opened.ticket_id)
    reply = TicketReply.objects.get(pk=answer.reply_id)
    assert (reply.author_id, reply.reply_type) == (alice.pk, ReplyType.PUBLIC)
    assert reply.content.startswith("It is out now.")
    assert Ticket.objects.count() == 1


def test_a_subject_token_threads_a_message_without_headers(mailbox, alice):
    opened = receive(mailbox=mailbox, raw=message(message_id="<t1@x>"), source="imap", now=NOW)
    code = Ticket.objects.get(pk=opened.ticket_id).bill_code

    answer = receive(
        mailbox=mailbox,
        raw=message(subject=f"Re: [#{code}] Printer on fire", body="Still smoking."),
        source="imap",
        now=NOW,
    )

    assert (answer.outcome, answer.ticket_id) == ("reply", opened.ticket_id)


def test_a_stranger_answering_someone_elses_thread_gets_a_ticket_of_their_own(mailbox, alice):
    opened = receive(mailbox=mailbox, raw=message(message_id="<own@x>"), source="imap", now=NOW)
    UserFactory(username="mallory", email="mallory@example.test")

    got = receive(
        mailbox=mailbox,
        raw=message(
            sender="mallory@example.test",
            subject="Re: Printer on fire",
            body="Add my text to Alice's ticket",
            in_reply_to="<own@x>",
        ),
        source="imap",
        now=NOW,
    )

    assert got.outcome == "ticket" and got.ticket_id != opened.ticket_id
    original = Ticket.objects.get(pk=opened.ticket_id)
    assert original.reply_count == 0
    assert not TicketReply.objects.filter(ticket=original).exists()
    assert "Follow-up" not in Ticket.objects.get(pk=got.ticket_id).content


def test_the_team_answering_by_mail_writes_a_public_reply_as_themselves(mailbox, alice):
    opened = receive(mailbox=mailbox, raw=message(message_id="<o@x>"), source="imap", now=NOW)

    got = receive(
        mailbox=mailbox,
        raw=message(
            sender="bob@desk.test",
            subject="Re: Printer on fire",
            body="On my way.",
            in_reply_to="<o@x>",
        ),
        source="imap",
        now=NOW,
    )

    assert got.outcome == "reply"
    reply = TicketReply.objects.get(pk=got.reply_id)
    assert (reply.author.username, reply.reply_type) == ("it_bob", ReplyType.PUBLIC)
    assert reply.ticket_id == opened.ticket_id


def test_cc_of_the_first_message_become_watchers(mailbox, alice):
    known = UserFactory(username="dave", email="dave@example.test")

    got = receive(
        mailbox=mailbox,
        raw=message(cc="Dave <dave@example.test>, new@outside.test, it-help@desk.test"),
        source="imap",
        now=NOW,
    )

    watchers = set(
        Watcher.objects.filter(ticket_id=got.ticket_id).values_list("user__email", "source")
    )
    assert watchers == {(known.email, "cc"), ("new@outside.test", "cc")}


@pytest.mark.parametrize(
    "headers",
    [
        {"Auto-Submitted": "auto-replied"},
        {"Auto-Submitted": "auto-generated"},
        {"Precedence": "bulk"},
        {"Precedence": "junk"},
        {"Precedence": "list"},
        {"X-Autoreply": "yes"},
        {"X-Auto-Response-Suppress": "All"},
    ],
)
def test_automatic_messages_open_no_ticket(mailbox, alice, headers):
    got = receive(
        mailbox=mailbox,
        raw=message(subject="Out of office", headers=headers),
        source="imap",
        now=NOW,
    )

    assert got.outcome == "automatic"
    assert Ticket.objects.count() == 0
    assert FailedMail.objects.count() == 0


def test_more_than_the_hourly_limit_of_new_tickets_from_one_sender_is_held(
    mailbox, alice, settings
):
    settings.MAIL_FLOOD_PER_HOUR = 3
    outcomes = [
        receive(
            mailbox=mailbox,
            raw=message(subject=f"Request {n}", message_id=f"<flood{n}@x>"),
            source="imap",
            now=NOW + timedelta(minutes=n),
        ).outcome
        for n in range(4)
    ]

    assert outcomes == ["ticket", "ticket", "ticket", "kept"]
    held = FailedMail.objects.get()
    assert (held.reason, held.message_id) == ("flood", "flood3@x")
    assert Ticket.objects.count() == 3
    # An hour later the sender may write again.
    later = receive(
        mailbox=mailbox,
        raw=message(subject="Next day", message_id="<later@x>"),
        source="imap",
        now=NOW + timedelta(hours=2),
    )
    assert later.outcome == "ticket"


def test_a_message_over_the_size_limit_is_kept_whole(mailbox, alice):
    mailbox.max_message_bytes = 1000
    mailbox.save()
    raw = message(body="x" * 5000, message_id="<big@x>")

    got = receive(mailbox=mailbox, raw=raw, source="imap", now=NOW)

    assert (got.outcome, got.detail) == ("kept", "too_large")
    kept = FailedMail.objects.get()
    assert bytes(kept.raw) == raw and kept.message_id == "big@x"
    assert Ticket.objects.count() == 0


def test_an_unreadable_message_is_kept_whole_and_once(mailbox):
    raw = b"\x00\x01 this is not mail"

    first = receive(mailbox=mailbox, raw=raw, source="imap", now=NOW)
    again = receive(mailbox=mailbox, raw=raw, source="imap", now=NOW)

    assert (first.outcome, first.detail) == ("kept", "unparseable")
    assert (again.outcome, again.failed_mail_id) == ("kept", first.failed_mail_id)
    assert FailedMail.objects.count() == 1
    assert bytes(FailedMail.objects.get().raw) == raw


def test_a_refused_attachment_keeps_the_message_and_creates_nothing(mailbox, alice):
    exe = b"MZ\x90\x00" + b"\x00" * 200

    got = receive(
        mailbox=mailbox,
        raw=message(attachments=[("tool.exe", "application/octet-stream", exe)]),
        source="imap",
        now=NOW,
    )

    assert (got.outcome, got.detail) == ("kept", "refused_type")
    assert Ticket.objects.count() == 0
    assert MailMessage.objects.count() == 0


def test_a_reply_on_a_ticket_that_is_over_opens_a_new_one_that_names_it(mailbox, alice):
    opened = receive(mailbox=mailbox, raw=message(message_id="<cl@x>"), source="imap", now=NOW)
    workflow.ticket_cancel(ticket_id=opened.ticket_id, user=alice, now=NOW)
    old = Ticket.objects.get(pk=opened.ticket_id)

    got = receive(
        mailbox=mailbox,
        raw=message(subject="Re: Printer on fire", body="Again!", in_reply_to="<cl@x>"),
        source="imap",
        now=NOW + timedelta(days=1),
    )

    assert got.outcome == "ticket" and got.ticket_id != old.pk
    assert f"[#{old.bill_code}]" in Ticket.objects.get(pk=got.ticket_id).content
    assert Ticket.objects.get(pk=old.pk).process_status == ProcessStatus.CANCELLED
    assert not TicketReply.objects.filter(ticket=old).exists()


def _completed(mailbox, alice, message_id: str) -> Ticket:
    opened = receive(mailbox=mailbox, raw=message(message_id=message_id), source="imap", now=NOW)
    bob = UserFactory(username="it_bob")
    workflow.ticket_approve(ticket_id=opened.ticket_id, approver=ApproverFactory(), now=NOW)
    ticket = Ticket.objects.get(pk=opened.ticket_id)
    if ticket.handler_id != bob.pk:
        workflow.ticket_transfer(
            ticket_id=ticket.pk, user=StaffFactory(), handler_id=bob.pk, now=NOW
        )
    workflow.ticket_accept(ticket_id=ticket.pk, handler=bob, now=NOW + timedelta(minutes=1))
    workflow.ticket_complete(ticket_id=ticket.pk, handler=bob, now=NOW + timedelta(minutes=2))
    return Ticket.objects.get(pk=ticket.pk)


def test_a_reply_on_a_completed_ticket_reopens_it_with_the_same_handler(mailbox, alice):
    ticket = _completed(mailbox, alice, "<done@x>")

    got = receive(
        mailbox=mailbox,
        raw=message(
            subject="Re: Printer on fire", body="It is burning again.", in_reply_to="<done@x>"
        ),
        source="imap",
        now=NOW + timedelta(days=3),
    )

    assert (got.outcome, got.ticket_id) == ("reply", ticket.pk)
    reopened = Ticket.objects.get(pk=ticket.pk)
    assert reopened.ticket_status == TicketStatus.PROCESSING
    assert reopened.handler_id == ticket.handler_id
    assert reopened.completed_time is None


def test_the_applicants_reply_past_the_reopen_window_opens_a_new_ticket(mailbox, alice, settings):
    settings.REOPEN_DAYS = 14
    ticket = _completed(mailbox, alice, "<old@x>")

    got = receive(
        mailbox=mailbox,
        raw=message(subject="Re: Printer on fire", body="Months later.", in_reply_to="<old@x>"),
        source="imap",
        now=NOW + timedelta(days=30),
    )

    assert got.outcome == "ticket" and got.ticket_id != ticket.pk
    assert Ticket.objects.get(pk=ticket.pk).ticket_status == TicketStatus.COMPLETED
    assert f"[#{ticket.bill_code}]" in Ticket.objects.get(pk=got.ticket_id).content


def test_a_message_from_one_of_our_own_mailboxes_opens_nothing(mailbox):
    got = receive(
        mailbox=mailbox,
        raw=message(sender="IT support <it-help@desk.test>", subject="[#TK1] Re: x"),
        source="imap",
        now=NOW,
    )

    assert got.outcome == "automatic"
    assert Ticket.objects.count() == 0
