"""argv for each long-running process, from the environment (see runtime/__init__.py)."""

import os
import sys
from collections.abc import Mapping


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
    """Exactly one beat per deployment (its schedule lives in the database)."""
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


COMMANDS = {"web": web_command, "worker": worker_command, "beat": beat_command}
