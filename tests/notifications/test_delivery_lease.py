"""A delivery interrupted by a crash goes again within a minute, as the same delivery: the
same Idempotency-Key (webhook header and e-mail header), the same Message-ID, the same signed
body. The lease outlives every attempt (send timeouts, the task's time limits) and the outbox
sweep comes round often enough; a real slow worker is killed with SIGKILL mid-send."""

import smtplib
import threading
import time
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core import mail
from django.core.mail.backends.locmem import EmailBackend
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from notifications import delivery as delivery_module
from notifications import sending, tasks
from notifications.channels.base import SEND_TIMEOUT_SECONDS
from notifications.channels.webhook import send_timeout
from notifications.delivery import LEASE, OUTBOX_SWEEP_SECONDS, delivery_attempt, outbox_sweep
from notifications.models import DeliveryStatus, NotifyTemplate, OutboxDelivery, Webhook
from notifications.sending import send
from runtime.commands import slow_worker_command
from tests.factories import UserFactory
from tests.processes import OwnRedis, Processes, process_env, producing_to, wait_for

PARAMS = {"billCode": "TK1", "title": "VPN", "type": "resolve", "deadline": "17:00"}


@pytest.mark.django_db
def test_no_attempt_outlives_its_lease_and_the_retry_comes_within_a_minute(settings):
    assert SEND_TIMEOUT_SECONDS < tasks.deliver.soft_time_limit < tasks.deliver.time_limit
    assert tasks.deliver.time_limit < LEASE.total_seconds()
    assert settings.EMAIL_TIMEOUT <= SEND_TIMEOUT_SECONDS
    slow = Webhook(name="slow", url="http://127.0.0.1:9/", secret="s", timeout_seconds=120)
    assert send_timeout(slow) == SEND_TIMEOUT_SECONDS
    assert send_timeout(Webhook(timeout_seconds=2.5)) == 2.5
    # The sweep's schedule (a data migration's) comes round within OUTBOX_SWEEP_SECONDS.
    sweep = PeriodicTask.objects.get(task="notifications.outbox_sweep")
    assert sweep.interval.period == "seconds" and sweep.interval.every <= OUTBOX_SWEEP_SECONDS
    assert LEASE.total_seconds() + OUTBOX_SWEEP_SECONDS < 60


class _DroppedAfterData(EmailBackend):
    """An SMTP server that takes the message and drops the connection before answering: it
    may have been delivered, and the sender cannot know."""

    dropped = True

    def send_messages(self, messages):
        sent = super().send_messages(messages)
        if _DroppedAfterData.dropped:
            _DroppedAfterData.dropped = False
            raise smtplib.SMTPServerDisconnected("connection lost after DATA")
        return sent


@pytest.mark.django_db
def test_an_interrupted_email_goes_again_with_the_same_message_id_and_key(settings, monkeypatch):
    settings.EMAIL_BACKEND = f"{__name__}._DroppedAfterData"
    monkeypatch.setattr(sending, "enqueue_deliveries", lambda ids: None)
    monkeypatch.setattr(delivery_module, "_schedule", lambda *a: None)
    _DroppedAfterData.dropped = True
    user = UserFactory(email="carol@example.test")
    send(recipients=[user], template_code="ticket-sla-timeout", params=PARAMS, dedupe_key="k")
    delivery = OutboxDelivery.objects.get(channel="email")
    assert delivery_attempt(delivery_id=delivery.pk) == DeliveryStatus.PENDING  # to retry
    retry_at = OutboxDelivery.objects.get(pk=delivery.pk).next_attempt_at
    assert delivery_attempt(delivery_id=delivery.pk, now=retry_at) == DeliveryStatus.SENT
    first, second = mail.outbox
    assert first.extra_headers["Message-ID"] == second.extra_headers["Message-ID"]
    assert first.message()["Message-ID"] == second.message()["Message-ID"]
    assert first.message()["Message-ID"] == f"<{delivery.idempotency_key}@localhost>"
    assert second.message()["Idempotency-Key"] == delivery.idempotency_key


