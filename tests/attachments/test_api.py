"""Attachments through the API: upload, attach, who may download what, limits, types by
content, names, removal, the sweep and storing once by content hash."""

import hashlib
from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from attachments import services
from attachments.models import Attachment, Blob
from tests.attachments.helpers import EXE, PDF, png, upload
from tests.factories import HandlerGroupFactory, UserFactory
from ticketing.models import Ticket, TicketRecord, TicketReply
from workflow import services as ticket_services

pytestmark = pytest.mark.usefixtures("media")


@pytest.fixture
def agent(db):
    return UserFactory(username="agent")


@pytest.fixture
def stranger(db):
    return UserFactory(username="stranger")


@pytest.fixture
def group(agent):
    return HandlerGroupFactory(name="desk", members=[agent], assign_strategy=0)


@pytest.fixture
def ticket(submit, group, approver):
    ticket = submit(handler_group_id=group.pk)
    return ticket_services.ticket_approve(ticket_id=ticket.pk, approver=approver)


def _stored(media) -> list:
    return sorted(p for p in media.rglob("*") if p.is_file()) if media.exists() else []


def test_an_upload_answers_what_was_stored(api, applicant, media):
    data = png()
    response = upload(api, applicant, "printer error.png", data, "application/octet-stream")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["filename"] == "printer error.png"
    assert body["size"] == len(data)
    assert body["content_type"] == "image/png"  # from the bytes, not the client's header
    assert body["sha256"] == hashlib.sha256(data).hexdigest()
    assert set(body) >= {"id", "filename", "size", "content_type", "sha256"}
    stored = _stored(media)
    assert len(stored) == 1 and stored[0].read_bytes() == data
    assert "printer" not in str(stored[0])  # the key is never the user's file name


def test_a_missing_or_empty_file_is_a_400_naming_file(api, applicant, media):
    response = api.as_user(applicant).post("/api/attachments/", {}, format="multipart")
    assert response.status_code == 400 and "file" in response.json()["errors"]
    response = upload(api, applicant, "empty.txt", b"")
    assert response.status_code == 400 and "file" in response.json()["errors"]
    assert not Attachment.objects.exists() and _stored(media) == []


@pytest.mark.parametrize(
    ("name", "data", "claimed"),
    [
        ("invoice.pdf", EXE, "application/pdf"),  # a renamed executable
        ("notes.txt", b"#!/bin/sh\nrm -rf /\n", "text/plain"),
        (
            "page.png",
            b"<!DOCTYPE html><html><body><script>alert(1)</script></body></html>",
            "image/png",
        ),
        (
            "logo.png",
            b'<svg xmlns="http://www.w3.org/2000/svg"><script>1</script></svg>',
            "image/png",
        ),
    ],
)
def test_types_are_decided_by_content_and_refused_with_415(
    api, applicant, media, name, data, claimed
):
    response = upload(api, applicant, name, data, claimed)
    assert response.status_code == 415, response.json()
    assert response.json()["code"] == "unsupported_media_type"
    assert not Attachment.objects.exists() and not Blob.objects.exists()
    assert _stored(media) == []


def test_the_operator_may_widen_the_types(api, applicant, settings):
    settings.ATTACHMENT_ALLOWED_TYPES = [*settings.ATTACHMENT_ALLOWED_TYPES, "text/x-shellscript"]
    response = upload(api, applicant, "fix.sh", b"#!/bin/sh\necho fixed\n")
    assert response.status_code == 201 and response.json()["content_type"] == "text/x-shellscript"


def test_a_file_over_the_limit_is_a_413_and_nothing_is_stored(api, applicant, media, settings):
    settings.ATTACHMENT_MAX_BYTES = 1000
    response = upload(api, applicant, "big.txt", b"x" * 1001)
    assert response.status_code == 413
    assert response.json()["code"] == "payload_too_large"
    assert "1000" in response.json()["detail"] or "KB" in response.json()["detail"]
    assert upload(api, applicant, "fits.txt", b"x" * 1000).status_code == 201
    assert Attachment.objects.count() == 1


def test_a_body_far_over_the_limit_is_refused_before_it_is_read(api, applicant, media, settings):
    settings.ATTACHMENT_MAX_BYTES = 1000
    response = upload(api, applicant, "huge.txt", b"x" * 200_000)
    assert response.status_code == 413 and response.json()["code"] == "payload_too_large"
    assert not Attachment.objects.exists() and _stored(media) == []


