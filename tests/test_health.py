"""Health probes: liveness, and readiness that names what is not ready."""

import logging

import pytest


def test_healthz_answers_while_the_process_serves(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert "no-cache" in response["Cache-Control"]


@pytest.mark.django_db
def test_readyz_is_200_when_everything_answers(client, caplog):
    from routing import tasks

    tasks.presence_sweep()  # what Redis holds is marked rebuilt (config/redis_state.py)
    caplog.set_level(logging.INFO)
    response = client.get("/readyz")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["status"] == "ready" and body["failed"] == [] and body["degraded"] == []
    assert body["checks"] == {
        "database": "ok",
        "redis": "ok",
        "broker": "ok",
        "migrations": "ok",
        "rebuilt_state": "ok",
    }
    assert not [r for r in caplog.records if r.name == "ticketdesk.request"]  # not logged


@pytest.mark.django_db
def test_readyz_is_200_degraded_naming_redis_and_the_broker_when_they_are_down(client, settings):
    """Every node shares Redis: a balancer pulling them all while it is down is an outage."""
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"
    response = client.get("/readyz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "degraded"
    # What Redis lost cannot be known to be rebuilt while it is down.
    assert body["failed"] == [] and body["degraded"] == ["redis", "broker", "rebuilt_state"]
    assert body["checks"]["database"] == "ok" and body["checks"]["migrations"] == "ok"
    assert body["checks"]["redis"].startswith("unavailable: throttles fall back")
    assert body["checks"]["broker"].startswith("unavailable: tasks are not queued")
    assert "Error" in body["errors"]["redis"]


@pytest.mark.django_db
def test_readyz_is_503_when_postgresql_is_down(client, monkeypatch):
    from config import health

    def refused():
        raise ConnectionError("connection refused")

    monkeypatch.setitem(health.CHECKS, "database", health.Check(refused))
    response = client.get("/readyz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable" and body["failed"] == ["database", "migrations"]
    assert body["checks"]["database"] == "unavailable: ConnectionError: connection refused"


@pytest.mark.django_db
def test_readyz_is_503_while_a_migration_is_pending(client, monkeypatch):
    from django.db.migrations.executor import MigrationExecutor

    assert client.get("/readyz").status_code == 200  # a pass is not remembered
    monkeypatch.setattr(MigrationExecutor, "migration_plan", lambda self, targets: ["pending"])
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["failed"] == ["migrations"]
    assert response.json()["status"] == "unavailable"
    assert "1 migration(s) not applied" in response.json()["checks"]["migrations"]


def test_probes_need_no_login_and_take_get_only(client, db):
    assert client.post("/healthz").status_code == 405
    assert client.get("/healthz").status_code == 200
