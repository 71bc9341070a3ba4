"""Files on the console's pages, without script: the submit form and the composer upload the
files sent with them (all or none) and attach those uploaded before (attachment_ids); a
refused file, or files beyond the ticket's total, submit or send nothing (400, the message by
the file field, the text and earlier uploads kept); the ticket page lists the files, with
thumbnails, and an internal note's files are the team's only."""

import re
from html import unescape

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import translation

from attachments import services as attachment_services
from attachments import types
from attachments.errors import FileTooLarge, UnsupportedType
from attachments.models import Attachment
from tests.attachments.helpers import EXE, PDF, png
from tests.factories import UserFactory
from ticketing.models import ReplyType, Ticket, TicketReply
from workflow import services

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("media")]

# (libmagic's name for an executable differs between its versions)
EXE_REFUSED = str(UnsupportedType(types.detect(EXE)).detail)


def file(name: str, data: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type="application/octet-stream")


def uploaded(user, name: str, data: bytes) -> Attachment:
    """An upload as attachments.js makes it before the form is sent."""
    return attachment_services.upload(uploader=user, file=file(name, data))


def url(ticket, name=""):
    return f"/console/tickets/{ticket.pk}/{name + '/' if name else ''}"


def page_text(response) -> str:
    return unescape(response.content.decode())


def field_errors(response) -> list[str]:
    return [
        unescape(e) for e in re.findall(r'data-testid="files-error">([^<]*)<', page_text(response))
    ]


def carried_ids(response) -> list[int]:
    return [int(i) for i in re.findall(r'name="attachment_ids" value="(\d+)"', page_text(response))]


@pytest.fixture
def accepted(pooled, handlers):
    services.ticket_accept(ticket_id=pooled.pk, handler=handlers[0])
    return pooled


SUBMIT = {"title": "Printer jams", "content": "See the photo.", "priority": "2"}


# --- the submit form --------------------------------------------------------------------


def test_the_submit_form_uploads_the_files_sent_with_it(as_user, applicant):
    response = as_user(applicant).post(
        "/console/submit/",
        {**SUBMIT, "files": [file("jam.png", png()), file("manual.pdf", PDF)]},
    )
    assert response.status_code == 302, field_errors(response)
    ticket = Ticket.objects.get()
    files = Attachment.objects.filter(ticket=ticket).order_by("id")
    assert [(a.filename, a.reply_id, a.uploader_id) for a in files] == [
        ("jam.png", None, applicant.pk),
        ("manual.pdf", None, applicant.pk),
    ]


def test_the_submit_form_attaches_the_uploads_made_before(as_user, applicant):
    photo = uploaded(applicant, "jam.png", png())
    response = as_user(applicant).post(
        "/console/submit/",
        {**SUBMIT, "attachment_ids": [str(photo.pk)], "files": [file("manual.pdf", PDF)]},
    )
    assert response.status_code == 302
    ticket = Ticket.objects.get()
    assert sorted(Attachment.objects.filter(ticket=ticket).values_list("filename", flat=True)) == [
        "jam.png",
        "manual.pdf",
    ]


def test_a_refused_file_submits_nothing_and_keeps_the_text(as_user, applicant):
    before = uploaded(applicant, "jam.png", png())
    response = as_user(applicant).post(
        "/console/submit/",
        {
            **SUBMIT,
            "attachment_ids": [str(before.pk)],
            "files": [file("manual.pdf", PDF), file("invoice.pdf", EXE)],
        },
    )
    assert response.status_code == 400
    assert not Ticket.objects.exists()
    # The file sent with the form that passed is not kept; the one uploaded before is, and
    # the form still carries it.
    assert list(Attachment.objects.values_list("filename", flat=True)) == ["jam.png"]
    assert carried_ids(response) == [before.pk]
    assert field_errors(response) == [EXE_REFUSED]
    html = page_text(response)
    assert 'value="Printer jams"' in html and "See the photo." in html
    assert "jam.png" in html


def test_a_file_over_the_limit_is_refused_with_the_servers_words(as_user, applicant, settings):
    settings.ATTACHMENT_MAX_BYTES = 1000
    response = as_user(applicant).post(
        "/console/submit/", {**SUBMIT, "files": [file("big.txt", b"x" * 1001)]}
    )
    assert response.status_code == 400
    assert field_errors(response) == [str(FileTooLarge(1000).detail)]
    assert not Ticket.objects.exists() and not Attachment.objects.exists()


