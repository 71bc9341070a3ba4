"""`make run`: the whole back-office on one machine, served the way production serves it.

Uses the PostgreSQL and Redis named by DATABASE_URL / REDIS_URL, or starts embedded ones with
their data in ./.data (kept between runs), a ClamAV daemon that scans uploads (unless
ATTACHMENT_SCANNER is set) and a mail catcher that keeps outgoing mail in .data/mail (unless
EMAIL_URL is set). Then migrates, collects static files, loads the demo
data and runs gunicorn, two Celery workers (time-critical and slow work) and celery-beat — the
command lines of runtime/commands.py — until Ctrl-C / SIGTERM, when it stops all of them and the
embedded servers it started. If any of them dies, it stops the rest and exits non-zero.

Two settings modules, chosen here unless DJANGO_SETTINGS_MODULE says otherwise:

- `make run`: config.settings.local — production's behaviour (DEBUG off, persistent database
  connections with health checks, static files served by whitenoise from what collectstatic
  wrote) with local conveniences (any Host accepted, e-mail to the mail catcher, plain HTTP).
- `make dev` (WEB_SERVER=runserver): config.settings.dev — Django's auto-reloading runserver
  instead of gunicorn, DEBUG on, one database connection per request.

It listens on 127.0.0.1; HOST=0.0.0.0 (or another address) listens there instead, and a
warning says so at start when DJANGO_ALLOWED_HOSTS or DJANGO_SECRET_KEY is not set (or debug
pages are on), since the local defaults then face other machines.

    python -m devserver.run        # PORT=8765 to serve on another port, HOST=0.0.0.0 to share
"""

from __future__ import annotations

import ipaddress
import os
import socket
import sys
from collections.abc import Callable, Mapping

from devserver.mailcatcher import MailCatcher
from devserver.processes import ROOT, DevServerError, StopRequested, Supervisor, say
from devserver.services import (
    DATA_DIR,
    EmbeddedClamd,
    EmbeddedPostgres,
    EmbeddedRedis,
    read_dotenv,
    shown,
)
from runtime.commands import (
    METRICS_DIR_ENV,
    beat_command,
    reset_metrics_dir,
    slow_worker_command,
    web_command,
    worker_command,
)

DATABASE_NAME = "ticketdesk"
FIRST_REDIS_PORT = 6390
MAIL_DIR = DATA_DIR / "mail"
RUN_SETTINGS = "config.settings.local"  # `make run`
DEV_SETTINGS = "config.settings.dev"  # `make dev`
DEFAULT_HOST = "127.0.0.1"
# As django-environ reads DJANGO_DEBUG (lower-cased).
_TRUE = {"true", "on", "ok", "y", "yes", "1"}


def main() -> int:
    read_dotenv()
    env = dict(os.environ)
    env.setdefault("DJANGO_SETTINGS_MODULE", settings_module(env))
    env["PYTHONUNBUFFERED"] = "1"  # children's logs show up as they happen
    # Web workers, Celery and beat write their metrics here; /metrics adds them up.
    env.setdefault(METRICS_DIR_ENV, str(DATA_DIR / "metrics"))
    host = env.get("HOST") or DEFAULT_HOST
    port = int(env.get("PORT") or 8000)
    warning = exposure_warning(host, env)
    python = sys.executable
    manage = [python, str(ROOT / "manage.py")]

    supervisor = Supervisor()
    supervisor.install_signal_handlers()
    started: list[EmbeddedPostgres | EmbeddedRedis | EmbeddedClamd | MailCatcher] = []
    try:
        say(f"settings: {env['DJANGO_SETTINGS_MODULE']}")
        if warning:
            say(warning)
        _check_port_free(host, port)
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
        clamd = _start_clamd(env)
        if clamd is not None:
            started.append(clamd)
        supervisor.raise_if_stop_requested()
        catcher = _start_mail_catcher(env)
        if catcher is not None:
            started.append(catcher)

        reset_metrics_dir(env[METRICS_DIR_ENV])
        supervisor.run_step("migrate", [*manage, "migrate", "--noinput"], env=env)
        supervisor.run_step("collectstatic", [*manage, "collectstatic", "--noinput"], env=env)
        # 28 days of history the first time; later starts find it and add nothing.
        history = ["--history-days", env.get("DEMO_HISTORY_DAYS") or "28"]
        supervisor.run_step("seed_demo", [*manage, "seed_demo", *history], env=env)

        if env.get("WEB_SERVER") == "runserver":  # `make dev`: Django's server, auto-reloading
            web = [*manage, "runserver", _address(host, port)]
        else:
            web = web_command({**env, "WEB_BIND": _address(host, port)})
        supervisor.start("web", web, env=env)
        supervisor.start("worker", worker_command(env), env=env)
        supervisor.start("worker-slow", slow_worker_command(env), env=env)
        supervisor.start("beat", beat_command(env), env=env)
        announce = _announce_when_listening(host, port, env, started, warning)
        code = supervisor.watch(on_tick=announce)
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


