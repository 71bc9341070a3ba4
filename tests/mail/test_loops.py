"""No ticket and no answer for machines: each loop header, lists, delivery reports; a bounce
of one of our own messages names that message, the failed address and the status."""

import pytest

from mail.loops import Automatic, Bounce, classify
from mail.parsing import parse
from tests.mail.corpus import load
from tests.mail.messages import Attachment, make_message


def classified(**fields):
    return classify(parse(make_message(**fields)))


def test_a_message_a_person_wrote_is_not_automatic():
    for name in ("gmail_reply", "outlook_new", "outlook_reply_full_thread", "qq_foxmail_gbk"):
        assert classify(parse(load(name))) is None, name
    assert classified() is None


@pytest.mark.parametrize(
    ("headers", "reason"),
    [
        ({"Auto-Submitted": "auto-replied"}, "Auto-Submitted: auto-replied"),
        ({"Auto-Submitted": "auto-generated"}, "Auto-Submitted: auto-generated"),
        ({"Auto-Submitted": "auto-notified; owner-email=x@y"}, "Auto-Submitted: auto-notified"),
        ({"X-Autoreply": "yes"}, "X-Autoreply: yes"),
        ({"X-Autorespond": "Out of office"}, "X-Autorespond: Out of office"),
        ({"X-Auto-Response-Suppress": "All"}, "X-Auto-Response-Suppress: All"),
        ({"X-Auto-Response-Suppress": "DR, OOF, AutoReply"}, "X-Auto-Response-Suppress: DR"),
        ({"Precedence": "bulk"}, "Precedence: bulk"),
        ({"Precedence": "junk"}, "Precedence: junk"),
        ({"Precedence": "list"}, "Precedence: list"),
        ({"Precedence": "Bulk"}, "Precedence: bulk"),
        ({"Precedence": "auto_reply"}, "Precedence: auto_reply"),
        ({"List-Id": "Printer users <printers.lists.example.com>"}, "List-Id: Printer users"),
        ({"List-Unsubscribe": "<mailto:leave@lists.example.com>"}, "List-Unsubscribe: "),
        ({"Return-Path": "<>"}, "Return-Path: <>"),
    ],
)
def test_each_loop_header_makes_a_message_automatic(headers, reason):
    result = classified(headers=headers)
    assert isinstance(result, Automatic)
    assert result.reason.startswith(reason)


@pytest.mark.parametrize(
    "headers",
    [
        {"Auto-Submitted": "no"},
        {"Precedence": "first-class"},
        {"Precedence": "normal"},
        {"X-Mailer": "Microsoft Outlook 16.0"},
        {"Return-Path": "<alice@example.com>"},
    ],
)
def test_harmless_headers_do_not(headers):
    assert classified(headers=headers) is None


def test_out_of_office_from_exchange_is_automatic():
    result = classify(parse(load("out_of_office")))
    assert result == Automatic("Auto-Submitted: auto-replied")


def test_bulk_newsletter_is_automatic():
    assert classify(parse(load("list_bulk"))) == Automatic("Precedence: bulk")


def test_postfix_dsn_names_our_message_the_recipient_and_the_status():
    result = classify(parse(load("dsn_bounce")))
    assert result == Bounce(
        original_message_ids=("notif-abc@desk.example.com",),
        recipients=("nobody@corp.example.com",),
        status="5.1.1",
        diagnostic=(
            "smtp; 550 5.1.1 <nobody@corp.example.com>: Recipient address rejected: "
            "User unknown in virtual mailbox table"
        ),
    )


def test_exim_bounce_without_a_report_is_read_best_effort():
    result = classify(parse(load("exim_bounce")))
    assert isinstance(result, Bounce)
    assert result.original_message_ids == ("notif-def@desk.example.com",)
    assert result.recipients == ("gone@corp.example.org",)
    assert result.status == "5.2.2"
    assert "Mailbox full" in result.diagnostic


