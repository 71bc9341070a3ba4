"""Redis down is not an outage: with a real Redis server killed mid-test, approvals, replies,
submitting, pausing, completing and the console answer 2xx within a short time and nothing is
lost; throttles count locally (the login one still refuses); the log says so once; /readyz is
200 "degraded"; and with Redis back, empty, everything uses it again without a restart."""

import logging
import time

import pytest

from config import outage
from handler_groups.models import HandlerGroup
from tests.factories import ApproverFactory, HandlerGroupFactory, UserFactory
from ticketing.models import Ticket, TicketReply

QUICK_SECONDS = 1.0  # a request while Redis is down costs no more than this


@pytest.fixture(autouse=True)
def _probe_every_call(monkeypatch):
    """Redis is probed on every call (no waiting); tests/conftest.py forgets outages."""
    monkeypatch.setattr(outage, "PROBE_SECONDS", 0)


def _timed(call, *args, **kwargs):
    started = time.perf_counter()
    response = call(*args, **kwargs)
    return response, time.perf_counter() - started


@pytest.mark.django_db
def test_the_desk_keeps_working_while_redis_is_down_and_resumes_when_it_is_back(
    private_redis, api, client, caplog, django_capture_on_commit_callbacks
):
    caplog.set_level(logging.INFO, logger="config.outage")
    applicant, approver, agent = UserFactory(), ApproverFactory(), UserFactory(password="pw-agent")
    manual = HandlerGroupFactory(members=[agent], leader=UserFactory(), assign_strategy=0)
    # Longest idle picks from the Redis idle pool: with Redis down, the ticket waits instead.
    routed = HandlerGroupFactory(members=[agent], leader=UserFactory(), assign_strategy=4)
    assert api.as_user(applicant).get("/api/tickets/").status_code == 200
    assert private_redis.client().keys("*requests")  # the throttle counts in this Redis

    private_redis.stop()
    answered = []

    def call(user, method, path, body=None, expect=200):
        with django_capture_on_commit_callbacks(execute=True):
            response, took = _timed(getattr(api.as_user(user), method), path, body, format="json")
        assert response.status_code == expect, (path, response.content[:500])
        answered.append((path, took))
        return response.json()

    submitted = call(applicant, "post", "/api/tickets/", {
        "title": "Printer on fire", "content": "It is on fire.", "priority": 3,
        "handler_group": manual.pk,
    }, expect=201)  # fmt: skip
    waiting = call(applicant, "post", "/api/tickets/", {
        "title": "VPN down", "content": "No VPN.", "priority": 3, "handler_group": routed.pk,
    }, expect=201)  # fmt: skip
    ticket_id = submitted["id"]
    call(approver, "post", f"/api/tickets/{ticket_id}/approve/")
    call(approver, "post", f"/api/tickets/{waiting['id']}/approve/")
    call(agent, "post", "/api/presence/state/", {"state": "available"})
    call(agent, "post", "/api/presence/heartbeat/", {})
    call(agent, "post", f"/api/tickets/{ticket_id}/accept/")
    call(agent, "post", f"/api/tickets/{ticket_id}/replies/", {"content": "On my way."}, 201)
    call(applicant, "post", f"/api/tickets/{ticket_id}/replies/", {"content": "Hurry."}, 201)
    call(agent, "post", f"/api/tickets/{ticket_id}/pause/")
    call(agent, "post", f"/api/tickets/{ticket_id}/resume/")
    call(agent, "post", f"/api/tickets/{ticket_id}/complete/")
    # The console: log in, then its pages.
    response, took = _timed(
        client.post, "/accounts/login/", {"username": agent.username, "password": "pw-agent"}
    )
    assert response.status_code == 302 and took < QUICK_SECONDS
    for page in ("/console/", f"/console/tickets/{ticket_id}/", "/inbox/"):
        response, took = _timed(client.get, page)
        assert response.status_code == 200, page
        answered.append((page, took))
    ready = client.get("/readyz")
    assert ready.status_code == 200 and ready.json()["status"] == "degraded"
    assert set(ready.json()["degraded"]) == {"redis", "broker"}

    slow = [(path, round(took, 2)) for path, took in answered if took > QUICK_SECONDS]
    assert slow == []
    # Nothing lost: every write is in PostgreSQL.
    ticket = Ticket.objects.get(pk=ticket_id)
    assert (ticket.handler_id, ticket.process_status) == (agent.pk, 2)
    assert TicketReply.objects.filter(ticket=ticket).count() >= 2
    assert Ticket.objects.get(pk=waiting["id"]).handler_id is None  # waits in its pool
    assert HandlerGroup.objects.count() == 2
    # One warning per outage per process, not one per request.
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    for name in ("redis (throttles)", "redis (routing)", "celery broker"):
        assert sum(m.startswith(f"{name} unavailable") for m in warnings) == 1, warnings

    # Back, and empty: the same process uses it again.
    private_redis.start()
    with django_capture_on_commit_callbacks(execute=True):
        back = api.as_user(applicant).post(
            f"/api/tickets/{ticket_id}/replies/", {"content": "Thanks."}, format="json"
        )
        again = api.as_user(applicant).post("/api/tickets/", {
            "title": "Again", "content": "c", "priority": 3, "handler_group": manual.pk,
        }, format="json")  # fmt: skip
        approved = api.as_user(approver).post(f"/api/tickets/{again.json()['id']}/approve/")
        accepted = api.as_user(agent).post(f"/api/tickets/{again.json()['id']}/accept/")
    assert [r.status_code for r in (back, again, approved, accepted)] == [201, 201, 200, 200]
    assert private_redis.client().keys("*requests")  # throttled in Redis again
    assert private_redis.client().llen("celery") >= 1  # the assignment's e-mail queued again
    assert client.get("/readyz").json()["status"] == "ready"
    infos = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    assert any(m.startswith("redis (throttles) available again") for m in infos)
    assert any(m.startswith("celery broker available again") for m in infos)


@pytest.mark.django_db
def test_the_login_throttle_keeps_a_local_limit_while_redis_is_down(private_redis, api, settings):
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "login": "3/min"}
    user = UserFactory(password="right-password")
    private_redis.stop()
    answers = [
        api.post(
            "/api/auth/token/",
            {"username": user.username, "password": "right-password"},
            format="json",
            REMOTE_ADDR="10.9.8.7",
        ).status_code
        for _ in range(4)
    ]
    assert answers == [200, 200, 200, 429]
    # Another address has its own count.
    other = api.post(
        "/api/auth/token/",
        {"username": user.username, "password": "right-password"},
        format="json",
        REMOTE_ADDR="10.9.8.6",
    )
    assert other.status_code == 200


def test_an_outage_is_logged_once_skipped_for_a_moment_then_probed(monkeypatch, caplog):
    caplog.set_level(logging.INFO, logger="config.outage")
    clock = [100.0]
    monkeypatch.setattr(outage.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(outage, "PROBE_SECONDS", 2.0)
    known = outage.Outage("thing", "it degrades")
    assert known.available()
    for _ in range(5):
        known.failed(ConnectionError("refused"))
    assert not known.available()  # skipped meanwhile
    clock[0] += 2.0
    assert known.available()  # a probe
    known.failed(ConnectionError("refused"))
    assert not known.available()
    clock[0] += 2.5
    known.recovered()
    known.recovered()
    assert known.available() and not known.down
    messages = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert messages == [
        ("WARNING", "thing unavailable: it degrades"),
        ("INFO", "thing available again after 4.5 s"),
    ]
