"""External deliveries: webhook signature checked by a receiver on localhost, retries with
backoff, permanent failures, the sweep for lost tasks, and a real Celery worker."""

import hashlib
import hmac
import json
import threading
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core import mail
from django.utils import timezone

from notifications import delivery as delivery_module
from notifications import sending
from notifications.delivery import backoff_seconds, delivery_attempt, outbox_sweep
from notifications.models import DeliveryStatus, NotifyTemplate, OutboxDelivery, Webhook
from notifications.sending import send
from tests.factories import UserFactory

PARAMS = {"billCode": "TK1", "title": "VPN", "type": "resolve", "deadline": "17:00"}
SECRET = "s3cret"


class Receiver:
    """A webhook receiver on a free loopback port that answers with queued status codes."""

    def __init__(self):
        self.requests: list[dict] = []
        self.statuses: list[int] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.requests.append({"headers": dict(self.headers), "body": body})
                status = receiver.statuses.pop(0) if receiver.statuses else 200
                self.send_response(status)
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.close()


@pytest.fixture
def webhook(db, receiver):
    return Webhook.objects.create(name="chat robot", url=receiver.url, secret=SECRET)


@pytest.fixture
def no_enqueue(monkeypatch):
    """Deliveries are performed explicitly by the test, not by a broker."""
    monkeypatch.setattr(sending, "enqueue_deliveries", lambda ids: None)
    monkeypatch.setattr(delivery_module, "_schedule", lambda *a: None)


def webhook_delivery():
    user = UserFactory()
    send(
        recipients=[user],
        template_code="ticket-sla-timeout",
        params=PARAMS,
        dedupe_key="sla:resolve:timeout:1",
        ticket_id=None,
    )
    return OutboxDelivery.objects.get(channel="webhook")


@pytest.mark.django_db
def test_webhook_is_signed_and_carries_an_idempotency_key(webhook, receiver, no_enqueue):
    delivery = webhook_delivery()
    assert delivery_attempt(delivery_id=delivery.pk) == DeliveryStatus.SENT
    (request,) = receiver.requests
    expected = "sha256=" + hmac.new(SECRET.encode(), request["body"], hashlib.sha256).hexdigest()
    assert request["headers"]["X-Signature"] == expected
    assert request["headers"]["Idempotency-Key"] == delivery.idempotency_key
    payload = json.loads(request["body"])
    assert payload["template"] == "ticket-sla-timeout"
    assert payload["content"].startswith("[SLA timeout] Ticket TK1")
    delivery.refresh_from_db()
    assert delivery.sent_at is not None and delivery.attempts == 1


@pytest.mark.django_db
def test_running_a_delivery_twice_sends_once(webhook, receiver, no_enqueue):
    delivery = webhook_delivery()
    assert delivery_attempt(delivery_id=delivery.pk) == DeliveryStatus.SENT
    assert delivery_attempt(delivery_id=delivery.pk) == "skipped"
    assert len(receiver.requests) == 1


@pytest.mark.django_db
def test_server_errors_retry_with_backoff_then_fail(webhook, receiver, no_enqueue):
    receiver.statuses = [503] * 10
    delivery = webhook_delivery()
    now = timezone.now()
    for attempt in range(1, delivery_module.MAX_ATTEMPTS):
        assert delivery_attempt(delivery_id=delivery.pk, now=now) == DeliveryStatus.PENDING
        delivery.refresh_from_db()
        assert delivery.attempts == attempt
        assert "503" in delivery.last_error
        wait = delivery.next_attempt_at - now
        ceiling = min(
            delivery_module.BACKOFF_CAP_SECONDS,
            delivery_module.BACKOFF_BASE_SECONDS * 2 ** (attempt - 1),
        )
        assert timedelta(seconds=ceiling / 2) <= wait <= timedelta(seconds=ceiling)
        # Not due yet: a premature run does nothing.
        assert delivery_attempt(delivery_id=delivery.pk, now=now) == "skipped"
        now = delivery.next_attempt_at
    assert delivery_attempt(delivery_id=delivery.pk, now=now) == DeliveryStatus.FAILED
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.FAILED
    assert len(receiver.requests) == delivery_module.MAX_ATTEMPTS


@pytest.mark.django_db
def test_client_errors_are_permanent_and_not_retried(webhook, receiver, no_enqueue):
    receiver.statuses = [410]
    delivery = webhook_delivery()
    assert delivery_attempt(delivery_id=delivery.pk) == DeliveryStatus.FAILED
    delivery.refresh_from_db()
    assert "410" in delivery.last_error and delivery.attempts == 1
    assert len(receiver.requests) == 1