class _HangingReceiver:
    """A webhook receiver that records each POST and holds the first one open (as a slow
    receiver does) until released."""

    def __init__(self):
        self.requests: list[dict] = []
        self.first_arrived = threading.Event()
        self.release = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.requests.append(
                    {"headers": dict(self.headers), "body": body, "at": time.monotonic()}
                )
                if len(receiver.requests) == 1:
                    receiver.first_arrived.set()
                    receiver.release.wait(30)
                try:
                    self.send_response(200)
                    self.end_headers()
                    self.wfile.write(b"ok")
                except OSError:  # the sender died meanwhile
                    pass

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.django_db(transaction=True)
def test_a_webhook_in_flight_when_its_worker_dies_goes_again_within_a_minute(tmp_path):
    receiver = _HangingReceiver()
    own = OwnRedis(tmp_path)
    env = process_env(tmp_path, own.url)
    processes = Processes(tmp_path)
    Webhook.objects.create(name="slow robot", url=receiver.url, secret="s", timeout_seconds=9)
    NotifyTemplate.objects.filter(code="ticket-sla-timeout").update(channels=["in_app", "webhook"])
    try:
        with producing_to(own.url):
            processes.start("slow", slow_worker_command(env), env)
            send(recipients=[UserFactory()], template_code="ticket-sla-timeout", params=PARAMS,
                 dedupe_key="sla:1")  # fmt: skip
            delivery = OutboxDelivery.objects.get()
            assert receiver.first_arrived.wait(90), processes.log("slow")
            processes.kill("slow")  # mid-send: claimed, the receiver still holding the request
            killed = time.monotonic()
            delivery.refresh_from_db()
            assert delivery.status == DeliveryStatus.SENDING and delivery.attempts == 0
            assert delivery.lease_until <= timezone.now() + LEASE
            # Before the lease runs out the sweep leaves it alone (it may still be sending).
            assert outbox_sweep() == 0
            assert OutboxDelivery.objects.get(pk=delivery.pk).status == DeliveryStatus.SENDING
            processes.start("slow-again", slow_worker_command(env), env)

            def swept_and_sent() -> bool:
                outbox_sweep()  # what beat runs every OUTBOX_SWEEP_SECONDS
                time.sleep(1)
                return OutboxDelivery.objects.get(pk=delivery.pk).status == DeliveryStatus.SENT

            wait_for(swept_and_sent, 90, "the retry")
    finally:
        processes.stop()
        own.stop()
        receiver.close()
    first, second = receiver.requests
    assert second["at"] - killed < 60 - OUTBOX_SWEEP_SECONDS  # beat's period comes on top
    assert first["headers"]["Idempotency-Key"] == second["headers"]["Idempotency-Key"]
    assert first["headers"]["Idempotency-Key"] == delivery.idempotency_key
    assert first["headers"]["X-Signature"] == second["headers"]["X-Signature"]
    assert first["body"] == second["body"]
    assert OutboxDelivery.objects.get(pk=delivery.pk).attempts == 1


@pytest.mark.django_db
def test_a_pending_delivery_whose_message_was_lost_goes_again_after_a_minute(monkeypatch):
    enqueued: list[int] = []
    monkeypatch.setattr(sending, "enqueue_deliveries", enqueued.extend)
    send(recipients=[UserFactory(email="d@example.test")], template_code="ticket-sla-timeout",
         params=PARAMS, dedupe_key="k")  # fmt: skip
    lost = OutboxDelivery.objects.get()
    enqueued.clear()  # the broker lost it (Redis came back empty)
    due = lost.next_attempt_at
    assert outbox_sweep(now=due + delivery_module.SWEEP_GRACE - timedelta(seconds=1)) == 0
    assert enqueued == []
    assert outbox_sweep(now=due + delivery_module.SWEEP_GRACE + timedelta(seconds=1)) == 1
    assert enqueued == [lost.pk]
    assert delivery_module.SWEEP_GRACE.total_seconds() + OUTBOX_SWEEP_SECONDS <= 75
