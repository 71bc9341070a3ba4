"""What the desk reads from real-world messages: every corpus message, every charset people
send, RFC 2047/2231, HTML sanitising, attachments and inline images, broken messages."""

import base64
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mail.parsing import (
    INTERNAL,
    Unparseable,
    decode_bytes,
    decode_header,
    html_to_text,
    message_ids,
    parse,
    safe_filename,
    sanitize_html,
    unflow,
)
from tests.mail.corpus import NAMES, load
from tests.mail.messages import TEN_MB, Attachment, big_message, make_message

# --- the corpus, client by client -------------------------------------------------------------


def test_outlook_new_message_in_gbk_reads_names_subject_and_both_bodies():
    message = parse(load("outlook_new"))
    # 喆 is in GBK but not in GB2312: the declared gb2312 is read as its superset.
    assert message.sender == "wang.zhe@corp.example.cn"
    assert message.sender_name == "王喆"
    assert message.subject == "三楼打印机无法连接 — 急"
    assert message.cc == ("li.na@corp.example.cn",)
    assert message.names["li.na@corp.example.cn"] == "李娜"
    assert message.message_id.startswith("TYZPR06MB5417A1B2")
    assert message.thread_ids() == ()
    assert message.text.startswith("你好，\n\n三楼的打印机（HP M404）")
    assert "王喆" in message.text
    assert message.new_text == message.text
    assert message.quoted_text == ""
    assert "<p>三楼的打印机（" in message.html
    assert "<style" not in message.html
    assert "font-family" not in message.html
    assert "Thread-Index".lower() in message.headers
    assert message.parts == ()


def test_outlook_reply_folds_the_whole_thread_below_the_header_block():
    message = parse(load("outlook_reply_full_thread"))
    assert message.new_text == (
        "Hi team,\n\nThe printer still shows \u201coffline\u201d after the restart you "
        "suggested \u2013 I tried twice.\n\nRegards,\nBob Smith\nFinance | Corp Example Ltd."
    )
    assert message.quoted_text.startswith("________________________________\nFrom: IT support")
    assert "The printer on the third floor does not print." in message.quoted_text
    assert message.in_reply_to == ("notif-abc@desk.example.com",)
    assert message.thread_ids() == ("notif-abc@desk.example.com", "req-1042@desk.example.com")
    assert message.cc == ("alice.jones@corp.example.com",)


def test_gmail_reply_folds_the_attribution_wrapped_over_two_lines():
    message = parse(load("gmail_reply"))
    assert message.new_text == "Thanks, that fixed it! It prints again.\n\nCarla"
    assert message.quoted_text.startswith(
        "On Tue, Jun 4, 2024 at 10:02 AM IT support <it-help@desk.example.com>\nwrote:"
    )
    assert message.references == ("req-1042@desk.example.com", "notif-abc@desk.example.com")
    assert 'class="gmail_quote"' not in message.html
    assert "<blockquote>" in message.html
    assert 'rel="noopener noreferrer"' in message.html


def test_apple_mail_inline_image_is_a_part_and_its_cid_stays_in_the_html():
    message = parse(load("apple_mail"))
    (image,) = message.parts
    assert image.filename == "Screenshot 2024-06-04 at 10.15.32.png"
    assert image.content_type == "image/png"
    assert image.inline is True
    assert image.content_id == "8A1B2C3D-4E5F-4A6B-8C7D-9E0F1A2B3C4D@home"
    assert image.data.startswith(b"\x89PNG\r\n")
    assert f'src="cid:{image.content_id}"' in message.html
    assert "tracker.example.net" not in message.html  # the remote image is dropped
    assert "apple-inline" not in message.html
    assert message.new_text == "Here is what the screen says now:"
    assert "\ufeff" not in message.text
    assert "Which error does the display show?" in message.quoted_text


def test_thunderbird_flowed_text_is_joined_and_the_signature_folded():
    message = parse(load("thunderbird"))
    assert message.sender_name == "Erika Müstermann"
    assert message.subject == "Drucker im 3. Stock druckt leere Seiten"
    assert message.new_text == (
        "Hallo zusammen,\n\nder Drucker im dritten Stock druckt seit gestern nur noch leere "
        "Seiten, obwohl der Toner neu ist. Könnt ihr bitte jemanden vorbeischicken? Ich bin "
        "bis 17 Uhr im Büro.\n\nViele Grüße\nErika"
    )
    assert message.quoted_text.startswith("Am 03.06.24 um 09:12 schrieb IT support:")
    assert "-- \nDr. Erika Mustermann" in message.quoted_text


