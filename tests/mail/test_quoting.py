"""Quoted history and signatures folded away from a reply, as each client writes them."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mail.quoting import is_forward, split_reply


def content_lines(text: str) -> list[str]:
    return [line for line in text.replace("\r\n", "\n").split("\n") if line.strip()]


@pytest.mark.parametrize(
    ("text", "new"),
    [
        pytest.param(
            "Thanks!\n\nOn Mon, 3 Jun 2024 at 10:15, Alice <alice@example.com> wrote:\n> old",
            "Thanks!",
            id="gmail",
        ),
        pytest.param(
            "Thanks!\n\nOn Tue, Jun 4, 2024 at 10:02 AM IT support <it-help@desk.example.com>\n"
            "wrote:\n\n> Hello",
            "Thanks!",
            id="gmail-wrapped",
        ),
        pytest.param(
            "Fixed.\n\nOn 4 Jun 2024, at 10:02, IT support <it@desk.example.com> wrote:\n\nHello",
            "Fixed.",
            id="apple-mail",
        ),
        pytest.param("Ok\n\nAlice wrote:\n> old\n> older", "Ok", id="thunderbird-short"),
        pytest.param(
            "Danke\n\nAm 03.06.24 um 09:12 schrieb IT support:\n> Guten Tag", "Danke", id="german"
        ),
        pytest.param(
            "Merci\n\nLe lun. 3 juin 2024 à 10:15, Alice <a@example.com> a écrit :\n> x",
            "Merci",
            id="french",
        ),
        pytest.param(
            "好的\n\n在 2024年6月3日，10:15，Alice <a@example.com> 写道：\n\n> 旧邮件",
            "好的",
            id="chinese-apple",
        ),
        pytest.param(
            "好的\n\nAlice <a@example.com> 于2024年6月3日周一 10:15写道：\n\n> 旧邮件",
            "好的",
            id="chinese-gmail",
        ),
        pytest.param(
            "Done.\n\n-----Original Message-----\nFrom: IT\nSent: Monday\nTo: Bob\n"
            "Subject: x\n\nold",
            "Done.",
            id="outlook-original-message",
        ),
        pytest.param(
            "Done.\n\n________________________________\nFrom: IT support <it@desk.example.com>\n"
            "Sent: Tuesday, June 4, 2024 10:02 AM\nTo: Bob <bob@example.com>\n"
            "Subject: RE: x\n\nold",
            "Done.",
            id="outlook-header-block",
        ),
        pytest.param(
            "Done.\n\n*From:* IT\n*Sent:* Tuesday\n*To:* Bob\n*Subject:* x\n\nold",
            "Done.",
            id="outlook-bold-header-block",
        ),
        pytest.param(
            "收到\n\n发件人: IT support <it@desk.example.com>\n发送时间: 2024年6月4日 10:02\n"
            "收件人: 王悦\n主题: 打印机\n\n旧",
            "收到",
            id="outlook-chinese-header-block",
        ),
        pytest.param(
            '收到\n\n------------------ 原始邮件 ------------------\n发件人: "IT"<it@x.com>;\n旧',
            "收到",
            id="qq-foxmail",
        ),
        pytest.param(
            "Got it\n\n------------------ Original ------------------\nFrom: x",
            "Got it",
            id="qq-en",
        ),
        pytest.param("See you\n\n-- \nErika\nTel. 123", "See you", id="signature"),
        pytest.param("On my way\n\nSent from my iPhone", "On my way", id="iphone"),
        pytest.param("Ok\n\n发自我的iPhone", "Ok", id="iphone-chinese"),
        pytest.param("Ok\n\nVon meinem iPhone gesendet", "Ok", id="iphone-german"),
        pytest.param("Ok\n\nGet Outlook for Android", "Ok", id="outlook-mobile"),
        pytest.param("Yes\n\n> did it work?\n> tell us", "Yes", id="trailing-quote"),
    ],
)
def test_split_reply_folds_what_each_client_quotes(text, new):
    got_new, quoted = split_reply(text)
    assert got_new == new
    assert quoted
    assert content_lines(got_new) + content_lines(quoted) == content_lines(text)


def test_an_interleaved_reply_keeps_the_answers_between_quotes():
    text = "> Which printer?\nThe one on floor 3.\n> Since when?\nSince Monday."
    assert split_reply(text) == (text, "")


def test_a_bottom_posted_answer_after_the_quote_is_new():
    text = "On Mon, Alice wrote:\n> Which printer?\n\nThe one on floor 3."
    assert split_reply(text) == (text, "")


def test_a_reply_that_is_only_quoted_history_is_kept_whole():
    text = "On Mon, 3 Jun 2024, Alice <a@example.com> wrote:\n> old\n> older"
    assert split_reply(text) == (text, "")


def test_a_signature_alone_is_kept_whole():
    assert split_reply("-- \nErika") == ("-- \nErika", "")


def test_the_earliest_marker_wins():
    text = "New\n-- \nsig\n\nOn Mon, Alice wrote:\n> old"
    assert split_reply(text) == ("New", "-- \nsig\n\nOn Mon, Alice wrote:\n> old")


def test_prose_mentioning_wrote_is_not_folded():
    text = "Bob wrote:\nthe report is late, please check."
    assert split_reply(text) == (text, "")


def test_a_forwarded_message_inside_the_text_is_not_folded():
    text = (
        "Please look at this.\n\n---------- Forwarded message ---------\n"
        "From: Supplier <s@example.org>\nDate: Mon\nSubject: Invoice\nTo: Alice\n\n"
        "On Sun, Bob wrote:\n> question"
    )
    assert split_reply(text) == (text, "")
    apple = "See below\n\nBegin forwarded message:\n\nFrom: x\nSubject: y\nDate: z\nTo: w\n\nhi"
    assert split_reply(apple) == (apple, "")


def test_line_ends_are_normalised_and_blank_edges_trimmed():
    assert split_reply("\r\n\r\nHi\r\n\r\n-- \r\nsig\r\n") == ("Hi", "-- \nsig")


@pytest.mark.parametrize(
    ("subject", "forward"),
    [
        ("Fwd: Invoice", True),
        ("FW: Invoice", True),
        ("WG: Rechnung", True),
        ("TR: Facture", True),
        ("转发：发票", True),
        ("Re: Fwd: Invoice", False),
        ("Forward planning", False),
        ("", False),
    ],
)
def test_is_forward_reads_the_subject_prefix(subject, forward):
    assert is_forward(subject) is forward


_LINES = st.sampled_from(
    [
        "",
        "Hello",
        "  indented text",
        "> quoted",
        ">> deeper",
        "-- ",
        "--",
        "Sent from my iPhone",
        "On Mon, 3 Jun 2024, Alice <a@example.com> wrote:",
        "On Tue, Jun 4, 2024 at 10:02 AM IT <it@x.com>",
        "wrote:",
        "Alice wrote:",
        "-----Original Message-----",
        "________________________________",
        "From: IT <it@x.com>",
        "Sent: Tuesday",
        "To: Bob",
        "Subject: RE: x",
        "------------------ 原始邮件 ------------------",
        "发件人: IT",
        "在 2024年6月3日，Alice 写道：",
        "Am 03.06.24 um 09:12 schrieb IT:",
        "---------- Forwarded message ---------",
        "The printer is broken.",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_LINES, st.text(max_size=30)), max_size=25))
def test_split_reply_preserves_every_content_line_in_order(lines):
    text = "\n".join(lines)
    new, quoted = split_reply(text)
    normalised = text.replace("\r\n", "\n").replace("\r", "\n")
    assert content_lines(new) + content_lines(quoted) == content_lines(normalised)
    if content_lines(normalised):
        assert content_lines(new), "never folds everything"
    if not quoted:
        assert content_lines(new) == content_lines(normalised)
