"""Mail out (mail/outbound.py through notifications.channels.email): a ticket's public replies
and lifecycle notices reach its applicant and watchers as one thread, through a real SMTP
conversation with the local catcher (devserver/mailcatcher.py); internal notes never do; a
retry is the same message; 4xx is retried, 5xx fails and shows on the ticket."""

from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.mail import EmailMultiAlternatives
from django.utils import timezone

from attachments import services as attachments
from collaboration.services.watchers import watcher_add
from devserver.mailcatcher import MailCatcher
from mail import outbound
from mail.models import Direction, Mailbox, MailMessage, MessageOutcome
from notifications import delivery as delivery_module
from notifications import sending
from notifications.delivery import LEASE, delivery_attempt, outbox_sweep
from notifications.models import DeliveryStatus, Notification, NotifyTemplate, OutboxDelivery
from notifications.sending import send
from tests.attachments.helpers import PDF
from tests.collaboration.watching import make_cast, speaks_chinese
from ticketing import notify
from ticketing.models import ReplyType, TicketRecord
from workflow import services

pytestmark = pytest.mark.django_db


@pytest.fixture
def catcher(tmp_path, settings):
    """A real SMTP server on a free port; Django's SMTP backend sends to it."""
    server = MailCatcher(tmp_path / "mail")
    server.start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = server.host, server.port
    settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
    settings.EMAIL_HOST_USER = settings.EMAIL_HOST_PASSWORD = ""
    settings.EMAIL_TIMEOUT = 5
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def no_enqueue(monkeypatch):
    """Deliveries are performed by the test (delivery_attempt), not by a worker."""
    monkeypatch.setattr(sending, "enqueue_deliveries", lambda ids: None)
    monkeypatch.setattr(delivery_module, "_schedule", lambda *a: None)


@pytest.fixture
def cast(applicant, approver, media):
    return make_cast(applicant, approver)


@pytest.fixture
def mailbox(cast):
    return Mailbox.objects.create(
        address="it-help@desk.test", name="IT support", handler_group=cast["group"]
    )


def public_reply(ticket, author, content="Try **turning it off** and on.", files=()):
    ids = [
        attachments.upload(
            uploader=author, file=SimpleUploadedFile(name, data, content_type="application/pdf")
        ).pk
        for name, data in files
    ]
    return services.ticket_reply(
        ticket_id=ticket.pk,
        author=author,
        reply_type=ReplyType.PUBLIC,
        content=content,
        attachment_ids=ids,
    )


def deliveries(template_code, **filters):
    return list(
        OutboxDelivery.objects.filter(
            channel="email", notification__template_code=template_code, **filters
        ).order_by("id")
    )


def deliver_all(found, now=None):
    return [delivery_attempt(delivery_id=d.pk, now=now) for d in found]


def bodies(message):
    text = message.get_body(("plain",)).get_content()
    html = message.get_body(("html",)).get_content()
    return text, html


def header(message, name):
    """A header's value unfolded (a long Message-ID is folded onto its own line)."""
    value = message[name]
    return " ".join(str(value).split()) if value is not None else None


def received_thread(ticket, mailbox):
    """The ticket's first message (received at the mailbox) and one sent earlier."""
    MailMessage.objects.create(
        message_id="first@client.test",
        direction=Direction.IN,
        outcome=MessageOutcome.TICKET,
        mailbox=mailbox,
        ticket=ticket,
        address=ticket.creator.email,
        subject=ticket.title,
        at=timezone.now(),
    )
    MailMessage.objects.create(
        message_id="earlier@desk.test",
        direction=Direction.OUT,
        outcome=MessageOutcome.SENT,
        mailbox=mailbox,
        ticket=ticket,
        address=ticket.creator.email,
        at=timezone.now(),
    )


