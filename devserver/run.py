"""`make run`: the whole back-office on one machine.

Uses the PostgreSQL and Redis named by DATABASE_URL / REDIS_URL, or starts embedded ones with
their data in ./.data (kept between runs). Then migrates, collects static files, loads the demo
data and runs the web server (gunicorn; Django's auto-reloading runserver with
WEB_SERVER=runserver, as `make dev` does), a Celery worker and celery-beat — the command lines
of runtime/commands.py — until Ctrl-C / SIGTERM, when it
stops all of them and the embedded servers it started. If any of them dies, it stops the rest
and exits non-zero.

    python -m devserver.run        # PORT=8765 to serve on another port
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Callable

from devserver.processes import ROOT, DevServerError, StopRequested, Supervisor, say
from devserver.services import DATA_DIR, EmbeddedPostgres, EmbeddedRedis, read_dotenv
from runtime.commands import (
    METRICS_DIR_ENV,
    beat_command,
    reset_metrics_dir,
    web_command,
    worker_command,
)

DATABASE_NAME = "ticketdesk"
FIRST_REDIS_PORT = 6390


def main() -> int:
    read_dotenv()
    env = dict(os.environ)
    env.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    env["PYTHONUNBUFFERED"] = "1"  # children's logs show up as they happen
    # Web workers, Celery and beat write their metrics here; /metrics adds them up.
    env.setdefault(METRICS_DIR_ENV, str(DATA_DIR / "metrics"))
    port = int(env.get("PORT") or 8000)
    python = sys.executable
    manage = [python, str(ROOT / "manage.py")]

    supervisor = Supervisor()
    supervisor.install_signal_handlers()
    started: list[EmbeddedPostgres | EmbeddedRedis] = []
    try:
        _check_port_free(port)
        if env.get("DATABASE_URL"):
            say("PostgreSQL: external, from DATABASE_URL")
        else:
            postgres = EmbeddedPostgres(DATA_DIR / "postgres")
            postgres.start()
            started.append(postgres)
            postgres.ensure_database(DATABASE_NAME)
            env["DATABASE_URL"] = postgres.url(DATABASE_NAME)
        supervisor.raise_if_stop_requested()
        if env.get("REDIS_URL"):
            say("Redis: external, from REDIS_URL")
        else:
            redis = EmbeddedRedis(DATA_DIR / "redis", first_port=FIRST_REDIS_PORT, persist=True)
            redis.start()
            started.append(redis)
            env["REDIS_URL"] = redis.url
        supervisor.raise_if_stop_requested()

        reset_metrics_dir(env[METRICS_DIR_ENV])
        supervisor.run_step("migrate", [*manage, "migrate", "--noinput"], env=env)
        supervisor.run_step("collectstatic", [*manage, "collectstatic", "--noinput"], env=env)
        # 28 days of history the first time; later starts find it and add nothing.
        history = ["--history-days", env.get("DEMO_HISTORY_DAYS") or "28"]
        supervisor.run_step("seed_demo", [*manage, "seed_demo", *history], env=env)

        if env.get("WEB_SERVER") == "runserver":  # `make dev`: Django's server, auto-reloading
            web = [*manage, "runserver", f"127.0.0.1:{port}"]
        else:
            web = web_command({**env, "WEB_BIND": f"127.0.0.1:{port}"})
        supervisor.start("web", web, env=env)
        supervisor.start("worker", worker_command(env), env=env)
        supervisor.start("beat", beat_command(env), env=env)
        code = supervisor.watch(on_tick=_announce_when_listening(port, env, started))
    except StopRequested as stop:
        say(f"{stop} received during start-up: stopping")
        code = 0
    except DevServerError as exc:
        say(f"error: {exc}")
        code = 1
    finally:
        supervisor.stop_children()
        for service in reversed(started):
            service.stop()
    say("stopped" if code == 0 else f"stopped after a failure (exit code {code})")
    return code


def _check_port_free(port: int) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            raise DevServerError(
                f"port {port} is in use; stop what uses it or run with PORT=<another port>"
            ) from None


def _announce_when_listening(
    port: int, env: dict[str, str], started: list[EmbeddedPostgres | EmbeddedRedis]
) -> Callable[[], None]:
    """Print the URLs once the web server accepts connections."""
    announced = False

    def announce() -> None:
        nonlocal announced
        if announced:
            return
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.settimeout(0.2)
            if sock.connect_ex(("127.0.0.1", port)) != 0:
                return
        announced = True
        base = f"http://127.0.0.1:{port}"
        embedded = {type(service) for service in started}
        lines = [
            "",
            "Ticketdesk is running. Ctrl-C stops everything.",
            f"  admin      {base}/admin/",
            f"  API docs   {base}/api/docs/",
            f"  API root   {base}/api/",
            f"  console    {base}/console/",
        ]
        # Only URLs of our own servers: an external URL may carry a password.
        if EmbeddedPostgres in embedded:
            lines.append(f"  DATABASE_URL={env['DATABASE_URL']}")
        if EmbeddedRedis in embedded:
            lines.append(f"  REDIS_URL={env['REDIS_URL']}")
        for line in [*lines, ""]:
            say(line)

    return announce


if __name__ == "__main__":
    sys.exit(main())