def test_a_form_with_other_errors_keeps_the_files_sent_with_it(as_user, applicant):
    response = as_user(applicant).post(
        "/console/submit/", {**SUBMIT, "title": "", "files": [file("manual.pdf", PDF)]}
    )
    assert response.status_code == 400 and not Ticket.objects.exists()
    kept = Attachment.objects.get()
    assert carried_ids(response) == [kept.pk] and "manual.pdf" in page_text(response)
    # Sent again with a title, the file is attached without being chosen again.
    again = as_user(applicant).post(
        "/console/submit/", {**SUBMIT, "attachment_ids": [str(kept.pk)]}
    )
    assert again.status_code == 302
    assert Attachment.objects.get().ticket == Ticket.objects.get()


def test_someone_elses_upload_is_refused_by_the_file_field(as_user, applicant):
    theirs = uploaded(UserFactory(username="someone"), "theirs.pdf", PDF)
    response = as_user(applicant).post(
        "/console/submit/", {**SUBMIT, "attachment_ids": [str(theirs.pk)]}
    )
    assert response.status_code == 400 and not Ticket.objects.exists()
    assert field_errors(response) == [
        f"No upload of yours waiting to be attached has the id {theirs.pk}."
    ]
    assert carried_ids(response) == []  # not theirs to carry
    assert "theirs.pdf" not in page_text(response)


def test_ids_that_are_not_uploads_are_a_400(as_user, applicant):
    response = as_user(applicant).post("/console/submit/", {**SUBMIT, "attachment_ids": ["x"]})
    assert response.status_code == 400 and not Ticket.objects.exists()
    assert field_errors(response) == ["That is not a list of uploads."]


def test_submit_beyond_the_tickets_total_attaches_nothing(as_user, applicant, settings):
    settings.ATTACHMENT_TICKET_MAX_BYTES = 150
    before = uploaded(applicant, "a.txt", b"a" * 100)
    response = as_user(applicant).post(
        "/console/submit/",
        {**SUBMIT, "attachment_ids": [str(before.pk)], "files": [file("b.txt", b"b" * 100)]},
    )
    assert response.status_code == 400 and not Ticket.objects.exists()
    assert field_errors(response) == [
        "A ticket's files may add up to 150\xa0bytes; these would go beyond it."
    ]
    assert list(Attachment.objects.values_list("filename", flat=True)) == ["a.txt"]
    assert carried_ids(response) == [before.pk]


def test_the_forms_carry_the_limit_and_its_words(as_user, applicant, accepted, handlers, settings):
    settings.ATTACHMENT_MAX_BYTES = 5 * 1024 * 1024
    for client, page in (
        (as_user(applicant), "/console/submit/"),
        (as_user(handlers[0]), url(accepted)),
    ):
        html = client.get(page).content.decode()
        form = re.search(r"<form[^>]*data-uploads[^>]*>", html).group(0)
        assert 'enctype="multipart/form-data"' in form
        assert f'data-max-bytes="{5 * 1024 * 1024}"' in form
        assert 'data-text-too-large="The file is larger than the limit of 5.0\xa0MB."' in form
        assert '<input type="file" name="files"' in html and " multiple" in html
    with translation.override("zh-hans"):
        expected = str(FileTooLarge(5 * 1024 * 1024).detail)
    client = as_user(applicant)
    html = client.get("/console/submit/", headers={"accept-language": "zh-hans"}).content.decode()
    assert '<html lang="zh-hans"' in html
    assert f'data-text-too-large="{expected}"' in unescape(html)


# --- the composer ----------------------------------------------------------------------


def test_a_reply_uploads_the_files_sent_with_it(as_user, handlers, accepted):
    before = uploaded(handlers[0], "trace.txt", b"traceroute\n")
    response = as_user(handlers[0]).post(
        url(accepted, "reply"),
        {
            "reply_type": "1",
            "content": "Logs attached.",
            "attachment_ids": [str(before.pk)],
            "files": [file("vpn.pdf", PDF)],
        },
    )
    assert response.status_code == 302
    reply = TicketReply.objects.get(ticket=accepted)
    assert sorted(a.filename for a in Attachment.objects.filter(reply=reply)) == [
        "trace.txt",
        "vpn.pdf",
    ]
    html = page_text(as_user(handlers[0]).get(response["Location"]))
    assert "vpn.pdf" in html and "trace.txt" in html