def test_a_public_reply_reaches_the_applicant_and_each_watcher_as_the_tickets_thread(
    cast, mailbox, catcher
):
    ticket, handler = cast["ticket"](), cast["handlers"][0]
    received_thread(ticket, mailbox)
    for watcher in (cast["colleague"], cast["stranger"]):
        watcher_add(ticket_id=ticket.pk, user_id=watcher.pk, actor=handler)
    reply = public_reply(ticket, handler, files=[("report.pdf", PDF)])

    sent = deliveries("ticket-replied")
    assert deliver_all(sent) == [DeliveryStatus.SENT] * 3
    messages = catcher.messages()
    readers = [cast["applicant"], cast["colleague"], cast["stranger"]]
    assert sorted(m["To"] for m in messages) == sorted(r.email for r in readers)
    by_address = {d.target: d for d in sent}
    for message in messages:
        for name in ("From", "Reply-To"):
            (address,) = message[name].addresses
            assert (address.display_name, address.addr_spec) == ("IT support", "it-help@desk.test")
        assert message["Subject"] == f"[#{ticket.bill_code}] Printer on fire"
        # The Message-ID is the delivery's, recorded as sent on the ticket with the reply.
        row = MailMessage.objects.get(message_id=header(message, "Message-ID").strip("<>"))
        assert (row.direction, row.outcome, row.ticket_id, row.reply_id) == (
            Direction.OUT,
            MessageOutcome.SENT,
            ticket.pk,
            reply.pk,
        )
        assert row.address == message["To"] and row.delivery_id == by_address[row.address].pk
        # The thread so far as this reader has it: what the ticket received, and what was
        # sent to them (the earlier message went to the applicant only).
        if row.address == cast["applicant"].email:
            assert header(message, "In-Reply-To") == "<earlier@desk.test>"
            assert header(message, "References") == "<first@client.test> <earlier@desk.test>"
        else:
            assert header(message, "In-Reply-To") == "<first@client.test>"
            assert header(message, "References") == "<first@client.test>"
        text, html = bodies(message)
        assert "Try **turning it off** and on." in text
        assert "<strong>turning it off</strong>" in html
        (attached,) = message.iter_attachments()
        assert attached.get_filename() == "report.pdf"
        assert attached.get_content() == PDF
    assert MailMessage.objects.filter(direction=Direction.OUT, reply=reply).count() == 3


def test_the_next_message_answers_the_last_one_sent(cast, mailbox, catcher):
    ticket, handler = cast["ticket"](), cast["handlers"][0]
    received_thread(ticket, mailbox)
    public_reply(ticket, handler, content="First answer.")
    deliver_all(deliveries("ticket-replied"))
    first_sent = header(catcher.messages()[0], "Message-ID")
    public_reply(ticket, handler, content="Second answer.")
    deliver_all(deliveries("ticket-replied", status=DeliveryStatus.PENDING))
    second = catcher.messages()[1]
    assert header(second, "In-Reply-To") == first_sent
    assert header(second, "References").split() == [
        "<first@client.test>",
        "<earlier@desk.test>",
        first_sent,
    ]


def test_references_keep_the_first_message_and_the_latest(cast, mailbox, catcher):
    ticket, handler = cast["ticket"](), cast["handlers"][0]
    for n in range(30):
        MailMessage.objects.create(
            message_id=f"m{n}@client.test",
            direction=Direction.IN,
            outcome=MessageOutcome.REPLY if n else MessageOutcome.TICKET,
            mailbox=mailbox,
            ticket=ticket,
            address="applicant@example.test",
            at=timezone.now(),
        )
    public_reply(ticket, handler)
    deliver_all(deliveries("ticket-replied"))
    (message,) = catcher.messages()
    references = header(message, "References").split()
    assert len(references) == outbound.MAX_REFERENCES
    assert references[0] == "<m0@client.test>" and references[-1] == "<m29@client.test>"
    assert references[1] == "<m11@client.test>"


def test_lifecycle_notices_stay_in_the_thread(cast, mailbox, catcher):
    ticket, handler = cast["ticket"](), cast["handlers"][0]
    received_thread(ticket, mailbox)
    watcher_add(ticket_id=ticket.pk, user_id=cast["colleague"].pk, actor=handler)
    services.ticket_complete(ticket_id=ticket.pk, handler=handler)
    found = deliveries("ticket-completed") + deliveries("ticket-status-changed")
    assert [d.target for d in found] == [cast["applicant"].email, cast["colleague"].email]
    assert deliver_all(found) == [DeliveryStatus.SENT] * 2
    for message in catcher.messages():
        assert message["Subject"] == f"[#{ticket.bill_code}] Printer on fire"
        assert message["From"].addresses[0].addr_spec == "it-help@desk.test"
    to_applicant, to_watcher = catcher.messages()
    assert header(to_applicant, "In-Reply-To") == "<earlier@desk.test>"
    assert header(to_watcher, "In-Reply-To") == "<first@client.test>"
    completed, changed = (bodies(m)[0] for m in catcher.messages())
    assert "has been completed by handler0" in completed
    assert "which you are watching, is completed" in changed


