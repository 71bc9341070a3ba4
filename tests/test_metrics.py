"""/metrics for an operator: figures from every process added up (prometheus_client's
multiprocess mode, as gunicorn, Celery and beat run), and live gauges computed at scrape time
from the database (queues, agents, outbox, SLA events due soon)."""

import os
import subprocess
import sys
import textwrap
from datetime import timedelta

import pytest
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from notifications.models import DeliveryStatus, Notification, OutboxDelivery
from routing.models import AgentPresence, PresenceState
from sla.models import SlaEvent
from tests.factories import HandlerGroupFactory, TicketFactory, UserFactory
from ticketing.models import ProcessStatus, TicketStatus

TOKEN = "scrape-me"


def scrape(client) -> dict[tuple[str, tuple], float]:
    """{(sample name, sorted labels): value} of one scrape."""
    response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.content.decode())
        for sample in family.samples
    }


@pytest.fixture(autouse=True)
def _token(settings):
    settings.METRICS_TOKEN = TOKEN


def _waiting(group, *, queued_minutes_ago: int, **fields):
    now = timezone.now()
    return TicketFactory(
        handler_group=group,
        process_status=ProcessStatus.APPROVED,
        ticket_status=TicketStatus.PENDING_ASSIGN,
        approved_time=now - timedelta(minutes=queued_minutes_ago),
        queued_time=now - timedelta(minutes=queued_minutes_ago),
        **fields,
    )


@pytest.mark.django_db
def test_queues_and_agents_per_group_are_counted_at_scrape_time(client):
    agents = [UserFactory() for _ in range(4)]
    billing = HandlerGroupFactory(name="billing", members=agents[:3])
    HandlerGroupFactory(name="returns", members=agents[3:])
    _waiting(billing, queued_minutes_ago=30)
    _waiting(billing, queued_minutes_ago=5)
    _waiting(None, queued_minutes_ago=1)
    now = timezone.now()
    AgentPresence.objects.create(
        user=agents[0], state=PresenceState.AVAILABLE, state_since=now, last_heartbeat=now
    )
    AgentPresence.objects.create(  # heartbeat stopped: not routable, whatever the row says
        user=agents[1],
        state=PresenceState.AVAILABLE,
        state_since=now,
        last_heartbeat=now - timedelta(hours=1),
    )
    AgentPresence.objects.create(
        user=agents[2], state=PresenceState.BUSY, state_since=now, last_heartbeat=now
    )

    figures = scrape(client)

    assert figures[("routing_tickets_waiting", (("group", "billing"),))] == 2
    assert figures[("routing_tickets_waiting", (("group", "returns"),))] == 0
    assert figures[("routing_tickets_waiting", (("group", "none"),))] == 1
    oldest = figures[("routing_oldest_waiting_seconds", (("group", "billing"),))]
    assert 30 * 60 <= oldest < 31 * 60
    assert figures[("routing_oldest_waiting_seconds", (("group", "returns"),))] == 0
    assert figures[("routing_agents_available", (("group", "billing"),))] == 1
    assert figures[("routing_agents_available", (("group", "returns"),))] == 0
    assert figures[("routing_agents", (("group", "billing"), ("state", "offline")))] == 1
    assert figures[("routing_agents", (("group", "billing"), ("state", "busy")))] == 1


@pytest.mark.django_db
def test_outbox_backlog_counts_what_is_not_yet_sent_or_given_up(client):
    user = UserFactory()
    now = timezone.now()
    for i, status in enumerate(
        [DeliveryStatus.PENDING, DeliveryStatus.SENDING, DeliveryStatus.SENT, DeliveryStatus.FAILED]
    ):
        note = Notification.objects.create(
            recipient=user,
            template_code="t",
            title="t",
            content="c",
            dedupe_key=f"k{i}",
            created=now,
        )
        OutboxDelivery.objects.create(
            notification=note,
            channel="webhook",
            target="1",
            status=status,
            next_attempt_at=now - timedelta(minutes=10 - i),
            idempotency_key=f"key{i}",
            created=now,
        )

    figures = scrape(client)

    assert figures[("notifications_outbox_backlog", (("channel", "webhook"),))] == 2
    assert figures[("notifications_outbox_backlog", (("channel", "email"),))] == 0
    late = figures[("notifications_outbox_oldest_due_seconds", (("channel", "webhook"),))]
    assert 10 * 60 - 5 <= late < 10 * 60 + 60


@pytest.mark.django_db
def test_sla_deadlines_and_levels_due_in_the_next_15_minutes(client):
    """From the scan's own conditions: deadlines not yet marked, levels pending on a running
    clock."""
    group = HandlerGroupFactory()
    now = timezone.now()
    far = now + timedelta(days=2)

    def ticket(**fields):
        return _waiting(
            group,
            queued_minutes_ago=0,
            **{"response_deadline": far, "resolve_deadline": far, **fields},
        )

    ticket(response_deadline=now + timedelta(minutes=10))  # response deadline due
    ticket(response_deadline=now - timedelta(minutes=1), response_timeout=True)  # marked
    ticket(resolve_deadline=now + timedelta(minutes=5))  # resolve deadline due
    ticket(resolve_deadline=now + timedelta(minutes=5), sla_paused=True)  # clock stands
    running = ticket()
    answered = ticket(responded_time=now)
    for clock, level, due, on, state in [
        ("response", 1, now + timedelta(minutes=10), running, "pending"),  # counted
        ("response", 2, now + timedelta(minutes=20), running, "pending"),  # too far
        ("resolve", 1, now - timedelta(seconds=1), running, "pending"),  # due: next tick
        ("resolve", 2, now + timedelta(minutes=1), running, "fired"),  # history
        ("response", 1, now + timedelta(minutes=1), answered, "pending"),  # clock stopped
    ]:
        SlaEvent.objects.create(ticket=on, clock=clock, level=level, due_at=due, state=state)

    figures = scrape(client)

    def due(clock, event):
        return figures[("sla_events_due_15m", (("clock", clock), ("event", event)))]

    assert due("response", "timeout") == 1
    assert due("resolve", "timeout") == 1
    assert due("response", "level") == 1
    assert due("resolve", "level") == 1


@pytest.mark.django_db
def test_a_scrape_adds_up_every_process(client, tmp_path, monkeypatch):
    """Three processes (say two web workers and a Celery worker) count SLA events; whichever
    process answers the scrape reports their sum."""
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    count = textwrap.dedent(
        """
        import sys
        from prometheus_client import Counter
        events = Counter("sla_events_total", "x", ["clock", "event"])
        events.labels("resolve", "timeout").inc(int(sys.argv[1]))
        """
    )
    for n in (2, 3, 4):
        subprocess.run(
            [sys.executable, "-c", count, str(n)],
            env={**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path)},
            check=True,
        )
    assert len(list(tmp_path.glob("counter_*.db"))) == 3

    figures = scrape(client)

    key = ("sla_events_total", (("clock", "resolve"), ("event", "timeout")))
    assert figures[key] == 9
