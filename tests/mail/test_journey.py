"""The whole e-mail journey through real servers: a message arrives in a Dovecot mailbox and is
fetched → a ticket; the agent replies → the applicant receives it from the mailbox with the
thread's headers (the SMTP catcher); the applicant answers it in their mail client → it
threads back as their public reply; the agent answers the notice they got by e-mail → their
public reply; and the console shows each as by e-mail, the whole message on demand."""

import pytest
from django.test import Client

from attachments.models import Attachment
from devserver.mailcatcher import MailCatcher
from mail.models import Mailbox, MailMessage
from mail.services.fetching import fetch_mailbox
from mail.services.intake import receive
from notifications import delivery as delivery_module
from notifications import sending
from notifications.delivery import delivery_attempt
from notifications.models import OutboxDelivery
from tests.attachments.helpers import png
from tests.factories import ApproverFactory, HandlerGroupFactory, UserFactory
from tests.mail import imap_fixtures
from tests.mail.messages import Attachment as MailAttachment
from tests.mail.messages import make_message
from ticketing.models import ReplyType, Ticket, TicketReply
from workflow import services

pytestmark = pytest.mark.django_db
dovecot = imap_fixtures.dovecot
imap_account = imap_fixtures.imap_account


@pytest.fixture
def catcher(tmp_path, settings):
    server = MailCatcher(tmp_path / "sent")
    server.start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = server.host, server.port
    settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
    settings.EMAIL_HOST_USER = settings.EMAIL_HOST_PASSWORD = ""
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def deliveries_by_the_test(monkeypatch):
    monkeypatch.setattr(sending, "enqueue_deliveries", lambda ids: None)
    monkeypatch.setattr(delivery_module, "_schedule", lambda *a: None)


def deliver_email():
    for found in OutboxDelivery.objects.filter(channel="email", status="pending").order_by("id"):
        delivery_attempt(delivery_id=found.pk)


def test_mail_in_agent_reply_out_applicant_and_agent_answer_by_mail(
    dovecot, imap_account, catcher, media
):
    bob = UserFactory(username="it_bob", email="bob@desk.test")
    group = HandlerGroupFactory(name="IT", members=[bob], assign_strategy=0)
    alice = UserFactory(username="alice", email="alice@example.test")
    mailbox = imap_account.mailbox(handler_group=group)

    # 1. Alice writes to it-help@; the fetch makes it a ticket.
    imap_account.append(
        make_message(
            from_="Alice <alice@example.test>",
            to="it-help@desk.test",
            subject="VPN drops every hour",
            body="Since Monday the VPN drops every hour.\n\n-- \nAlice, Finance",
            message_id="<first@mail.example.test>",
        )
    )
    assert fetch_mailbox(mailbox_id=mailbox.pk).ticket == 1
    ticket = Ticket.objects.get()
    assert ticket.creator_id == alice.pk and ticket.title == "VPN drops every hour"
    services.ticket_approve(ticket_id=ticket.pk, approver=ApproverFactory())
    services.ticket_accept(ticket_id=ticket.pk, handler=bob)

    # 2. Bob answers in the console; Alice receives it as the thread's next message.
    services.ticket_reply(
        ticket_id=ticket.pk,
        author=bob,
        reply_type=ReplyType.PUBLIC,
        content="Please update the VPN client to 5.2.",
    )
    services.ticket_reply(
        ticket_id=ticket.pk,
        author=bob,
        reply_type=ReplyType.INTERNAL,
        content="Secret: the gateway is misconfigured.",
    )
    deliver_email()
    to_alice = [m for m in catcher.messages() if "alice@example.test" in str(m["To"])]
    assert len(to_alice) == 1
    sent = to_alice[0]
    assert str(sent["From"]) == "IT support <it-help@desk.test>"
    assert str(sent["Reply-To"]) == "IT support <it-help@desk.test>"
    assert str(sent["Subject"]) == f"[#{ticket.bill_code}] VPN drops every hour"
    assert "<first@mail.example.test>" in str(sent["In-Reply-To"])
    assert "<first@mail.example.test>" in str(sent["References"])
    text = sent.get_body(("plain",)).get_content()
    assert "update the VPN client" in text and "Secret" not in text
    assert sent.get_body(("html",)) is not None
    assert not any("Secret" in m.as_string() for m in catcher.messages())

    # 3. Alice answers in her mail client, quoting the thread.
    sent_id = " ".join(str(sent["Message-ID"]).split())
    imap_account.append(
        make_message(
            from_="alice@example.test",
            to="it-help@desk.test",
            subject=f"Re: [#{ticket.bill_code}] VPN drops every hour",
            body="Updated, it holds now. Thanks!\n\nOn Mon, Bob wrote:\n> Please update.\n",
            message_id="<second@mail.example.test>",
            in_reply_to=sent_id,
            references=f"<first@mail.example.test> {sent_id}",
        )
    )
    assert fetch_mailbox(mailbox_id=mailbox.pk).reply == 1
    answer = TicketReply.objects.filter(ticket=ticket, author=alice).get()
    assert answer.reply_type == ReplyType.PUBLIC
    assert answer.content.startswith("Updated, it holds now.")
    assert "Please update." not in answer.content

    # 4. Bob got Alice's answer by e-mail and answers it from his own address.
    deliver_email()
    to_bob = [m for m in catcher.messages() if "bob@desk.test" in str(m["To"])]
    assert to_bob, "the handler is told of the applicant's reply by e-mail"
    notice_id = " ".join(str(to_bob[-1]["Message-ID"]).split())
    imap_account.append(
        make_message(
            from_="bob@desk.test",
            to="it-help@desk.test",
            subject=f"Re: [#{ticket.bill_code}] VPN drops every hour",
            body="Great, closing this soon.",
            message_id="<third@desk.test>",
            in_reply_to=notice_id,
        )
    )
    assert fetch_mailbox(mailbox_id=mailbox.pk).reply == 1
    by_bob = TicketReply.objects.filter(ticket=ticket, author=bob, content__startswith="Great")
    assert by_bob.get().reply_type == ReplyType.PUBLIC
    assert Ticket.objects.count() == 1
    assert MailMessage.objects.filter(direction="in").count() == 3

    # 5. The console: each marked by e-mail; Alice may unfold her own message.
    client = Client()
    client.force_login(alice)
    page = client.get(f"/console/tickets/{ticket.pk}/").content.decode()
    assert page.count('data-testid="reply-by-mail"') == 2
    assert 'data-testid="opened-by-mail"' in page
    assert "Please update." in page  # her quoted history, folded
    assert "Secret" not in page