def test_qq_foxmail_gbk_subject_names_quote_and_attachment():
    message = parse(load("qq_foxmail_gbk"))
    assert message.subject == "回复：[#IT-1042] 打印机无法连接"
    assert message.sender_name == "王悦"  # an encoded word inside quotes, as Foxmail writes
    # The To name is raw 8-bit GBK, not encoded at all.
    assert message.names["it-help@desk.example.com"] == "IT服务台"
    assert message.new_text == "收到，谢谢！打印机已经可以用了。\n设备清单见附件。\n\n王悦"
    assert message.quoted_text.startswith("------------------ 原始邮件 ------------------")
    (sheet,) = message.parts
    assert sheet.filename == "设备清单.xlsx"
    assert sheet.content_type.endswith("spreadsheetml.sheet")
    assert sheet.data.startswith(b"PK\x03\x04")
    assert sheet.inline is False
    assert message.in_reply_to == ("notif-abc@desk.example.com",)


def test_big5_with_a_hkscs_character_reads():
    message = parse(load("big5"))
    assert message.subject == "會議室投影機故障"
    assert message.sender_name == "陳大文"
    assert "會議室嘅投影機壞咗" in message.text  # 嘅 is only in Big5-HKSCS


def test_iso_2022_jp_reads():
    message = parse(load("iso2022jp"))
    assert message.subject == "プリンターが動きません"
    assert message.sender_name == "山田太郎"
    assert "会議室のプリンターが動きません。" in message.text


def test_windows_1252_declared_as_iso_8859_1_reads_its_quotes_dash_and_euro():
    message = parse(load("windows1252"))
    assert message.subject == "Café machine – broken again"
    assert message.sender_name == "José García"
    assert "shows \u201cError 42\u201d \u2013 again" in message.text
    assert "€120" in message.text


def test_rfc2231_file_names_and_continuations_read():
    message = parse(load("rfc2231_filename"))
    assert [p.filename for p in message.parts] == [
        "报告 2024.pdf",
        "Jahresbericht Qualitätssicherung 2024 – endgültige Fassung.pdf",
    ]
    assert all(p.data.startswith(b"%PDF-1.4") for p in message.parts)
    assert message.text == "Bitte beide Dateien drucken."


def test_forward_keeps_its_text_as_new_and_the_message_as_an_eml_part():
    message = parse(load("forwarded"))
    assert message.subject == "Fwd: Invoice 2024-117 question"
    assert message.quoted_text == ""
    assert message.new_text == message.text
    assert '> Quoted from the supplier: "the link says 404".' in message.new_text
    (forwarded,) = message.parts
    assert forwarded.content_type == "message/rfc822"
    assert forwarded.filename == "Invoice 2024-117 question.eml"
    inner = parse(forwarded.data)
    assert inner.message_id == "inv-2024-117@supplier.example.org"
    assert inner.sender == "billing@supplier.example.org"
    assert "returns 404" in inner.text


def test_a_forward_inline_keeps_the_forwarded_header_block_as_new():
    body = (
        "Please handle this.\n\n________________________________\n"
        "From: Supplier <s@example.org>\nSent: Monday\nTo: Alice\nSubject: Invoice\n\n"
        "The invoice is wrong."
    )
    message = parse(make_message(subject="FW: Invoice", body=body))
    assert message.new_text == body
    assert message.quoted_text == ""


def test_out_of_office_and_list_messages_still_parse():
    ooo = parse(load("out_of_office"))
    assert ooo.headers["auto-submitted"] == "auto-replied"
    assert ooo.text.startswith("I am out of the office until 10 June")
    bulk = parse(load("list_bulk"))
    assert bulk.subject == "🖨️ 20% off toner this week"
    assert bulk.text == (
        "20% off toner\n\nThis week only. Shop now "
        "(https://officesupplies.example.com/toner?utm_source=news)"
    )
    assert "open.gif" not in bulk.html


