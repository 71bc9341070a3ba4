"""The mail queries at a large desk's size use their indexes (EXPLAIN, not timing): the thread
lookup of every received message, the flood check, a ticket's messages (its mailbox, its
thread's References, the ticket page's "by e-mail"), and the admin's list of messages."""

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from mail.models import Direction, MailMessage, MessageOutcome
from tests.factories import UserFactory
from tests.ticketing.test_query_plans import fill_tickets, plan

pytestmark = pytest.mark.django_db

TICKETS = 30_000


@pytest.fixture
def desk():
    """30,000 tickets, each with the message that opened it, one reply by mail on every
    second one and two messages sent on each: 150,000 messages."""
    user = UserFactory(username="writer")
    fill_tickets(TICKETS, user.pk, [])
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO mail_mailmessage (message_id, direction, outcome, ticket_id, address,
                subject, in_reply_to, "references", full_text, html, detail, at)
            SELECT 'm' || t.id || '-' || k || '@client.test',
                   CASE WHEN k <= 2 THEN 'in' ELSE 'out' END,
                   CASE k WHEN 1 THEN 'ticket' WHEN 2 THEN 'reply' ELSE 'sent' END,
                   t.id, 'person' || (t.id % 5000) || '@example.test', 's', '', '', '', '',
                   '', now() - ((t.id % 100000) || ' minutes')::interval
            FROM oa_ticket_bill AS t, generate_series(1, 4) AS k
            WHERE k <> 2 OR t.id % 2 = 0
            """
        )
        cursor.execute("ANALYZE mail_mailmessage")


def test_the_thread_lookup_uses_the_message_id_key(desk):
    ids = ["m100-1@client.test", "m100-3@client.test", "unknown@elsewhere.test"]
    found = plan(
        MailMessage.objects.filter(message_id__in=ids, ticket__isnull=False).values_list(
            "message_id", "ticket_id"
        )
    )
    assert "mail_message_id_key" in found, found


def test_the_flood_check_reads_one_senders_last_hour(desk):
    now = timezone.now()
    found = plan(
        MailMessage.objects.filter(
            direction=Direction.IN,
            outcome=MessageOutcome.TICKET,
            address="person42@example.test",
            at__gt=now - timedelta(hours=1),
            at__lte=now,
        )
    )
    assert "mail_message_opened_idx" in found, found


def test_a_tickets_messages_use_the_ticket_index(desk):
    ticket_id = MailMessage.objects.values_list("ticket_id", flat=True).first()
    notes = plan(
        MailMessage.objects.filter(
            ticket_id=ticket_id,
            direction=Direction.IN,
            outcome__in=(MessageOutcome.TICKET, MessageOutcome.REPLY),
        )
    )
    assert "mail_message_ticket_idx" in notes, notes
    latest = plan(
        MailMessage.objects.filter(ticket_id=ticket_id).order_by("-id").values("message_id")[:19]
    )
    assert "mail_message_ticket_idx" in latest, latest


def test_the_admins_newest_messages_read_the_primary_key(desk):
    found = plan(MailMessage.objects.order_by("-id")[:100])
    assert "Seq Scan" not in found, found