def test_a_refused_file_sends_nothing_and_keeps_the_text(as_user, handlers, accepted):
    before = uploaded(handlers[0], "trace.txt", b"traceroute\n")
    response = as_user(handlers[0]).post(
        url(accepted, "reply"),
        {
            "reply_type": "2",
            "content": "Root cause inside.",
            "attachment_ids": [str(before.pk)],
            "files": [file("ok.pdf", PDF), file("tool.pdf", EXE)],
        },
    )
    assert response.status_code == 400
    assert not TicketReply.objects.exists()
    assert list(Attachment.objects.values_list("filename", flat=True)) == ["trace.txt"]
    assert Attachment.objects.get().ticket_id is None
    assert field_errors(response) == [EXE_REFUSED]
    html = page_text(response)
    assert "Root cause inside.</textarea>" in html
    assert re.search(r'id="reply-type-internal" value="2" checked', html)  # the tab too
    assert carried_ids(response) == [before.pk]
    assert "The reply was not sent" in html


def test_a_reply_beyond_the_tickets_total_sends_nothing(as_user, handlers, accepted, settings):
    settings.ATTACHMENT_TICKET_MAX_BYTES = 150
    client = as_user(handlers[0])
    first = uploaded(handlers[0], "a.txt", b"a" * 100)
    assert (
        client.post(
            url(accepted, "reply"),
            {"reply_type": "1", "content": "one", "attachment_ids": [str(first.pk)]},
        ).status_code
        == 302
    )
    second = uploaded(handlers[0], "b.txt", b"b" * 30)
    response = client.post(
        url(accepted, "reply"),
        {
            "reply_type": "1",
            "content": "over",
            "attachment_ids": [str(second.pk)],
            "files": [file("c.txt", b"c" * 30)],
        },
    )
    assert response.status_code == 400
    assert not TicketReply.objects.filter(content="over").exists()
    assert field_errors(response) == [
        "A ticket's files may add up to 150\xa0bytes; these would go beyond it."
    ]
    # The file sent with the form is gone; the one uploaded before is still carried, to take
    # off with its ×.
    assert not Attachment.objects.filter(filename="c.txt").exists()
    assert Attachment.objects.get(pk=second.pk).ticket_id is None
    assert carried_ids(response) == [second.pk]
    assert "over</textarea>" in page_text(response)


def test_a_newer_reply_keeps_the_files_listed(as_user, handlers, applicant, accepted):
    client = as_user(handlers[0])
    html = client.get(url(accepted)).content.decode()
    seen = re.search(r'name="seen_reply_id" value="(\d+)"', html).group(1)
    services.ticket_reply(
        ticket_id=accepted.pk, author=applicant, reply_type=ReplyType.PUBLIC, content="Fixed?"
    )
    before = uploaded(handlers[0], "trace.txt", b"traceroute\n")
    response = client.post(
        url(accepted, "reply"),
        {
            "reply_type": "1",
            "content": "On it.",
            "seen_reply_id": seen,
            "attachment_ids": [str(before.pk)],
            "files": [file("vpn.pdf", PDF)],
        },
    )
    assert response.status_code == 409
    sent_along = Attachment.objects.get(filename="vpn.pdf")
    assert carried_ids(response) == [before.pk, sent_along.pk]
    html = page_text(response)
    assert "trace.txt" in html and "vpn.pdf" in html
    assert Attachment.objects.filter(ticket=None).count() == 2
    # The second Send sends them.
    seen = re.search(r'name="seen_reply_id" value="(\d+)"', html).group(1)
    again = client.post(
        url(accepted, "reply"),
        {
            "reply_type": "1",
            "content": "On it.",
            "seen_reply_id": seen,
            "attachment_ids": [str(i) for i in carried_ids(response)],
        },
    )
    assert again.status_code == 302
    reply = TicketReply.objects.get(content="On it.")
    assert Attachment.objects.filter(reply=reply).count() == 2


# --- the ticket page --------------------------------------------------------------------


