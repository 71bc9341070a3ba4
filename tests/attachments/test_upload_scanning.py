"""Uploads through the API with ATTACHMENT_SCANNER=clamav, against a real ClamAV daemon
(tests/attachments/conftest.py): an infected file is refused with 422 and logged; with the
daemon unreachable every upload is refused with 503; nothing is ever stored unscanned."""

import logging

import pytest

from attachments.models import Attachment, Blob
from tests.attachments.helpers import PDF, upload

pytestmark = pytest.mark.usefixtures("media")


def _stored(media) -> list:
    return [p for p in media.rglob("*") if p.is_file()] if media.exists() else []


def test_a_clean_file_is_scanned_and_stored(api, applicant, clamav_scanning, media):
    response = upload(api, applicant, "invoice.pdf", PDF)
    assert response.status_code == 201, response.json()
    assert len(_stored(media)) == 1


def test_the_eicar_file_is_refused_with_422_and_logged(
    api, applicant, clamav_scanning, eicar, media, caplog
):
    with caplog.at_level(logging.WARNING, logger="attachments"):
        response = upload(api, applicant, "harmless.txt", eicar, "text/plain")
    assert response.status_code == 422
    assert response.json()["code"] == "infected"
    assert "threat" in response.json()["detail"]
    assert not Attachment.objects.exists() and not Blob.objects.exists()
    assert _stored(media) == []
    refused = [r for r in caplog.records if r.getMessage() == "upload refused: malware found"]
    assert refused and "eicar" in refused[0].signature.lower()


def test_with_the_scanner_down_uploads_are_refused_with_503(
    api, applicant, settings, tmp_path, media
):
    settings.ATTACHMENT_SCANNER = "clamav"
    settings.CLAMD_ADDRESS = f"unix://{tmp_path / 'no-clamd.sock'}"
    response = upload(api, applicant, "invoice.pdf", PDF)
    assert response.status_code == 503
    assert response.json()["code"] == "scanner_unavailable"
    assert not Attachment.objects.exists() and _stored(media) == []


def test_without_a_scanner_the_same_bytes_are_accepted(api, applicant, eicar, media):
    # The default (ATTACHMENT_SCANNER=""): nothing scans, so the test file is a text file.
    assert upload(api, applicant, "harmless.txt", eicar, "text/plain").status_code == 201
