"""Attachments on an S3-compatible store (ATTACHMENT_STORAGE=s3: django-storages), against
moto's S3 server on a free port — S3 is a third party, moto its stand-in: upload, download
through the permission check, stored once by hash, and gone with the last reference."""

import hashlib
import socket

import boto3
import pytest
from moto.server import ThreadedMotoServer

from attachments.models import Blob
from config.settings.base import s3_storage
from tests.attachments.helpers import PDF, png, upload

BUCKET = "ticketdesk-test"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def s3_endpoint():
    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    yield f"http://127.0.0.1:{port}"
    server.stop()


@pytest.fixture
def bucket(s3_endpoint, settings):
    client = boto3.client(
        "s3",
        endpoint_url=s3_endpoint,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
    )
    client.create_bucket(Bucket=BUCKET)
    settings.STORAGES = {
        **settings.STORAGES,
        "default": s3_storage(
            BUCKET,
            endpoint_url=s3_endpoint,
            region_name="us-east-1",
            access_key="test",
            secret_key="test",
        ),
    }
    yield client
    for item in client.list_objects_v2(Bucket=BUCKET).get("Contents", []):
        client.delete_object(Bucket=BUCKET, Key=item["Key"])
    client.delete_bucket(Bucket=BUCKET)


def _keys(client) -> list[str]:
    return [item["Key"] for item in client.list_objects_v2(Bucket=BUCKET).get("Contents", [])]


def test_files_live_in_the_bucket_by_content_hash(api, applicant, bucket):
    data = png()
    first = upload(api, applicant, "photo.png", data).json()
    second = upload(api, applicant, "again.png", data).json()
    sha = hashlib.sha256(data).hexdigest()
    assert _keys(bucket) == [f"blobs/{sha[:2]}/{sha[2:4]}/{sha}"]
    body = bucket.get_object(Bucket=BUCKET, Key=_keys(bucket)[0])["Body"].read()
    assert body == data
    download = api.as_user(applicant).get(first["download_url"])
    assert download.status_code == 200
    assert b"".join(download.streaming_content) == data
    assert api.as_user(applicant).delete(f"/api/attachments/{first['id']}/").status_code == 204
    assert len(_keys(bucket)) == 1
    assert api.as_user(applicant).delete(f"/api/attachments/{second['id']}/").status_code == 204
    assert _keys(bucket) == [] and not Blob.objects.exists()


def test_others_cannot_read_a_file_in_the_bucket(api, applicant, bucket):
    from tests.factories import UserFactory

    pdf = upload(api, applicant, "invoice.pdf", PDF).json()
    stranger = UserFactory(username="stranger")
    assert api.as_user(stranger).get(pdf["download_url"]).status_code == 404
