"""argv for each long-running process, from the environment (see runtime/__init__.py)."""

import os
import shutil
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

# Where every process writes its Prometheus figures so that /metrics adds them all up
# (config/metrics.py). Containers share one volume there; `make run` uses .data/metrics.
METRICS_DIR_ENV = "PROMETHEUS_MULTIPROC_DIR"


def _get(env: Mapping[str, str], name: str, default: str) -> str:
    return env.get(name) or default


def web_command(env: Mapping[str, str] | None = None) -> list[str]:
    """gunicorn with uvicorn workers serving config.asgi: the live pages' event streams on the
    event loop, every other request in WEB_THREADS threads per worker (config/asgi.py reads
    it). No access log: the API logs one JSON line per request itself (config/request_id.py),
    and probes are not logged at all."""
    env = os.environ if env is None else env
    bind = _get(env, "WEB_BIND", f"127.0.0.1:{_get(env, 'PORT', '8000')}")
    return [
        sys.executable,
        "-m",
        "gunicorn",
        "config.asgi:application",
        "--config",
        "python:runtime.gunicorn_conf",
        "--bind",
        bind,
        "--workers",
        _get(env, "WEB_CONCURRENCY", "4"),
        "--worker-class",
        "runtime.worker.Worker",
        "--timeout",
        _get(env, "WEB_TIMEOUT", "60"),
        "--graceful-timeout",
        "30",
        "--keep-alive",
        _get(env, "WEB_KEEPALIVE", "5"),
        "--forwarded-allow-ips",
        _get(env, "FORWARDED_ALLOW_IPS", "127.0.0.1"),
        "--log-level",
        _get(env, "LOG_LEVEL", "info").lower(),
    ]


# The queues each kind of worker consumes (config/settings/base.py routes the tasks): time-
# critical work apart from slow work, so no simulation or slow webhook receiver can hold up
# an SLA level. CELERY_QUEUES (comma-separated) overrides a kind's list, e.g. to give
# deliveries their own processes.
CRITICAL_QUEUES = "critical"
SLOW_QUEUES = "deliveries,mail,slow"
# Slow work yields the CPU to critical work on a shared machine (a nice value, not a limit:
# idle cores still go to it).
SLOW_NICENESS = "10"


def _celery_worker(env: Mapping[str, str], *, queues: str, node: str, concurrency: str):
    return [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "config",
        "worker",
        "-l",
        _get(env, "LOG_LEVEL", "info").lower(),
        "-Q",
        _get(env, "CELERY_QUEUES", queues),
        # Distinct names, so both kinds on one host answer `celery inspect` separately.
        "-n",
        _get(env, "CELERY_NODE_NAME", node),
        "--concurrency",
        concurrency,
    ]


def worker_command(env: Mapping[str, str] | None = None) -> list[str]:
    """The time-critical worker: SLA ticks and scans, routing, assignment notices, sweeps."""
    env = os.environ if env is None else env
    return _celery_worker(
        env,
        queues=CRITICAL_QUEUES,
        node="critical@%h",
        concurrency=_get(env, "CELERY_CONCURRENCY", "2"),
    )


def slow_worker_command(env: Mapping[str, str] | None = None) -> list[str]:
    """The worker for slow work: outbox deliveries (receivers may be slow) and simulations,
    at a lower CPU priority."""
    env = os.environ if env is None else env
    argv = _celery_worker(
        env,
        queues=SLOW_QUEUES,
        node="slow@%h",
        concurrency=_get(env, "CELERY_SLOW_CONCURRENCY", "2"),
    )
    nice = shutil.which("nice")
    return [nice, "-n", _get(env, "CELERY_SLOW_NICENESS", SLOW_NICENESS), *argv] if nice else argv


def beat_command(env: Mapping[str, str] | None = None) -> list[str]:
    """Beat: one per node is safe (its schedule lives in the database; only the holder of
    the lease sends, each slot once, and another takes over within 10 s: config/beat)."""
    env = os.environ if env is None else env
    return [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "config",
        "beat",
        "-l",
        _get(env, "LOG_LEVEL", "info").lower(),
    ]


def migrate_command(env: Mapping[str, str] | None = None) -> list[str]:
    """The one-shot release step: apply migrations (run before web, worker and beat start)."""
    return [sys.executable, "manage.py", "migrate", "--noinput"]


COMMANDS = {
    "web": web_command,
    "worker": worker_command,
    "worker-slow": slow_worker_command,
    "beat": beat_command,
    "migrate": migrate_command,
}


def process_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a process starts with: PROMETHEUS_MULTIPROC_DIR defaults to a directory
    under the system's temporary directory, created if missing."""
    env = dict(os.environ if env is None else env)
    directory = env.get(METRICS_DIR_ENV) or str(Path(tempfile.gettempdir()) / "ticketdesk-metrics")
    Path(directory).mkdir(parents=True, exist_ok=True)
    env[METRICS_DIR_ENV] = directory
    return env


def reset_metrics_dir(directory: str | os.PathLike) -> None:
    """Empty the metrics directory before a deployment's processes start (`make run`, the
    containers' migrate step): files of processes from an earlier run would count forever."""
    path = Path(directory)
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