def test_the_mailbox_is_the_groups_then_any_active_one_then_the_default(cast, catcher, settings):
    ticket, handler = cast["ticket"](), cast["handlers"][0]
    other = Mailbox.objects.create(address="facilities@desk.test", name="Facilities")
    assert outbound.mailbox_for(ticket) == other  # the only active one
    mine = Mailbox.objects.create(
        address="support@desk.test", name="Support", handler_group=cast["group"]
    )
    assert outbound.mailbox_for(ticket) == mine
    Mailbox.objects.update(active=False)
    assert outbound.mailbox_for(ticket) is None
    public_reply(ticket, handler)
    deliver_all(deliveries("ticket-replied"))
    (message,) = catcher.messages()
    assert message["From"] == settings.DEFAULT_FROM_EMAIL
    assert message["Reply-To"] is None
    assert message["Subject"] == f"[#{ticket.bill_code}] Printer on fire"


def test_an_internal_note_never_reaches_the_applicant_or_a_watcher_by_email(cast, mailbox, catcher):
    ticket, handlers = cast["ticket"](), cast["handlers"]
    watcher_add(ticket_id=ticket.pk, user_id=cast["colleague"].pk, actor=handlers[0])
    secret = "The applicant's manager says to ignore this."
    note = services.ticket_reply(
        ticket_id=ticket.pk, author=handlers[1], reply_type=ReplyType.INTERNAL, content=secret
    )
    # Even a notice that names the note to the applicant (a bug elsewhere, a template edited
    # in admin) is withheld here.
    send(
        recipients=[cast["applicant"], cast["colleague"]],
        template_code="ticket-replied",
        params={
            "billCode": ticket.bill_code,
            "title": ticket.title,
            "author": "handler1",
            "body": secret,
            "replyId": note.pk,
        },
        dedupe_key="forged",
        ticket_id=ticket.pk,
    )
    NotifyTemplate.objects.filter(code="ticket-mentioned").update(channels=["in_app", "email"])
    notify.mentioned(ticket, note, [handlers[0].pk])

    found = OutboxDelivery.objects.filter(
        channel="email", notification__template_code__in=["ticket-replied", "ticket-mentioned"]
    )
    targets = {d.target for d in found}
    assert {cast["applicant"].email, cast["colleague"].email, handlers[0].email} <= targets
    deliver_all(found)
    assert catcher.messages() == []
    assert not MailMessage.objects.filter(direction=Direction.OUT).exists()
    # The team still reads it in the product.
    assert Notification.objects.filter(recipient=handlers[0], ticket_id=ticket.pk).exists()


def test_a_retry_after_a_crash_is_the_same_message_delivered_once(
    cast, mailbox, catcher, monkeypatch
):
    ticket, handler = cast["ticket"](), cast["handlers"][0]
    reply = public_reply(ticket, handler)
    (delivery,) = deliveries("ticket-replied")
    now = timezone.now()

    class WorkerDied(BaseException):
        pass

    def die(self, fail_silently=False):
        raise WorkerDied

    with monkeypatch.context() as patched:
        patched.setattr(EmailMultiAlternatives, "send", die)
        with pytest.raises(WorkerDied):
            delivery_attempt(delivery_id=delivery.pk, now=now)
    assert OutboxDelivery.objects.get(pk=delivery.pk).status == DeliveryStatus.SENDING
    (recorded,) = MailMessage.objects.filter(direction=Direction.OUT)
    # The sweep takes the abandoned delivery back once its lease is over; it goes again.
    later = now + LEASE + timedelta(seconds=1)
    assert outbox_sweep(now=later) == 1
    assert delivery_attempt(delivery_id=delivery.pk, now=later) == DeliveryStatus.SENT
    (message,) = catcher.messages()
    assert header(message, "Message-ID") == f"<{recorded.message_id}>"
    assert MailMessage.objects.filter(direction=Direction.OUT).count() == 1
    # The same event told again writes no second delivery; the delivery is not sent twice.
    notify.replied(ticket, reply)
    assert deliveries("ticket-replied") == [delivery]
    assert delivery_attempt(delivery_id=delivery.pk, now=later) == "skipped"
    assert len(catcher.messages()) == 1


