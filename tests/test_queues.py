"""Time-critical work has its own queue and worker processes: SLA ticks and scans, routing,
assignment notices and the sweeps on `critical`; outbox deliveries (receivers may be slow) on
`deliveries`, simulations on `slow`, both consumed by `worker-slow` (runtime/commands.py).
Proved with the real processes: the slow worker flooded with simulations at the documented
maxima and deliveries to a receiver that takes 9 s to answer, while SLA levels due meanwhile
fire no more than 2 s late."""

import json
import os
import signal
import threading
import time
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from config.celery_app import app
from insight.models import Simulation
from notifications.models import NotifyTemplate, OutboxDelivery, Webhook
from notifications.sending import send
from runtime.commands import beat_command, slow_worker_command, worker_command
from sla import ladder
from sla.models import SlaEvent, SlaRule
from sla.rules import set_levels
from tests.factories import ApproverFactory, HandlerGroupFactory, StaffFactory, UserFactory
from tests.processes import OwnRedis, Processes, process_env, producing_to, wait_for
from workflow import services

PARAMS = {"billCode": "TK1", "title": "VPN", "type": "resolve", "deadline": "17:00"}
CRITICAL = [
    "sla.tick",
    "sla.scan",
    "ticketing.reclaim_offer",
    "ticketing.routing_sweep",
    "handler_groups.presence_sweep",
    "handler_groups.reconcile",
    "notifications.outbox_sweep",
    "insight.simulation_sweep",
]
# The documented maxima of a synthetic day (insight/scenarios.py SYNTHETIC_KEYS).
MAXIMA = {"agents": 200, "calls": 100_000, "hours": 744, "aht": 300}
SLOW_RECEIVER_SECONDS = 9.0
TICKETS = 6


def _queue(task_name: str) -> str:
    return app.amqp.router.route({}, task_name)["queue"].name


def test_each_task_goes_to_the_queue_of_its_kind():
    from routing.drain import DRAIN_GROUPS_TASK

    app.loader.import_default_modules()
    for name in [*CRITICAL, DRAIN_GROUPS_TASK]:
        assert name in app.tasks, name
        assert _queue(name) == "critical", name
    assert _queue("notifications.deliver") == "deliveries"
    assert _queue("insight.simulate") == "slow"
    assert _queue("mail.fetch_all") == "mail"
    assert _queue("mail.notice") == "deliveries"
    ours = [name for name in app.tasks if not name.startswith("celery.")]
    assert {_queue(name) for name in ours} == {"critical", "deliveries", "mail", "slow"}


class _SlowReceiver:
    """A webhook receiver that takes SLOW_RECEIVER_SECONDS to answer each POST."""

    def __init__(self):
        self.answered = 0
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers["Content-Length"]))
                time.sleep(SLOW_RECEIVER_SECONDS)
                receiver.answered += 1
                try:
                    self.send_response(200)
                    self.end_headers()
                except OSError:
                    pass

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def _schedule_the_tick() -> None:
    from django_celery_beat.models import IntervalSchedule, PeriodicTask

    every_second, _ = IntervalSchedule.objects.get_or_create(every=1, period="seconds")
    PeriodicTask.objects.update_or_create(
        task="sla.tick",
        defaults={"name": "sla tick", "interval": every_second, "expire_seconds": 2},
    )