@pytest.mark.parametrize(
    ("raw", "kept"),
    [
        ("发票 2026.pdf", "发票 2026.pdf"),
        ("../../etc/passwd.pdf", "passwd.pdf"),
        ("C:\\Users\\me\\scan.pdf", "scan.pdf"),
        ("report\u202efdp.exe.pdf", "reportfdp.exe.pdf"),  # a right-to-left override
        ("a\x00b\x1f\x7fc.pdf", "abc.pdf"),
        ("  .pdf  ", "pdf"),
    ],
)
def test_file_names_keep_unicode_but_lose_paths_and_control_characters(api, applicant, raw, kept):
    response = upload(api, applicant, raw, PDF)
    assert response.status_code == 201, response.json()
    assert response.json()["filename"] == kept


def test_long_names_are_cut_to_200_characters_keeping_the_extension(api, applicant):
    response = upload(api, applicant, "报" * 300 + ".pdf", PDF)
    assert response.status_code == 201
    name = response.json()["filename"]
    assert len(name) == 200 and name.endswith(".pdf")


def _submit_with(api, user, ids, **extra):
    return api.as_user(user).post(
        "/api/tickets/",
        {
            "title": "Printer",
            "content": "See the photo",
            "priority": 2,
            "attachment_ids": ids,
            **extra,
        },
        format="json",
    )


def test_a_ticket_is_submitted_with_its_files(api, applicant):
    photo = upload(api, applicant, "photo.png", png()).json()
    response = _submit_with(api, applicant, [photo["id"]])
    assert response.status_code == 201, response.json()
    files = response.json()["attachments"]
    assert [f["id"] for f in files] == [photo["id"]]
    assert files[0]["download_url"] == f"/api/attachments/{photo['id']}/download/"
    assert set(files[0]) >= {"id", "filename", "size", "content_type", "download_url"}
    listed = api.as_user(applicant).get("/api/tickets/").json()["results"]
    assert listed[0]["attachments"][0]["filename"] == "photo.png"


def test_only_the_uploader_may_attach_an_upload(api, applicant, stranger):
    photo = upload(api, applicant, "photo.png", png()).json()
    response = _submit_with(api, stranger, [photo["id"]])
    assert response.status_code == 400
    assert "attachment_ids" in response.json()["errors"]
    assert not Ticket.objects.exists()
    assert Attachment.objects.get(pk=photo["id"]).ticket_id is None


def test_an_upload_is_attached_once(api, applicant):
    photo = upload(api, applicant, "photo.png", png()).json()
    assert _submit_with(api, applicant, [photo["id"]]).status_code == 201
    again = _submit_with(api, applicant, [photo["id"]])
    assert again.status_code == 400 and "attachment_ids" in again.json()["errors"]
    assert Ticket.objects.count() == 1


def test_unknown_or_malformed_ids_are_a_400(api, applicant):
    assert "attachment_ids" in _submit_with(api, applicant, [999999]).json()["errors"]
    assert "attachment_ids" in _submit_with(api, applicant, ["x"]).json()["errors"]
    assert "attachment_ids" in _submit_with(api, applicant, "3").json()["errors"]
    assert not Ticket.objects.exists()


def _reply(api, user, ticket, ids, reply_type="public", content="See attached"):
    return api.as_user(user).post(
        f"/api/tickets/{ticket.pk}/replies/",
        {"content": content, "reply_type": reply_type, "attachment_ids": ids},
        format="json",
    )


def test_a_reply_carries_its_files_and_lists_them(api, applicant, agent, ticket):
    log = upload(api, agent, "vpn.log", b"2026-12-01 certificate expired\n").json()
    response = _reply(api, agent, ticket, [log["id"]])
    assert response.status_code == 201, response.json()
    assert [f["filename"] for f in response.json()["attachments"]] == ["vpn.log"]
    listed = api.as_user(applicant).get(f"/api/tickets/{ticket.pk}/replies/").json()
    assert listed[0]["attachments"][0]["content_type"] == "text/plain"


def test_the_ticket_total_is_a_413_and_nothing_is_attached(api, agent, ticket, settings):
    settings.ATTACHMENT_TICKET_MAX_BYTES = 150
    first = upload(api, agent, "a.txt", b"a" * 100).json()
    second = upload(api, agent, "b.txt", b"b" * 100).json()
    assert _reply(api, agent, ticket, [first["id"]]).status_code == 201
    response = _reply(api, agent, ticket, [second["id"]], content="over")
    assert response.status_code == 413 and response.json()["code"] == "payload_too_large"
    assert not TicketReply.objects.filter(content="over").exists()
    assert Attachment.objects.get(pk=second["id"]).ticket_id is None


def _download(api, user, attachment_id):
    return api.as_user(user).get(f"/api/attachments/{attachment_id}/download/")


