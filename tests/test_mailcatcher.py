"""The local mail catcher (devserver/mailcatcher.py) that `make run` sends mail to and the mail
tests send through: it keeps each message whole, in arrival order, logs a line per message,
answers the recipients it is told to refuse or defer as a real relay does, and `make run`
starts it unless EMAIL_URL names a real server."""

import smtplib
from email.message import EmailMessage
from email.policy import SMTP

import pytest

from devserver import run
from devserver.mailcatcher import ANY, MailCatcher


@pytest.fixture
def lines():
    return []


@pytest.fixture
def catcher(tmp_path, lines):
    server = MailCatcher(tmp_path / "mail", log=lines.append)
    server.start()
    yield server
    server.stop()


def message(subject="Printer on fire", to="alice@example.test", body="It is on fire.\n"):
    msg = EmailMessage()
    msg["From"] = '"IT support" <it-help@desk.test>'
    msg["To"] = to
    msg["Subject"] = subject
    msg["Message-ID"] = f"<{abs(hash(subject))}@desk.test>"
    msg.set_content(body)
    return msg


def sendmail(server, msg, to=None):
    with smtplib.SMTP(server.host, server.port, timeout=5) as smtp:
        return smtp.sendmail("it-help@desk.test", to or [msg["To"]], msg.as_bytes(policy=SMTP))


def test_it_listens_on_a_free_port_and_names_its_email_url(catcher):
    assert catcher.port > 0
    assert catcher.url == f"smtp://127.0.0.1:{catcher.port}"


def test_each_message_is_kept_whole_in_arrival_order_with_a_log_line(catcher, lines):
    first = message("Printer on fire")
    second = message("打印机着火了", to="bob@example.test", body="请尽快处理。\n")
    sendmail(catcher, first)
    sendmail(catcher, second)
    paths = catcher.paths()
    assert [p.suffix for p in paths] == [".eml", ".eml"]
    assert paths[0].read_bytes() == first.as_bytes(policy=SMTP)  # byte for byte
    got = catcher.messages()
    assert [m["Subject"] for m in got] == ["Printer on fire", "打印机着火了"]
    assert got[1].get_content().strip() == "请尽快处理。"
    assert len(lines) == 2
    assert "it-help@desk.test" in lines[0] and "alice@example.test" in lines[0]
    assert "Printer on fire" in lines[0] and "打印机着火了" in lines[1]


def test_a_refused_recipient_gets_the_5xx_and_nothing_is_kept(catcher):
    catcher.refuse("Nobody@Example.test", code=550, text="5.1.1 no such user")
    with pytest.raises(smtplib.SMTPRecipientsRefused) as refused:
        sendmail(catcher, message(to="nobody@example.test"))
    assert refused.value.recipients == {"nobody@example.test": (550, b"5.1.1 no such user")}
    assert catcher.messages() == []
    # Others still get theirs; the refusal lasts until accept().
    sendmail(catcher, message(to="alice@example.test"))
    with pytest.raises(smtplib.SMTPRecipientsRefused):
        sendmail(catcher, message(to="nobody@example.test"))
    catcher.accept("nobody@example.test")
    sendmail(catcher, message("again", to="nobody@example.test"))
    assert [m["To"] for m in catcher.messages()] == ["alice@example.test", "nobody@example.test"]


def test_a_deferred_recipient_gets_the_4xx_the_times_asked_then_mail_goes_through(catcher):
    catcher.defer("alice@example.test", code=451, times=2)
    for _ in range(2):
        with pytest.raises(smtplib.SMTPRecipientsRefused) as deferred:
            sendmail(catcher, message())
        ((code, _text),) = deferred.value.recipients.values()
        assert code == 451
    sendmail(catcher, message())
    assert len(catcher.messages()) == 1


def test_one_recipient_refused_of_two_the_other_gets_it(catcher):
    catcher.refuse("bob@example.test")
    refused = sendmail(catcher, message(), to=["alice@example.test", "bob@example.test"])
    assert set(refused) == {"bob@example.test"}
    assert len(catcher.messages()) == 1


def test_everyone_can_be_refused_and_codes_are_checked(catcher):
    catcher.refuse(ANY, code=554)
    with pytest.raises(smtplib.SMTPRecipientsRefused):
        sendmail(catcher, message())
    with pytest.raises(ValueError, match="5xx"):
        catcher.refuse("a@example.test", code=451)
    with pytest.raises(ValueError, match="4xx"):
        catcher.defer("a@example.test", code=550)


def test_a_restart_keeps_the_messages_and_numbers_on(tmp_path):
    with MailCatcher(tmp_path, log=lambda line: None) as first:
        sendmail(first, message("one"))
    with MailCatcher(tmp_path, log=lambda line: None) as second:
        sendmail(second, message("two"))
        assert [m["Subject"] for m in second.messages()] == ["one", "two"]
        assert [p.name for p in second.paths()] == ["000001.eml", "000002.eml"]
        second.clear()
        assert second.messages() == []


def test_make_run_starts_it_unless_email_url_is_set(tmp_path, monkeypatch):
    monkeypatch.setattr(run, "MAIL_DIR", tmp_path / "mail")
    env: dict[str, str] = {}
    catcher = run._start_mail_catcher(env)
    assert catcher is not None
    try:
        assert env["EMAIL_URL"] == catcher.url
        sendmail(catcher, message())
        assert len(list((tmp_path / "mail").glob("*.eml"))) == 1
    finally:
        catcher.stop()
    chosen = {"EMAIL_URL": "smtp://relay.example.test:587"}
    assert run._start_mail_catcher(chosen) is None
    assert chosen == {"EMAIL_URL": "smtp://relay.example.test:587"}
