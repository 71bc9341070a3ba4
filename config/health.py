"""Health probes for supervisors and load balancers: unauthenticated, JSON, cheap, and not
logged per call (only /api/ requests are logged).

- GET /healthz — liveness: 200 while the process serves requests.
- GET /readyz — readiness: 200 only when PostgreSQL, Redis and the Celery broker answer and no
  migration is pending; otherwise 503 naming what failed. "degraded" names state Redis lost
  that is not yet rebuilt (config/redis_state.py), without failing the probe. Each check has
  a short timeout. The migrations are checked on every call (about 8 ms: the graph of the
  code's migrations against the applied ones), so a database restored or migrated back is
  seen at once."""

import time

import redis
from django.conf import settings
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET
from kombu import Connection

from config import redis_state

TIMEOUT_SECONDS = 1.0


@csrf_exempt
@never_cache
@require_GET
def healthz(request):
    return JsonResponse({"status": "ok"})


def _database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


def _redis() -> None:
    client = redis.Redis.from_url(
        settings.REDIS_URL, socket_timeout=TIMEOUT_SECONDS, socket_connect_timeout=TIMEOUT_SECONDS
    )
    try:
        client.ping()
    finally:
        client.close()


def _broker() -> None:
    with Connection(settings.CELERY_BROKER_URL, connect_timeout=TIMEOUT_SECONDS) as broker:
        # kombu compares the timeout with elapsed time: any number does (its stub says int).
        broker.ensure_connection(max_retries=1, timeout=TIMEOUT_SECONDS)  # type: ignore[arg-type]


def _migrations() -> None:
    executor = MigrationExecutor(connection)
    pending = executor.migration_plan(executor.loader.graph.leaf_nodes())
    if pending:
        raise RuntimeError(f"{len(pending)} migration(s) not applied")


def _rebuilt_state() -> None:
    """State Redis lost and the sweeps have not rebuilt yet (config/redis_state.py): routing
    meanwhile falls back to PostgreSQL where it can. Degraded, not unready."""
    client = redis.Redis.from_url(
        settings.REDIS_URL, socket_timeout=TIMEOUT_SECONDS, socket_connect_timeout=TIMEOUT_SECONDS
    )
    try:
        lost = redis_state.missing(client)
    finally:
        client.close()
    if lost:
        raise RuntimeError(
            f"not yet rebuilt from PostgreSQL after Redis lost it: {', '.join(lost)}"
        )


CHECKS = {
    "database": _database,
    "redis": _redis,
    "broker": _broker,
    "migrations": _migrations,
}
# Reported (and listed under "degraded") without making the probe fail.
DEGRADED_CHECKS = {"rebuilt_state": _rebuilt_state}


@csrf_exempt
@never_cache
@require_GET
def readyz(request):
    results, failed = {}, []
    for name, check in CHECKS.items():
        started = time.perf_counter()
        try:
            if name == "migrations" and "database" in failed:
                raise RuntimeError("database unavailable")
            check()
        except Exception as exc:  # any failure means not ready; say which and why
            failed.append(name)
            results[name] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:300]}
        else:
            results[name] = {"ok": True}
        results[name]["ms"] = round((time.perf_counter() - started) * 1000, 1)
    degraded = []
    for name, check in DEGRADED_CHECKS.items():
        try:
            check()
        except Exception as exc:
            degraded.append(name)
            results[name] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:300]}
        else:
            results[name] = {"ok": True}
    body = {
        "status": "ready" if not failed else "unavailable",
        "failed": failed,
        "degraded": degraded,
        "checks": results,
    }
    return JsonResponse(body, status=503 if failed else 200)