def test_downloads_are_safe_to_open(api, applicant):
    photo = upload(api, applicant, "屏幕截图.png", png()).json()
    pdf = upload(api, applicant, "发票 2026.pdf", PDF).json()
    _submit_with(api, applicant, [photo["id"], pdf["id"]])
    image = _download(api, applicant, photo["id"])
    assert image.status_code == 200
    assert b"".join(image.streaming_content) == png()
    assert image["Content-Type"] == "image/png"
    assert image["X-Content-Type-Options"] == "nosniff"
    assert image["Content-Security-Policy"] == "sandbox"
    assert image["Content-Disposition"].startswith("inline;")
    document = _download(api, applicant, pdf["id"])
    assert b"".join(document.streaming_content) == PDF
    assert document["Content-Disposition"] == (
        "attachment; filename=\"__ 2026.pdf\"; filename*=UTF-8''%E5%8F%91%E7%A5%A8%202026.pdf"
    )
    assert document["Content-Security-Policy"] == "sandbox"


def test_text_and_svg_are_never_inline(api, applicant, settings):
    settings.ATTACHMENT_ALLOWED_TYPES = [*settings.ATTACHMENT_ALLOWED_TYPES, "image/svg+xml"]
    svg = upload(api, applicant, "logo.svg", b'<svg xmlns="http://www.w3.org/2000/svg"/>').json()
    text = upload(api, applicant, "a.txt", b"hello\n").json()
    _submit_with(api, applicant, [svg["id"], text["id"]])
    for attachment_id in (svg["id"], text["id"]):
        response = _download(api, applicant, attachment_id)
        assert response.status_code == 200
        assert response["Content-Disposition"].startswith("attachment;")


def test_an_internal_notes_file_is_the_teams_only(api, applicant, agent, stranger, ticket):
    note_file = upload(api, agent, "root-cause.txt", b"the cert expired\n").json()
    public_file = upload(api, agent, "howto.txt", b"renew it\n").json()
    assert _reply(api, agent, ticket, [note_file["id"]], reply_type="internal").status_code == 201
    assert _reply(api, agent, ticket, [public_file["id"]]).status_code == 201
    assert _download(api, agent, note_file["id"]).status_code == 200
    assert _download(api, applicant, public_file["id"]).status_code == 200
    unknown = _download(api, applicant, 987654)
    for user, attachment_id in ((applicant, note_file["id"]), (stranger, public_file["id"])):
        hidden = _download(api, user, attachment_id)
        assert hidden.status_code == 404
        assert hidden.json() == unknown.json()  # the same as for an unknown id
        meta = api.as_user(user).get(f"/api/attachments/{attachment_id}/")
        assert meta.status_code == 404
    replies = api.as_user(applicant).get(f"/api/tickets/{ticket.pk}/replies/").json()
    assert [f["id"] for r in replies for f in r["attachments"]] == [public_file["id"]]


def test_an_unattached_upload_is_its_uploaders_only(api, applicant, stranger, staff):
    photo = upload(api, applicant, "photo.png", png()).json()
    assert _download(api, applicant, photo["id"]).status_code == 200
    assert _download(api, stranger, photo["id"]).status_code == 404


def test_anonymous_callers_get_401(api, applicant):
    photo = upload(api, applicant, "photo.png", png()).json()
    api.credentials()
    assert api.get(f"/api/attachments/{photo['id']}/download/").status_code == 401
    assert api.post("/api/attachments/", {}, format="multipart").status_code == 401


def test_the_same_bytes_are_stored_once_and_go_with_the_last_reference(api, applicant, media):
    data = png(colour=(1, 2, 3))
    first = upload(api, applicant, "one.png", data).json()
    second = upload(api, applicant, "two.png", data).json()
    assert first["id"] != second["id"] and Blob.objects.count() == 1
    assert len(_stored(media)) == 1
    assert api.as_user(applicant).delete(f"/api/attachments/{first['id']}/").status_code == 204
    assert len(_stored(media)) == 1 and Blob.objects.count() == 1
    assert _download(api, applicant, second["id"]).status_code == 200
    assert api.as_user(applicant).delete(f"/api/attachments/{second['id']}/").status_code == 204
    assert _stored(media) == [] and not Blob.objects.exists()


def test_the_uploader_may_remove_within_15_minutes_and_history_says_so(
    api, applicant, agent, ticket
):
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        log = upload(api, agent, "wrong.txt", b"oops\n").json()
        _reply(api, agent, ticket, [log["id"]])
    with time_machine.travel(start + timedelta(minutes=14), tick=False):
        response = api.as_user(agent).delete(f"/api/attachments/{log['id']}/")
    assert response.status_code == 204
    assert _download(api, agent, log["id"]).status_code == 404
    assert _download(api, applicant, log["id"]).status_code == 404
    removed = TicketRecord.objects.get(ticket=ticket, action="attachment_removed")
    assert removed.actor_id == agent.pk and removed.detail["filename"] == "wrong.txt"
    history = api.as_user(applicant).get(f"/api/tickets/{ticket.pk}/records/").json()
    assert any(r["action"] == "attachment_removed" for r in history)  # a public file