def test_a_watcher_does_not_unfold_what_someone_else_quoted(media):
    group = HandlerGroupFactory(name="IT", assign_strategy=0)
    alice = UserFactory(username="alice", email="alice@example.test")
    dave = UserFactory(username="dave", email="dave@example.test")
    mailbox = Mailbox.objects.create(address="it-help@desk.test", name="IT", handler_group=group)
    got = receive(
        mailbox=mailbox,
        raw=make_message(
            from_="alice@example.test",
            to="it-help@desk.test",
            cc="dave@example.test",
            subject="Laptop",
            body="It is slow.\n\nOn Sun, HR wrote:\n> Your salary review is attached.\n",
            message_id="<w1@x>",
        ),
        source="pipe",
    )
    client = Client()
    client.force_login(dave)
    page = client.get(f"/console/tickets/{got.ticket_id}/").content.decode()
    assert "It is slow." in page
    assert "salary review" not in page
    client.force_login(alice)
    assert "salary review" in client.get(f"/console/tickets/{got.ticket_id}/").content.decode()


def test_an_html_message_is_shown_sanitised_with_its_inline_image(media):
    group = HandlerGroupFactory(name="IT", assign_strategy=0)
    alice = UserFactory(username="alice", email="alice@example.test")
    mailbox = Mailbox.objects.create(address="it-help@desk.test", name="IT", handler_group=group)

    got = receive(
        mailbox=mailbox,
        raw=make_message(
            from_="alice@example.test",
            to="it-help@desk.test",
            subject="Screen",
            body=None,
            html=(
                '<p>My <b>screen</b> shows this:</p><img src="cid:shot@x" alt="shot">'
                "<script>alert(1)</script>"
                '<img src="https://tracker.example/pixel.gif">'
            ),
            message_id="<html1@x>",
            attachments=[
                MailAttachment("shot.png", png(), "image/png", inline=True, content_id="shot@x")
            ],
        ),
        source="pipe",
    )

    files = list(Attachment.objects.filter(ticket_id=got.ticket_id))
    assert [f.filename for f in files] == ["shot.png"]
    client = Client()
    client.force_login(alice)
    page = client.get(f"/console/tickets/{got.ticket_id}/").content.decode()
    assert "<b>screen</b>" in page
    assert f'src="/api/attachments/{files[0].pk}/download/"' in page
    assert "alert(1)" not in page
    assert "tracker.example" not in page
