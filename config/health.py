"""Health probes for supervisors and load balancers: unauthenticated, JSON, cheap, and not
logged per call (only /api/ requests are logged).

- GET /healthz — liveness: 200 while the process serves requests.
- GET /readyz — readiness. 503 ("unavailable") only for what the node cannot serve without:
  PostgreSQL down or a migration pending. Redis and the Celery broker down is "degraded", still
  200 — every node shares them, and a load balancer pulling every node while Redis is down
  would turn a degraded service into an outage — with each missing piece named and what it
  costs meanwhile. Each check has a short timeout. The migrations are checked on every call
  (about 8 ms: the graph of the code's migrations against the applied ones), so a database
  restored or migrated back is seen at once.

  {"status": "ready" | "degraded" | "unavailable",
   "checks": {"database": "ok", "redis": "unavailable: throttles ...", ...},
   "failed": [essential checks failing], "degraded": [the others failing],
   "errors": {name: "ConnectionError: ..."}, "ms": {name: 0.4}}"""

import time
from collections.abc import Callable
from dataclasses import dataclass

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


@dataclass(frozen=True)
class Check:
    run: Callable[[], None]
    # None: the node is not ready without it (503). Otherwise what keeps working, and how,
    # while it fails (200, "degraded").
    degraded: str | None = None


CHECKS: dict[str, Check] = {
    "database": Check(_database),
    "redis": Check(
        _redis,
        degraded="throttles fall back to a per-process limit, presence and pools from "
        "PostgreSQL, no agent is picked from Redis (tickets wait in their pools)",
    ),
    "broker": Check(
        _broker,
        degraded="tasks are not queued; the periodic sweeps enqueue the lost work again "
        "once it answers",
    ),
    "migrations": Check(_migrations),
    "rebuilt_state": Check(
        _rebuilt_state,
        degraded="routing falls back to PostgreSQL for presence and idle pools until the "
        "sweeps have rebuilt them",
    ),
}


@csrf_exempt
@never_cache
@require_GET
def readyz(request):
    checks: dict[str, str] = {}
    failed: list[str] = []
    degraded: list[str] = []
    errors: dict[str, str] = {}
    ms: dict[str, float] = {}
    for name, check in CHECKS.items():
        started = time.perf_counter()
        try:
            if name == "migrations" and "database" in failed:
                raise RuntimeError("database unavailable")
            check.run()
        except Exception as exc:  # any failure: say which, why, and what it costs
            errors[name] = f"{type(exc).__name__}: {exc}"[:300]
            if check.degraded is None:
                failed.append(name)
                checks[name] = f"unavailable: {errors[name]}"
            else:
                degraded.append(name)
                checks[name] = f"unavailable: {check.degraded}"
        else:
            checks[name] = "ok"
        ms[name] = round((time.perf_counter() - started) * 1000, 1)
    status = "unavailable" if failed else "degraded" if degraded else "ready"
    body = {
        "status": status,
        "checks": checks,
        "failed": failed,
        "degraded": degraded,
        "errors": errors,
        "ms": ms,
    }
    return JsonResponse(body, status=503 if failed else 200)