def test_dsn_exposes_the_delivery_report():
    message = parse(load("dsn_bounce"))
    report = message.report
    assert report is not None
    assert report.reporting_mta == "mail.desk.example.com"
    assert report.original_message_id == "notif-abc@desk.example.com"
    assert report.original_headers["subject"] == "[#IT-1042] Printer on third floor"
    (recipient,) = report.recipients
    assert recipient.final_recipient == "nobody@corp.example.com"
    assert recipient.action == "failed"
    assert recipient.status == "5.1.1"
    assert recipient.diagnostic.startswith("smtp; 550 5.1.1 <nobody@corp.example.com>")
    assert recipient.remote_mta == "mx.corp.example.com"
    assert message.return_path == ""
    assert message.sender == "mailer-daemon@mail.desk.example.com"
    assert [p.filename for p in message.parts] == [
        "delivery-status.txt",
        "[#IT-1042] Printer on third floor.eml",
    ]


def test_an_ordinary_message_has_no_report():
    assert parse(load("gmail_reply")).report is None


def test_malformed_message_is_read_as_far_as_it_goes_and_its_defects_listed():
    # Our call: a message with a From and some text is worth a ticket; the defects say why it
    # may look odd (missing end boundary, bad base64, junk in the header block).
    message = parse(load("malformed"))
    assert message.sender == "broken@client.example.com"
    assert message.subject.startswith("Hello world")
    assert message.text == "The attachment is broken, sorry \u2014 please look anyway it matters."
    (pdf,) = message.parts
    assert pdf.filename == "report.pdf"
    assert pdf.data.startswith(b"%PDF-1.4")
    assert {"missing end boundary", "bad base64", "junk in the header block"} <= set(
        message.defects
    )
    assert message.date == "not a date at all"


def test_message_without_from_is_unparseable():
    with pytest.raises(Unparseable, match="no From"):
        parse(load("no_from"))


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(b"", id="empty"),
        pytest.param(b"   \r\n\r\n  ", id="blank"),
        pytest.param(b"just some words\nand more words\n", id="no-headers"),
        pytest.param(b"\x00\x01\x02PK\x03\x04" + bytes(range(256)) * 4, id="binary"),
        pytest.param(b"Subject: x\x00\x01\r\nFrom: a@b.example\r\n\r\nbody", id="nul-in-headers"),
        pytest.param(b"From: nobody\r\nSubject: no address\r\n\r\nbody", id="from-no-address"),
        pytest.param(random.Random(1).randbytes(4096), id="random-bytes"),
    ],
)
def test_not_a_message_is_unparseable(raw):
    with pytest.raises(Unparseable) as caught:
        parse(raw)
    assert INTERNAL not in str(caught.value)


@pytest.mark.parametrize("name", [n for n in NAMES if n != "no_from"])
def test_every_corpus_message_parses_with_a_sender_and_text(name):
    message = parse(load(name))
    assert "@" in message.sender
    assert message.text.strip()
    assert message.new_text.strip()
    assert "<script" not in message.html


# --- charsets ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "declared", "encoding"),
    [
        ("中文喆", "gb2312", "gbk"),  # a GBK character under the GB2312 label
        ("中文喆", "gbk", "gbk"),
        ("中文𠀀", "gb18030", "gb18030"),
        ("會議室嘅", "big5", "big5hkscs"),
        ("プリンター", "iso-2022-jp", "iso-2022-jp"),
        ("\u201cquoted\u201d \u20ac", "iso-8859-1", "cp1252"),
        ("\u201cquoted\u201d", "us-ascii", "cp1252"),
        ("naïve café", "windows-1252", "cp1252"),
        ("Grüße ✓", "utf-8", "utf-8"),
        ("Grüße ✓", "us-ascii", "utf-8"),  # a UTF-8 body labelled us-ascii
        ("Grüße ✓", None, "utf-8"),
        ("无字符集", None, "gbk"),
        ("Ça va", None, "cp1252"),
        ("Grüße ✓", "unknown-8bit", "utf-8"),
        ("中文", "x-gbk", "gbk"),
        ("Привет", "koi8-r", "koi8-r"),
        ("Grüße", "base64", "utf-8"),  # a codec that is no charset is not used
    ],
)
def test_decode_bytes_reads_every_charset_people_send(text, declared, encoding):
    assert decode_bytes(text.encode(encoding), declared) == text


def test_decode_bytes_never_raises_on_any_bytes():
    data = bytes(range(256))
    for charset in (None, "utf-8", "gb2312", "big5", "iso-2022-jp", "us-ascii", "bogus", "idna"):
        assert isinstance(decode_bytes(data, charset), str)