@pytest.fixture
def with_files(accepted, applicant, handlers):
    """The applicant's screenshot with the ticket, an agent's PDF in a public reply and a
    log in an internal note."""
    shot = uploaded(applicant, "screen.png", png(64, 48))
    attachment_services.attach(user=applicant, ticket=accepted, attachment_ids=[shot.pk])
    guide = uploaded(handlers[0], "guide.pdf", PDF)
    services.ticket_reply(
        ticket_id=accepted.pk,
        author=handlers[0],
        reply_type=ReplyType.PUBLIC,
        content="Follow the guide.",
        attachment_ids=[guide.pk],
    )
    secret = uploaded(handlers[0], "root-cause-secret.txt", b"the admin password expired\n")
    services.ticket_reply(
        ticket_id=accepted.pk,
        author=handlers[0],
        reply_type=ReplyType.INTERNAL,
        content="Internal: see log.",
        attachment_ids=[secret.pk],
    )
    return {"ticket": accepted, "shot": shot, "guide": guide, "secret": secret}


def file_rows(html: str) -> list[str]:
    return re.findall(r'<li class="file[^"]*"[^>]*>.*?</li>', html, flags=re.S)


def test_the_ticket_page_lists_each_file_where_it_was_sent(as_user, handlers, with_files):
    guide = with_files["guide"]
    html = as_user(handlers[0]).get(url(with_files["ticket"])).content.decode()
    rows = file_rows(html)
    # Under the ticket's text, under each reply, and all of them in the side panel.
    assert len(rows) == 6
    guide_row = next(r for r in rows if "guide.pdf" in r)
    assert f'href="/api/attachments/{guide.pk}/download/"' in guide_row
    assert ">PDF</abbr>" in guide_row and 'title="application/pdf"' in guide_row
    assert f"{len(PDF)}\xa0bytes" in unescape(guide_row)
    assert "chip-internal" not in guide_row
    secret_rows = [r for r in rows if "root-cause-secret.txt" in r]
    assert len(secret_rows) == 2
    assert all("file-internal" in r and "Internal note</span>" in r for r in secret_rows)
    # Each reply lists its own.
    conversation = html[html.index('data-testid="conversation"') :]
    conversation = conversation[: conversation.index('class="reply-form')]
    public = re.search(r"Follow the guide\..*?</li>\s*</ul>", conversation, flags=re.S).group(0)
    assert "guide.pdf" in public and "root-cause" not in public
    side = html[html.index('data-testid="files-card"') :]
    assert ">3</span>" in side[:300]


def test_image_thumbnails_show_once_a_worker_made_them(as_user, handlers, with_files):
    shot = with_files["shot"]
    client = as_user(handlers[0])
    assert "/thumbnail/" not in client.get(url(with_files["ticket"])).content.decode()
    assert attachment_services.make_thumbnail(shot.blob_id) is True
    html = client.get(url(with_files["ticket"])).content.decode()
    thumbs = re.findall(r"<img [^>]*>", html)
    thumbnail = f'src="/api/attachments/{shot.pk}/thumbnail/"'
    assert thumbs and all(thumbnail in img and 'loading="lazy"' in img for img in thumbs)
    assert client.get(f"/api/attachments/{shot.pk}/thumbnail/").status_code == 200


def test_the_applicant_never_sees_an_internal_notes_file(as_user, applicant, with_files):
    secret = with_files["secret"]
    response = as_user(applicant).get(url(with_files["ticket"]))
    assert response.status_code == 200
    html = response.content.decode()
    assert "root-cause-secret" not in html
    assert f"/api/attachments/{secret.pk}/" not in html
    assert f'data-file-id="{secret.pk}"' not in html
    assert not re.search(rf"\b{secret.pk}\b", " ".join(re.findall(r"attachments/\d+", html)))
    # Their own and the public reply's files are there.
    assert "screen.png" in html and "guide.pdf" in html
    assert len(file_rows(html)) == 4


def test_the_ticket_page_reads_the_files_in_a_fixed_number_of_queries(
    as_user, handlers, with_files
):
    client = as_user(handlers[0])
    ticket = with_files["ticket"]

    def page_queries() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert client.get(url(ticket)).status_code == 200
        return len(queries)

    client.get(url(ticket))  # (sessions, caches)
    before = page_queries()
    for i in range(4):
        extra = uploaded(handlers[0], f"more-{i}.txt", f"more {i}\n".encode())
        services.ticket_reply(
            ticket_id=ticket.pk,
            author=handlers[0],
            reply_type=ReplyType.PUBLIC if i % 2 else ReplyType.INTERNAL,
            content=f"More {i}",
            attachment_ids=[extra.pk],
        )
    assert page_queries() == before