def test_after_15_minutes_only_staff_may_remove(api, applicant, agent, staff, stranger, ticket):
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        log = upload(api, agent, "keep.txt", b"keep\n").json()
        _reply(api, agent, ticket, [log["id"]])
    with time_machine.travel(start + timedelta(minutes=16), tick=False):
        late = api.as_user(agent).delete(f"/api/attachments/{log['id']}/")
        other = api.as_user(applicant).delete(f"/api/attachments/{log['id']}/")
        hidden = api.as_user(stranger).delete(f"/api/attachments/{log['id']}/")
    assert late.status_code == 403 and other.status_code == 403 and hidden.status_code == 404
    assert Attachment.objects.filter(pk=log["id"]).exists()
    assert not TicketRecord.objects.filter(action="attachment_removed").exists()
    assert api.as_user(staff).delete(f"/api/attachments/{log['id']}/").status_code == 204
    assert not Attachment.objects.filter(pk=log["id"]).exists()


def test_an_internal_files_removal_is_not_in_the_applicants_history(api, applicant, agent, ticket):
    note = upload(api, agent, "secret.txt", b"x\n").json()
    _reply(api, agent, ticket, [note["id"]], reply_type="internal")
    assert api.as_user(agent).delete(f"/api/attachments/{note['id']}/").status_code == 204
    history = api.as_user(applicant).get(f"/api/tickets/{ticket.pk}/records/").json()
    assert not any(r["action"] == "attachment_removed" for r in history)
    assert "secret.txt" not in str(history)


def test_the_sweep_removes_uploads_never_attached_after_24_hours(api, applicant, media):
    kept_data, stale_data = png(colour=(9, 9, 9)), png(colour=(8, 8, 8))
    attached = upload(api, applicant, "kept.png", kept_data).json()
    _submit_with(api, applicant, [attached["id"]])
    shared = upload(api, applicant, "kept-again.png", kept_data).json()  # same bytes, unattached
    stale = upload(api, applicant, "stale.png", stale_data).json()
    now = timezone.now()
    assert services.sweep_unattached(now=now + timedelta(hours=23)) == 0
    assert services.sweep_unattached(now=now + timedelta(hours=25)) == 2
    assert set(Attachment.objects.values_list("pk", flat=True)) == {attached["id"]}
    assert Blob.objects.get().sha256 == attached["sha256"]  # still referenced: its bytes stay
    assert [p.read_bytes() for p in _stored(media)] == [kept_data]
    assert services.sweep_unattached(now=now + timedelta(hours=26)) == 0
    assert shared["id"] != stale["id"]


def test_the_sweep_removes_the_bytes_of_a_deleted_ticket(api, applicant, media):
    photo = upload(api, applicant, "photo.png", png()).json()
    ticket_id = _submit_with(api, applicant, [photo["id"]]).json()["id"]
    Ticket.objects.filter(pk=ticket_id).delete()  # as the admin would
    assert not Attachment.objects.exists() and len(_stored(media)) == 1
    later = timezone.now() + timedelta(hours=25)
    assert services.sweep_unattached(now=timezone.now()) == 0
    assert len(_stored(media)) == 1  # too recent: an upload may be about to refer to it
    services.sweep_unattached(now=later)
    assert not Blob.objects.exists() and _stored(media) == []


def test_a_worker_makes_image_thumbnails(api, applicant):
    photo = upload(api, applicant, "photo.png", png(1200, 900)).json()
    _submit_with(api, applicant, [photo["id"]])
    blob = Blob.objects.get()
    assert services.make_thumbnail(blob.pk) is True
    meta = api.as_user(applicant).get(f"/api/attachments/{photo['id']}/").json()
    assert meta["thumbnail_url"] == f"/api/attachments/{photo['id']}/thumbnail/"
    response = api.as_user(applicant).get(meta["thumbnail_url"])
    assert response.status_code == 200 and response["Content-Type"] == "image/png"
    from io import BytesIO

    from PIL import Image

    with Image.open(BytesIO(b"".join(response.streaming_content))) as small:
        assert max(small.size) == 320
    pdf = upload(api, applicant, "a.pdf", PDF).json()
    assert services.make_thumbnail(Blob.objects.get(sha256=pdf["sha256"]).pk) is False
    assert api.as_user(applicant).get(f"/api/attachments/{pdf['id']}/thumbnail/").status_code == 404