@pytest.mark.parametrize(
    ("charset", "text"),
    [
        ("gb2312", "您好，打印机坏了"),
        ("gbk", "王喆的请求"),
        ("gb18030", "请求𠀀"),
        ("big5", "會議室投影機"),
        ("iso-2022-jp", "プリンター"),
        ("utf-8", "Grüße ✓"),
        ("windows-1252", "Caf\u00e9 \u2013 \u20ac"),
    ],
)
def test_a_whole_message_in_each_charset_parses(charset, text):
    codec = {"gb2312": "gbk"}.get(charset, charset)
    raw = (
        f"From: a@example.com\r\nTo: it@desk.example.com\r\nSubject: x\r\nMIME-Version: 1.0\r\n"
        f'Content-Type: text/plain; charset="{charset}"\r\nContent-Transfer-Encoding: base64\r\n'
        f"\r\n{base64.b64encode(text.encode(codec)).decode()}\r\n"
    ).encode("ascii")
    assert parse(raw).text == text


def test_eight_bit_body_without_a_charset_is_guessed():
    raw = b"From: a@example.com\r\nSubject: x\r\n\r\n" + "打印机坏了".encode("gbk")
    assert parse(raw).text == "打印机坏了"


def test_html_charset_from_its_meta_when_the_part_declares_none():
    html = '<html><head><meta charset="gbk"></head><body><p>打印机</p></body></html>'
    raw = (
        b"From: a@example.com\r\nContent-Type: text/html\r\nContent-Transfer-Encoding: 8bit"
        b"\r\n\r\n" + html.encode("gbk")
    )
    assert parse(raw).text == "打印机"


# --- headers: RFC 2047 and what clients really write ------------------------------------------


def _split_word(text: str, charset: str) -> str:
    data = text.encode(charset)
    first, second = data[:3], data[3:]  # cuts the second character in half
    return " ".join(
        f"=?{charset}?B?{base64.b64encode(half).decode()}?=" for half in (first, second)
    )


@pytest.mark.parametrize(
    ("raw", "decoded"),
    [
        ("=?utf-8?B?5omT5Y2w5py6?=", "打印机"),
        ("=?UTF-8?Q?Caf=C3=A9_machine?=", "Café machine"),
        (_split_word("一堆的文", "gb2312"), "一堆的文"),  # a character split over two words
        ("Re: =?utf-8?B?5omT5Y2w5py6?= broken", "Re: 打印机 broken"),
        ("=?utf-8?B?5omT?==?utf-8?B?5Y2w?=", "打印"),  # no space between the words
        ("=?utf-8?B?5omT5Y2w5py6?", "=?utf-8?B?5omT5Y2w5py6?"),  # unterminated: as written
        ("=?utf-8?B?SGVsbG8?=", "Hello"),  # missing base64 padding
        ("=?utf-8*en?Q?Hi?=", "Hi"),  # RFC 2231 language in the charset
        ("=?x-unknown?B?5omT5Y2w5py6?=", "打印机"),
        ("=?iso-8859-1?Q?Caf=E9_=96_x?=", "Café – x"),
        ("=?utf-8?Q?line?=\r\n =?utf-8?Q?_folded?=", "line folded"),
        ("plain\r\n\tfolded", "plain\tfolded"),
    ],
)
def test_decode_header_reads_encoded_words_however_they_are_written(raw, decoded):
    assert decode_header(raw) == decoded


def test_raw_eight_bit_headers_in_gbk_and_utf8_read():
    raw = (
        b"From: " + "王悦".encode("gbk") + b" <wangyue@qq.example.com>\r\n"
        b"To: " + "服务台".encode() + b" <it@desk.example.com>\r\n"
        b"Subject: " + "回复：打印机".encode("gbk") + b"\r\n\r\nbody\r\n"
    )
    message = parse(raw)
    assert message.sender_name == "王悦"
    assert message.subject == "回复：打印机"
    assert message.names["it@desk.example.com"] == "服务台"


def test_a_decoded_name_with_a_comma_does_not_split_the_address_list():
    raw = (
        b"From: a@example.com\r\n"
        b"To: =?utf-8?Q?Smith=2C_John?= <john@example.com>, b@example.com\r\n\r\nbody"
    )
    message = parse(raw)
    assert message.to == ("john@example.com", "b@example.com")
    assert message.names["john@example.com"] == "Smith, John"