def _dsn(*, action="failed", status="5.1.1", returned="headers", in_reply_to=None, recipients=None):
    """A delivery-status report shaped like Gmail's and Exchange's (text/rfc822-headers)."""
    blocks = "".join(
        f"Final-Recipient: rfc822; {address}\r\nAction: {action}\r\nStatus: {status}\r\n"
        f"Diagnostic-Code: smtp; 550-{status} The email account does not exist\r\n\r\n"
        for address in recipients or ["ghost@example.net"]
    )
    original = (
        "From: IT support <it-help@desk.example.com>\r\nTo: ghost@example.net\r\n"
        "Subject: [#IT-7] Hello\r\nMessage-ID: <notif-xyz@desk.example.com>\r\n"
    )
    if returned == "headers":
        tail = f"--B\r\nContent-Type: text/rfc822-headers\r\n\r\n{original}\r\n"
    elif returned == "message":
        tail = f"--B\r\nContent-Type: message/rfc822\r\n\r\n{original}\r\nbody\r\n"
    else:
        tail = ""
    extra = f"In-Reply-To: <{in_reply_to}>\r\n" if in_reply_to else ""
    raw = (
        "From: Mail Delivery Subsystem <mailer-daemon@googlemail.com>\r\n"
        "To: it-help@desk.example.com\r\nSubject: Delivery Status Notification (Failure)\r\n"
        f"{extra}MIME-Version: 1.0\r\n"
        'Content-Type: multipart/report; report-type=delivery-status; boundary="B"\r\n\r\n'
        "--B\r\nContent-Type: text/plain\r\n\r\nAddress not found\r\n"
        "--B\r\nContent-Type: message/delivery-status\r\n\r\n"
        "Reporting-MTA: dns; googlemail.com\r\n\r\n"
        f"{blocks}{tail}--B--\r\n"
    )
    return parse(raw.encode())


def test_dsn_with_returned_headers_only():
    result = classify(_dsn(returned="headers"))
    assert isinstance(result, Bounce)
    assert result.original_message_ids == ("notif-xyz@desk.example.com",)
    assert result.recipients == ("ghost@example.net",)


def test_dsn_with_the_whole_returned_message():
    result = classify(_dsn(returned="message"))
    assert result.original_message_ids == ("notif-xyz@desk.example.com",)


def test_dsn_without_the_original_falls_back_to_its_in_reply_to():
    result = classify(_dsn(returned=None, in_reply_to="notif-old@desk.example.com"))
    assert isinstance(result, Bounce)
    assert result.original_message_ids == ("notif-old@desk.example.com",)


def test_dsn_lists_every_failed_recipient():
    result = classify(_dsn(recipients=["a@example.net", "B@Example.net"]))
    assert result.recipients == ("a@example.net", "b@example.net")


def test_a_delay_report_is_automatic_not_a_failed_delivery():
    result = classify(_dsn(action="delayed", status="4.4.7"))
    assert result == Automatic("delivery-status: delayed")


def test_a_read_receipt_is_automatic():
    raw = (
        b"From: bob@example.com\r\nTo: it-help@desk.example.com\r\nSubject: Read: x\r\n"
        b'Content-Type: multipart/report; report-type=disposition-notification; boundary="B"'
        b"\r\n\r\n--B\r\nContent-Type: text/plain\r\n\r\nRead.\r\n"
        b"--B\r\nContent-Type: message/disposition-notification\r\n\r\n"
        b"Disposition: manual-action/MDN-sent-manually; displayed\r\n--B--\r\n"
    )
    result = classify(parse(raw))
    assert isinstance(result, Automatic)
    assert "disposition-notification" in result.reason


@pytest.mark.parametrize(
    ("sender", "subject"),
    [
        ("MAILER-DAEMON@mx.example.net", "Undelivered Mail Returned to Sender"),
        ("postmaster@mx.example.net", "Undeliverable: [#IT-7] Hello"),
        ("mailer-daemon@googlemail.com", "Delivery Status Notification (Failure)"),
        ("postmaster@qq.example.com", "系统退信"),
    ],
)
def test_a_plain_bounce_from_the_mailer_daemon_finds_the_original_in_its_text(sender, subject):
    body = (
        "Your message to ghost@example.net could not be delivered.\n"
        "550 5.1.1 User unknown\n\n"
        "----- Original message -----\n"
        "From: it-help@desk.example.com\nTo: ghost@example.net\n"
        "Message-ID: <notif-plain@desk.example.com>\nSubject: x\n"
    )
    result = classified(from_=sender, subject=subject, body=body)
    assert isinstance(result, Bounce)
    assert result.original_message_ids == ("notif-plain@desk.example.com",)
    assert result.recipients == ("ghost@example.net",)
    assert result.status == "5.1.1"


def test_a_plain_bounce_with_the_original_attached_as_eml():
    original = make_message(
        from_="it-help@desk.example.com", to="ghost@example.net", message_id="<notif-eml@desk>"
    )
    result = classified(
        from_="MAILER-DAEMON@mx.example.net",
        subject="Returned mail: see transcript for details",
        body="User unknown: ghost@example.net",
        attachments=[Attachment("", original, "message/rfc822")],
    )
    assert isinstance(result, Bounce)
    assert result.original_message_ids[0] == "notif-eml@desk"


def test_mail_from_the_mailer_daemon_without_a_bounce_subject_is_still_automatic():
    result = classified(from_="MAILER-DAEMON@mx.example.net", subject="Warning: delayed")
    assert result == Automatic("From: mailer-daemon@mx.example.net")


def test_an_ordinary_person_writing_about_undelivered_mail_is_not_a_bounce():
    assert classified(subject="Undelivered mail from our supplier?") is None
