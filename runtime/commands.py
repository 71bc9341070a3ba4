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
    """gunicorn serving config.wsgi with threaded workers. No access log: the API logs one JSON
    line per request itself (config/request_id.py), and probes are not logged at all."""
    env = os.environ if env is None else env
    bind = _get(env, "WEB_BIND", f"127.0.0.1:{_get(env, 'PORT', '8000')}")
    return [
        sys.executable,
        "-m",
        "gunicorn",
        "config.wsgi:application",
        "--config",
        "python:runtime.gunicorn_conf",
        "--bind",
        bind,
        "--workers",
        _get(env, "WEB_CONCURRENCY", "2"),
        "--threads",
        _get(env, "WEB_THREADS", "4"),
        "--worker-class",
        "gthread",
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


def worker_command(env: Mapping[str, str] | None = None) -> list[str]:
    env = os.environ if env is None else env
    return [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "config",
        "worker",
        "-l",
        _get(env, "LOG_LEVEL", "info").lower(),
        "--concurrency",
        _get(env, "CELERY_CONCURRENCY", "2"),
    ]


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