def test_addresses_are_lower_cased_and_invalid_ones_dropped():
    raw = make_message(
        from_="Alice <Alice@Example.COM>",
        to="IT <IT-Help@Desk.Example.com>, undisclosed-recipients:;",
        cc="Bob <BOB@example.com>, not an address",
        reply_to="Desk <Replies@Example.com>",
    )
    message = parse(raw)
    assert message.sender == "alice@example.com"
    assert message.to == ("it-help@desk.example.com",)
    assert message.cc == ("bob@example.com",)
    assert message.reply_to == ("replies@example.com",)


def test_message_ids_and_thread_ids():
    assert message_ids("<a@b> <c@d>") == ("a@b", "c@d")
    assert message_ids("bare@id.example") == ("bare@id.example",)
    assert message_ids("") == ()
    raw = make_message(
        message_id="<m@x>", in_reply_to="<p@x>", references=["<root@x>", "<mid@x>", "<p@x>"]
    )
    message = parse(raw)
    assert message.message_id == "m@x"
    assert message.thread_ids() == ("p@x", "mid@x", "root@x")


def test_references_folded_over_many_lines_are_all_read():
    ids = [f"<id{n}@desk.example.com>" for n in range(30)]
    message = parse(make_message(references=ids))
    assert len(message.references) == 30


# --- file names -------------------------------------------------------------------------------


def _with_part(disposition: str, content_type: str = "application/pdf") -> bytes:
    return (
        "From: a@example.com\r\nMIME-Version: 1.0\r\n"
        'Content-Type: multipart/mixed; boundary="b"\r\n\r\n'
        "--b\r\nContent-Type: text/plain\r\n\r\nsee attached\r\n"
        f"--b\r\nContent-Type: {content_type}\r\n{disposition}"
        "Content-Transfer-Encoding: base64\r\n\r\nJVBERg==\r\n--b--\r\n"
    ).encode("utf-8", errors="surrogateescape")


@pytest.mark.parametrize(
    ("disposition", "filename"),
    [
        (
            "Content-Disposition: attachment; filename*=UTF-8''%E6%8A%A5%E5%91%8A.pdf\r\n",
            "报告.pdf",
        ),
        (
            "Content-Disposition: attachment; filename*=gb2312''%B1%A8%B8%E6.pdf\r\n",
            "报告.pdf",
        ),
        (
            "Content-Disposition: attachment;\r\n filename*0*=UTF-8''%E6%8A%A5;\r\n"
            " filename*1*=%E5%91%8A;\r\n filename*2=.pdf\r\n",
            "报告.pdf",
        ),
        (
            'Content-Disposition: attachment; filename="=?gb2312?B?sai45i5wZGY=?="\r\n',
            "报告.pdf",
        ),  # Outlook / Foxmail
        (
            'Content-Disposition: attachment;\r\n filename="=?utf-8?B?5oql?=\r\n'
            ' =?utf-8?B?5ZGKLnBkZg==?="\r\n',
            "报告.pdf",
        ),
        (
            "Content-Disposition: attachment; filename=\"old.pdf\"; filename*=UTF-8''new.pdf\r\n",
            "new.pdf",
        ),
        ('Content-Disposition: attachment; filename="C:\\\\fakepath\\\\x.pdf"\r\n', "x.pdf"),
        ('Content-Disposition: attachment; filename="../../etc/passwd"\r\n', "passwd"),
        ("", "attachment001.pdf"),
    ],
)
def test_attachment_file_names(disposition, filename):
    (part,) = parse(_with_part(disposition)).parts
    assert part.filename == filename
    assert part.data == b"%PDF"


def test_a_name_in_the_content_type_only_is_used():
    (part,) = parse(_with_part("", 'application/pdf; name="Rechnung.pdf"')).parts
    assert part.filename == "Rechnung.pdf"


def test_raw_gbk_bytes_in_a_file_name_read():
    raw = _with_part("").replace(
        b"Content-Type: application/pdf",
        b'Content-Type: application/pdf; name="' + "报告.pdf".encode("gbk") + b'"',
    )
    (part,) = parse(raw).parts
    assert part.filename == "报告.pdf"