def _start_clamd(env: dict[str, str]) -> EmbeddedClamd | None:
    """Uploads are scanned, as production scans them: by the clamd ATTACHMENT_SCANNER /
    CLAMD_ADDRESS name, or by an embedded one (Debian's clamav-daemon, installed when missing)
    whose only signature is the EICAR test file's — it shows the path end to end; a real
    deployment's clamd has freshclam's databases. ATTACHMENT_SCANNER= (empty) scans nothing.
    Without clamd and no way to install it, the product runs without scanning, and says so."""
    if "ATTACHMENT_SCANNER" in env:
        scanner = env["ATTACHMENT_SCANNER"] or "none"
        say(f"attachment scanner: {scanner}, from ATTACHMENT_SCANNER")
        return None
    clamd = EmbeddedClamd(DATA_DIR / "clamd")
    try:
        clamd.start()
    except DevServerError as exc:
        say(f"warning: uploads are not scanned: {exc}")
        return None
    env["ATTACHMENT_SCANNER"] = "clamav"
    env["CLAMD_ADDRESS"] = clamd.address
    return clamd


def _start_mail_catcher(env: dict[str, str]) -> MailCatcher | None:
    """Outgoing mail goes to a local SMTP server that keeps each message in .data/mail (one
    .eml file each, one log line each), unless EMAIL_URL names a real one."""
    if env.get("EMAIL_URL"):
        say("e-mail: external, from EMAIL_URL")
        return None
    catcher = MailCatcher(MAIL_DIR, log=lambda line: say(f"mail catcher | {line}"))
    try:
        catcher.start()
    except OSError as exc:
        raise DevServerError(f"cannot start the mail catcher ({exc})") from None
    env["EMAIL_URL"] = catcher.url
    return catcher


def settings_module(env: Mapping[str, str]) -> str:
    """`make dev` (runserver) gets the debug settings; `make run` those that behave as
    production does."""
    return DEV_SETTINGS if env.get("WEB_SERVER") == "runserver" else RUN_SETTINGS