@pytest.mark.django_db(transaction=True)
def test_sla_levels_fire_on_time_while_slow_work_floods_its_worker(tmp_path, api):
    _schedule_the_tick()
    receiver = _SlowReceiver()
    Webhook.objects.create(name="slow robot", url=receiver.url, secret="s", timeout_seconds=10)
    NotifyTemplate.objects.update(channels=["in_app", "webhook"])  # every level → a webhook
    rule = SlaRule.objects.create(
        name="seconds", priority=4, response_hours=Decimal("0.01"), resolve_hours=Decimal("1")
    )  # response in 36 s; the level at 10 %: 3.6 s after submission
    set_levels(rule, [ladder.Level(1, "response", ladder.PERCENT_ELAPSED, Decimal(10))])
    group = HandlerGroupFactory(members=[UserFactory()], leader=UserFactory())
    applicant, approver, staff = UserFactory(), ApproverFactory(), StaffFactory()

    def ticket():
        submitted = services.ticket_submit(
            creator=applicant, title="t", content="c", priority=4, handler_group_id=group.pk
        )
        return services.ticket_approve(ticket_id=submitted.pk, approver=approver)

    own = OwnRedis(tmp_path)
    env = process_env(
        tmp_path, own.url, LOG_LEVEL="INFO", CELERY_CONCURRENCY="2", CELERY_SLOW_CONCURRENCY="3"
    )
    processes = Processes(tmp_path)
    try:
        with producing_to(own.url):
            processes.start("worker", worker_command(env), env)
            processes.start("worker-slow", slow_worker_command(env), env)
            processes.start("beat", beat_command(env), env)
            probe = ticket()  # live once a first level has fired
            wait_for(
                lambda: SlaEvent.objects.filter(ticket=probe, state="fired").exists(),
                120,
                "a first level",
            )
            # The flood: two simulations at the documented maxima and deliveries to a
            # receiver that answers in 9 s, more than the slow worker can take at once.
            for _ in range(2):
                posted = api.as_user(staff).post(
                    "/api/simulations/", {"synthetic": MAXIMA}, format="json"
                )
                assert posted.status_code == 202, posted.content
            for n in range(12):
                send(recipients=[UserFactory()], template_code="ticket-sla-timeout",
                     params={"billCode": f"F{n}", "title": "flood", "type": "response",
                             "deadline": "now"}, dedupe_key=f"flood:{n}")  # fmt: skip
            wait_for(
                lambda: Simulation.objects.filter(status="running").count() == 2,
                60,
                "both simulations running",
            )
            wait_for(
                lambda: OutboxDelivery.objects.filter(status="sending").exists(),
                60,
                "a slow delivery in flight",
            )
            measured = []
            for _ in range(TICKETS):
                measured.append(ticket())
                time.sleep(0.7)  # due instants spread over the tick's second
            ids = [t.pk for t in measured]
            wait_for(
                lambda: SlaEvent.objects.filter(ticket__in=ids, state="fired").count() == TICKETS,
                60,
                "the measured levels",
            )
            # The slow work was still going on all along.
            assert Simulation.objects.filter(status="running").count() == 2
            assert OutboxDelivery.objects.filter(status__in=["pending", "sending"]).exists()
    finally:
        processes.stop()
        own.stop()
        receiver.close()
    lags = [
        (fired - due).total_seconds()
        for due, fired in SlaEvent.objects.filter(ticket__in=ids).values_list("due_at", "fired_at")
    ]
    assert len(lags) == TICKETS
    assert max(lags) <= 2, lags
    assert min(lags) >= 0, lags  # never early
    print(f"SLA level lag under the flood: max {max(lags):.2f} s, all {sorted(lags)}")


class _HoldingReceiver:
    """A webhook receiver that holds every POST open until released."""

    def __init__(self):
        self.arrived = threading.Event()
        self.release = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers["Content-Length"]))
                receiver.arrived.set()
                receiver.release.wait(30)
                try:
                    self.send_response(200)
                    self.end_headers()
                except OSError:
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


def _received(log: str, task_name: str) -> list[str]:
    """The ids of `task_name` messages the worker logged as received (DEBUG)."""
    ids = []
    for line in log.splitlines():
        if line[:1] != "{":
            continue
        entry = json.loads(line)
        if entry.get("logger") == "celery.worker.strategy" and task_name in entry["msg"]:
            ids.append(entry["msg"].split("[", 1)[1].split("]", 1)[0])
    return ids


@pytest.mark.django_db(transaction=True)
def test_a_task_whose_worker_process_was_killed_goes_back_on_its_queue(tmp_path):
    """acks_late with task_reject_on_worker_lost: the pool process running a delivery is
    killed with SIGKILL; its parent puts the message back and runs it again (the delivery's
    claim then leaves it to the lease, tests/notifications/test_delivery_lease.py)."""
    receiver = _HoldingReceiver()
    Webhook.objects.create(name="robot", url=receiver.url, secret="s", timeout_seconds=9)
    NotifyTemplate.objects.filter(code="ticket-sla-timeout").update(channels=["in_app", "webhook"])
    own = OwnRedis(tmp_path)
    env = process_env(tmp_path, own.url, LOG_LEVEL="DEBUG", CELERY_SLOW_CONCURRENCY="1")
    processes = Processes(tmp_path)
    try:
        with producing_to(own.url):
            worker = processes.start("slow", slow_worker_command(env), env)
            send(recipients=[UserFactory()], template_code="ticket-sla-timeout", params=PARAMS,
                 dedupe_key="sla:1")  # fmt: skip
            assert receiver.arrived.wait(90), processes.log("slow")
            children = Path(f"/proc/{worker.pid}/task/{worker.pid}/children").read_text().split()
            assert len(children) == 1, children  # the one pool process, mid-send
            os.kill(int(children[0]), signal.SIGKILL)
            log = tmp_path / "slow.log"
            wait_for(
                lambda: len(_received(log.read_text(), "notifications.deliver")) == 2,
                60,
                "the message delivered again",
            )
            first, again = _received(log.read_text(), "notifications.deliver")
            assert first == again  # the same message, not acknowledged as failed
            assert worker.poll() is None  # the worker itself lives on
    finally:
        processes.stop()
        own.stop()
        receiver.close()
    assert "WorkerLostError" in log.read_text()