@pytest.mark.django_db
def test_unreachable_webhook_is_transient(db, no_enqueue):
    Webhook.objects.create(
        name="down", url="http://127.0.0.1:9/hook", secret="x", timeout_seconds=1
    )
    delivery = webhook_delivery()
    assert delivery_attempt(delivery_id=delivery.pk) == DeliveryStatus.PENDING
    delivery.refresh_from_db()
    assert "ConnectionError" in delivery.last_error


def test_backoff_grows_exponentially_with_jitter():
    import random

    rng = random.Random(1)
    samples = [backoff_seconds(n, rng) for n in range(1, 8)]
    assert all(15 <= samples[0] <= 30 for _ in [0])
    assert 480 <= samples[5] <= 960
    assert len({round(backoff_seconds(3, rng), 3) for _ in range(20)}) > 1


@pytest.mark.django_db
def test_email_goes_through_djangos_backend(no_enqueue):
    user = UserFactory(email="carol@example.test")
    send(recipients=[user], template_code="ticket-sla-timeout", params=PARAMS, dedupe_key="k")
    delivery = OutboxDelivery.objects.get(channel="email")
    assert delivery_attempt(delivery_id=delivery.pk) == DeliveryStatus.SENT
    (message,) = mail.outbox
    assert message.to == ["carol@example.test"]
    assert message.subject == "[SLA timeout] TK1"


@pytest.mark.django_db
def test_sweep_reenqueues_lost_and_abandoned_deliveries(monkeypatch):
    enqueued = []
    monkeypatch.setattr(sending, "enqueue_deliveries", lambda ids: enqueued.extend(ids))
    user = UserFactory(email="d@example.test")
    send(recipients=[user], template_code="ticket-sla-timeout", params=PARAMS, dedupe_key="k")
    lost = OutboxDelivery.objects.get()
    enqueued.clear()
    now = timezone.now()
    assert outbox_sweep(now=now) == 0  # just written: its own task is still on its way
    assert outbox_sweep(now=now + timedelta(minutes=5)) == 1
    assert enqueued == [lost.pk]
    # A worker claimed it and died: after the lease it is taken back.
    OutboxDelivery.objects.filter(pk=lost.pk).update(
        status=DeliveryStatus.SENDING, lease_until=now + timedelta(minutes=5)
    )
    enqueued.clear()
    assert outbox_sweep(now=now + timedelta(minutes=1)) == 0
    assert outbox_sweep(now=now + timedelta(minutes=6)) == 1
    assert OutboxDelivery.objects.get().status == DeliveryStatus.PENDING


@pytest.mark.django_db(transaction=True)
def test_a_real_celery_worker_delivers_after_commit(webhook, receiver, settings):
    """Broker = the test Redis; the worker runs in this process on its own thread."""
    from celery.contrib.testing.worker import start_worker

    from config.celery_app import app

    NotifyTemplate.objects.filter(code="ticket-sla-timeout").update(channels=["in_app", "webhook"])
    app.control.purge()  # tasks other tests enqueued on the shared test broker
    with start_worker(
        app,
        perform_ping_check=False,
        pool="solo",
        loglevel="WARNING",
        shutdown_timeout=10,
        queues=["deliveries"],  # where deliveries are routed (config/settings/base.py)
    ):
        send(
            recipients=[UserFactory()],
            template_code="ticket-sla-timeout",
            params=PARAMS,
            dedupe_key="k",
        )
        delivery = OutboxDelivery.objects.get()
        for _ in range(300):  # a generous bound: a loaded machine starts the worker slowly
            delivery.refresh_from_db()
            if delivery.status == DeliveryStatus.SENT:
                break
            threading.Event().wait(0.1)
    assert delivery.status == DeliveryStatus.SENT
    assert len(receiver.requests) == 1


@pytest.mark.django_db
def test_a_webhook_gets_one_post_per_event_not_per_recipient(webhook, no_enqueue):
    handler, leader, latecomer = UserFactory(), UserFactory(), UserFactory()
    send(
        recipients=[handler, leader],
        template_code="ticket-sla-timeout",
        params=PARAMS,
        dedupe_key="sla:resolve:timeout:9",
    )
    send(
        recipients=[latecomer],
        template_code="ticket-sla-timeout",
        params=PARAMS,
        dedupe_key="sla:resolve:timeout:9",
    )
    assert OutboxDelivery.objects.filter(channel="webhook").count() == 1