def is_loopback(host: str) -> bool:
    """Whether only this machine can reach `host`. A name other than localhost may resolve to
    anything, so it counts as reachable from elsewhere."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def exposure_warning(host: str, env: Mapping[str, str]) -> str | None:
    """The line printed at start when the server listens beyond loopback with local defaults
    that only loopback makes safe: any Host accepted (no DJANGO_ALLOWED_HOSTS), sessions signed
    with the development key everyone has (no DJANGO_SECRET_KEY), or debug pages that show
    settings and tracebacks. None when nothing of that applies."""
    if is_loopback(host):
        return None
    problems, fixes = [], []
    if not env.get("DJANGO_ALLOWED_HOSTS"):
        problems.append("DJANGO_ALLOWED_HOSTS unset (any Host accepted)")
        fixes.append("set DJANGO_ALLOWED_HOSTS to the names it is reached by")
    if not env.get("DJANGO_SECRET_KEY"):
        problems.append("DJANGO_SECRET_KEY unset (sessions signed with the public dev key)")
        fixes.append("set DJANGO_SECRET_KEY to a long random value")
    module = env.get("DJANGO_SETTINGS_MODULE") or settings_module(env)
    debug = env.get("DJANGO_DEBUG")
    if (debug.strip().lower() in _TRUE) if debug else module == DEV_SETTINGS:
        problems.append("debug pages on (settings and tracebacks shown)")
        fixes.append("set DJANGO_DEBUG=false")
    if not problems:
        return None
    advice = "; ".join(fixes)
    return (
        f"warning: listening on {host}, which other machines can reach, with "
        f"{'; '.join(problems)}. {advice[0].upper()}{advice[1:]}; or leave HOST unset to "
        "listen on 127.0.0.1 only."
    )


def _address(host: str, port: int) -> str:
    """host:port as gunicorn's --bind and runserver take it ([::1]:8000 for IPv6)."""
    host = host.strip("[]")
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _check_port_free(host: str, port: int) -> None:
    try:
        family = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)[0][0]
    except socket.gaierror as exc:
        raise DevServerError(f"HOST={host} is not an address of this machine ({exc})") from None
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host.strip("[]"), port))
        except OSError as exc:
            raise DevServerError(
                f"cannot listen on {_address(host, port)} ({exc.strerror}); stop what uses the "
                "port or run with PORT=<another port> (or another HOST)"
            ) from None


def _local_address(host: str) -> str:
    """Where this machine reaches a server listening on `host` (a wildcard: loopback)."""
    host = host.strip("[]")
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    if address.is_unspecified:
        return "::1" if address.version == 6 else "127.0.0.1"
    return host


def _announce_when_listening(
    host: str,
    port: int,
    env: dict[str, str],
    started: list[EmbeddedPostgres | EmbeddedRedis | EmbeddedClamd | MailCatcher],
    warning: str | None,
) -> Callable[[], None]:
    """Print the URLs once the web server accepts connections (and the exposure warning again,
    where it is seen)."""
    announced = False
    local = _local_address(host)

    def announce() -> None:
        nonlocal announced
        if announced:
            return
        try:
            with socket.create_connection((local, port), timeout=0.2):
                pass
        except OSError:
            return
        announced = True
        base = f"http://{_address(local, port)}"
        embedded = {type(service) for service in started}
        lines = [
            "",
            "Ticketdesk is running. Ctrl-C stops everything.",
            f"  admin      {base}/admin/",
            f"  API docs   {base}/api/docs/",
            f"  API root   {base}/api/",
            f"  console    {base}/console/",
            f"  mailboxes  {base}/admin/mail/mailbox/ (then mail in: python manage.py mail_in "
            "--mailbox ADDRESS < message.eml, IMAP, or the webhook: docs/mail.md)",
        ]
        # Only URLs of our own servers: an external URL may carry a password.
        if EmbeddedPostgres in embedded:
            lines.append(f"  DATABASE_URL={env['DATABASE_URL']}")
        if EmbeddedRedis in embedded:
            lines.append(f"  REDIS_URL={env['REDIS_URL']}")
        if EmbeddedClamd in embedded:
            lines.append(
                f"  CLAMD_ADDRESS={env['CLAMD_ADDRESS']} (uploads scanned; test signature only)"
            )
        if MailCatcher in embedded:
            lines.append(f"  mail catcher: {env['EMAIL_URL']} (messages in {shown(MAIL_DIR)})")
        if warning:
            lines.append(warning)
        for line in [*lines, ""]:
            say(line)

    return announce


if __name__ == "__main__":
    sys.exit(main())