def test_parts_without_names_get_them_from_their_type():
    raw = make_message(
        html='<p><img src="cid:one"><img src="cid:two"></p>',
        attachments=[
            Attachment("", b"\x89PNG1", "image/png", inline=True, content_id="one"),
            Attachment("", b"\xff\xd8\xff", "image/jpeg", inline=True, content_id="two"),
            Attachment("", b"data", "application/octet-stream"),
        ],
    )
    names = {p.content_id or p.content_type: p.filename for p in parse(raw).parts}
    assert names["one"] in {"image001.png", "image002.png"}
    assert names["two"] in {"image001.jpg", "image002.jpg"}
    assert names["application/octet-stream"] == "attachment001.bin"


def test_safe_filename_keeps_the_extension_of_a_long_name():
    name = safe_filename("x" * 300 + ".pdf")
    assert len(name) == 200
    assert name.endswith(".pdf")
    assert safe_filename("a\x00b\x1f.txt") == "ab.txt"


# --- structure --------------------------------------------------------------------------------


def test_text_and_html_bodies_are_not_parts_but_a_text_attachment_is():
    raw = make_message(
        body="see log",
        html="<p>see log</p>",
        attachments=[
            ("log.txt", b"line 1\n", "text/plain"),
            ("page.html", b"<p>x</p>", "text/html"),
        ],
    )
    message = parse(raw)
    assert message.text == "see log"
    assert message.html == "<p>see log</p>"
    assert [(p.filename, p.content_type) for p in message.parts] == [
        ("log.txt", "text/plain"),
        ("page.html", "text/html"),
    ]


def test_inline_image_from_make_message_keeps_its_cid():
    raw = make_message(
        html='<p>Look: <img src="cid:shot@x"></p>',
        attachments=[Attachment("shot.png", b"\x89PNG", "image/png", True, "shot@x")],
    )
    message = parse(raw)
    (image,) = message.parts
    assert (image.content_id, image.inline) == ("shot@x", True)
    assert '<img src="cid:shot@x">' in message.html


def test_apple_mail_text_pieces_around_an_inline_image_are_joined():
    raw = (
        b"From: a@example.com\r\nMIME-Version: 1.0\r\n"
        b'Content-Type: multipart/mixed; boundary="Apple-Mail=_1"\r\n\r\n'
        b"--Apple-Mail=_1\r\nContent-Type: text/plain; charset=us-ascii\r\n\r\nBefore\r\n"
        b"--Apple-Mail=_1\r\nContent-Disposition: inline; filename=a.png\r\n"
        b"Content-Type: image/png; name=a.png\r\nContent-Transfer-Encoding: base64\r\n\r\n"
        b"iVBORw==\r\n"
        b"--Apple-Mail=_1\r\nContent-Type: text/plain; charset=us-ascii\r\n\r\nAfter\r\n"
        b"--Apple-Mail=_1--\r\n"
    )
    message = parse(raw)
    assert message.text == "Before\n\nAfter"
    assert [p.filename for p in message.parts] == ["a.png"]


def test_html_only_message_gets_its_text_from_the_html():
    message = parse(make_message(body=None, html="<p>Hello&nbsp;<b>there</b></p><p>Line 2</p>"))
    assert message.text == "Hello there\n\nLine 2"
    assert message.html == "<p>Hello&nbsp;<b>there</b></p><p>Line 2</p>"


def test_a_forwarded_message_from_make_message_is_an_eml_part():
    inner = make_message(subject="Original / question", body="inner body", message_id="<in@x>")
    raw = make_message(
        subject="Fwd: Original", attachments=[Attachment("", inner, "message/rfc822")]
    )
    (part,) = parse(raw).parts
    assert part.filename == "Original _ question.eml"
    assert parse(part.data).message_id == "in@x"


def test_a_signature_of_a_signed_message_is_no_part():
    raw = (
        b"From: a@example.com\r\nMIME-Version: 1.0\r\nContent-Type: multipart/signed; "
        b'protocol="application/pkcs7-signature"; micalg=sha-256; boundary="S"\r\n\r\n'
        b"--S\r\nContent-Type: text/plain\r\n\r\nsigned words\r\n"
        b"--S\r\nContent-Type: application/pkcs7-signature; name=smime.p7s\r\n"
        b"Content-Transfer-Encoding: base64\r\n\r\nMIIB\r\n--S--\r\n"
    )
    message = parse(raw)
    assert message.text == "signed words"
    assert message.parts == ()