def test_a_4xx_is_retried_with_backoff_then_delivered(cast, mailbox, catcher):
    ticket, handler = cast["ticket"](), cast["handlers"][0]
    public_reply(ticket, handler)
    (delivery,) = deliveries("ticket-replied")
    catcher.defer(delivery.target, code=451, text="4.2.1 mailbox busy", times=1)
    now = timezone.now()
    assert delivery_attempt(delivery_id=delivery.pk, now=now) == DeliveryStatus.PENDING
    waiting = OutboxDelivery.objects.get(pk=delivery.pk)
    assert waiting.attempts == 1 and waiting.next_attempt_at > now + timedelta(seconds=10)
    assert "451" in waiting.last_error
    assert catcher.messages() == []
    assert not TicketRecord.objects.filter(ticket=ticket, action="mail_failed").exists()
    # Not due yet: nothing happens.
    assert delivery_attempt(delivery_id=delivery.pk, now=now) == "skipped"
    assert (
        delivery_attempt(delivery_id=delivery.pk, now=waiting.next_attempt_at)
        == DeliveryStatus.SENT
    )
    (message,) = catcher.messages()
    assert message["To"] == delivery.target
    assert MailMessage.objects.get(delivery_id=delivery.pk).outcome == MessageOutcome.SENT


def test_a_server_that_is_down_is_retried(cast, mailbox, catcher):
    ticket, handler = cast["ticket"](), cast["handlers"][0]
    public_reply(ticket, handler)
    (delivery,) = deliveries("ticket-replied")
    catcher.stop()
    assert delivery_attempt(delivery_id=delivery.pk) == DeliveryStatus.PENDING
    assert "Connection" in OutboxDelivery.objects.get(pk=delivery.pk).last_error


def test_a_5xx_fails_the_delivery_and_shows_on_the_ticket(cast, mailbox, catcher, client):
    ticket, handler = cast["ticket"](), cast["handlers"][0]
    public_reply(ticket, handler)
    (delivery,) = deliveries("ticket-replied")
    address = cast["applicant"].email
    catcher.refuse(address, code=550, text="5.1.1 no such user")
    assert delivery_attempt(delivery_id=delivery.pk) == DeliveryStatus.FAILED
    assert catcher.messages() == []
    row = MailMessage.objects.get(delivery_id=delivery.pk)
    assert row.outcome == MessageOutcome.FAILED and "550 5.1.1 no such user" in row.detail
    (failed,) = TicketRecord.objects.filter(ticket=ticket, action="mail_failed")
    assert failed.detail["address"] == address and "550" in failed.detail["error"]
    # Told twice (the hook run again, or a bounce of the same message): recorded once.
    outbound.record_failures(delivery.notification)
    assert not outbound.delivery_failed(
        message_id=row.message_id, ticket_id=ticket.pk, address=address, error="bounced"
    )
    assert TicketRecord.objects.filter(ticket=ticket, action="mail_failed").count() == 1

    client.force_login(handler)
    page = client.get(f"/console/tickets/{ticket.pk}/").content.decode()
    assert f"Could not reach {address} by e-mail" in page
    # The applicant's page tells the public story only.
    client.force_login(cast["applicant"])
    page = client.get(f"/console/tickets/{ticket.pk}/").content.decode()
    assert "Could not reach" not in page


def test_files_too_large_for_one_message_are_named_with_the_tickets_page(
    cast, mailbox, catcher, monkeypatch
):
    monkeypatch.setattr(outbound, "MAX_ATTACHED_BYTES", len(PDF) + 10)
    ticket, handler = cast["ticket"](), cast["handlers"][0]
    second = PDF.replace(b"1.4", b"1.5")
    public_reply(ticket, handler, files=[("small.pdf", PDF), ("big.pdf", second)])
    deliver_all(deliveries("ticket-replied"))
    (message,) = catcher.messages()
    assert [a.get_filename() for a in message.iter_attachments()] == ["small.pdf"]
    text, html = bodies(message)
    page = f"/console/tickets/{ticket.pk}/"
    assert "big.pdf" in text and page in text
    assert "big.pdf" in html and page in html


def test_a_chinese_reader_reads_the_thread_in_chinese(cast, mailbox, catcher):
    ticket, handler = cast["ticket"](), cast["handlers"][0]
    speaks_chinese(cast["applicant"])
    public_reply(ticket, handler, content="请重启打印机。")
    services.ticket_complete(ticket_id=ticket.pk, handler=handler)
    assert (
        deliver_all(deliveries("ticket-replied") + deliveries("ticket-completed"))
        == [DeliveryStatus.SENT] * 2
    )
    replied, completed = catcher.messages()
    for message in (replied, completed):
        assert message["Subject"] == f"[#{ticket.bill_code}] Printer on fire"
        assert 'lang="zh-hans"' in bodies(message)[1]
    text, _html = bodies(replied)
    assert "handler0 回复了工单" in text and "请重启打印机。" in text
    text, _html = bodies(completed)
    assert "已由 handler0 处理完成" in text