def test_multipart_without_a_boundary_reads_its_body_as_text():
    raw = b"From: a@example.com\r\nContent-Type: multipart/mixed\r\n\r\nplain words\r\n"
    message = parse(raw)
    assert message.text == "plain words"
    assert "multipart without a boundary" in message.defects


def test_format_flowed_with_delsp():
    assert unflow("Hel \nlo there\n> quo \n> ted", delsp=True) == "Hello there\n> quoted"
    assert unflow("a \nb\n-- \nsig") == "a b\n-- \nsig"


def test_the_ten_megabyte_message_keeps_its_attachment_whole():
    raw = big_message()
    assert len(raw) > TEN_MB
    message = parse(raw)
    (scan,) = message.parts
    assert len(scan.data) == TEN_MB
    assert scan.filename == "scan.pdf"
    assert message.text == "The scan is attached."


# --- HTML -------------------------------------------------------------------------------------


def test_sanitize_html_removes_scripts_styles_handlers_and_remote_images():
    dirty = (
        '<div onclick="steal()" style="color:red">Hi <b>there</b>'
        "<script>alert(1)</script><style>p{color:red}</style>"
        '<a href="javascript:alert(1)">bad</a> <a href="https://ok.example/">good</a>'
        '<img src="https://tracker.example/p.gif" alt="x > y"><img src="cid:logo@x" onerror="x()">'
        '<iframe src="https://evil.example/"></iframe><form><input name="p"></form>'
        '<img src="data:image/png;base64,AAAA"></div>'
    )
    clean = sanitize_html(dirty)
    assert clean == (
        '<div>Hi <b>there</b><a rel="noopener noreferrer">bad</a> '
        '<a href="https://ok.example/" rel="noopener noreferrer">good</a>'
        '<img src="cid:logo@x"></div>'
    )


def test_sanitize_html_keeps_basic_formatting():
    html = (
        "<h2>Title</h2><p><i>a</i> <u>b</u> <strong>c</strong></p><ul><li>x</li></ul>"
        '<table><tr><td colspan="2">cell</td></tr></table><blockquote>q</blockquote><br><hr>'
    )
    clean = sanitize_html(html)
    for fragment in ("<h2>", "<i>", "<u>", "<strong>", "<ul><li>", 'colspan="2"', "<blockquote>"):
        assert fragment in clean


def test_html_to_text_blocks_lists_links_entities_and_quotes():
    html = (
        "<html><head><title>T</title><style>p{}</style></head><body>"
        "<p>Hello &amp; welcome</p><div>line<br>break</div>"
        "<ul><li>one</li><li>two</li></ul><ol><li>first</li><li>second</li></ol>"
        '<p><a href="https://x.example/a">the docs</a> and '
        '<a href="mailto:it@x.example">it@x.example</a></p>'
        "<blockquote><p>quoted</p><blockquote>deeper</blockquote></blockquote>"
        "<script>var x = 1;</script><pre>  keep\n  spaces</pre></body></html>"
    )
    assert html_to_text(html) == (
        "Hello & welcome\n\nline\nbreak\n\n- one\n- two\n\n1. first\n2. second\n\n"
        "the docs (https://x.example/a) and it@x.example\n\n> quoted\n>\n> > deeper\n\n"
        "  keep\n  spaces"
    )


# --- robustness -------------------------------------------------------------------------------

_CORPUS = [load(name) for name in NAMES]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
@given(
    st.sampled_from(_CORPUS),
    st.lists(st.tuples(st.floats(0, 1), st.binary(min_size=0, max_size=8)), max_size=6),
    st.floats(0, 1),
)
def test_parse_never_crashes_on_mutated_corpus_bytes(raw, edits, cut):
    data = bytearray(raw)
    for where, replacement in edits:
        position = int(where * len(data))
        data[position : position + len(replacement)] = replacement
    data = data[: max(1, int(len(data) * (0.5 + cut / 2)))]
    message, reason = _parse_or_reason(bytes(data))
    assert INTERNAL not in reason
    if message is not None:
        assert isinstance(message.text, str)
        assert all(isinstance(p.data, bytes) for p in message.parts)


def _parse_or_reason(raw):
    try:
        return parse(raw), ""
    except Unparseable as exc:
        return None, str(exc)
