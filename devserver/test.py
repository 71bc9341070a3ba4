"""`make test`: the whole pytest suite against real PostgreSQL and real Redis.

Uses the servers named by DATABASE_URL / REDIS_URL, or starts embedded ones for the run (data in
./.data/postgres-test, Redis on a free port with nothing kept) and stops them afterwards. Exits
with pytest's exit code, except that "no tests collected" (5) is a failure: a run that tests
nothing must not pass. The browser tests' Chromium is found (Debian's, on PATH, Playwright's) or
installed first (devserver/browser.py).

    python -m devserver.test [pytest arguments]
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from devserver.browser import ENV_NAME as BROWSER_ENV
from devserver.browser import ensure_browser, ensure_cjk_font
from devserver.processes import DevServerError, describe_exit, say, spawn
from devserver.services import DATA_DIR, EmbeddedPostgres, EmbeddedRedis, read_dotenv

DATABASE_NAME = "ticketdesk"  # pytest-django creates and drops test_ticketdesk
PYTEST_NO_TESTS_COLLECTED = 5


def main(pytest_args: list[str]) -> int:
    read_dotenv()
    env = dict(os.environ)
    # pyproject's pytest config names config.settings.test; a DJANGO_SETTINGS_MODULE left in the
    # shell by `make run` would override it (use --ds=... to choose on purpose).
    env.pop("DJANGO_SETTINGS_MODULE", None)

    pytest: subprocess.Popen[bytes] | None = None
    stop_signal: int | None = None

    def on_signal(signum: int, _frame: object) -> None:
        nonlocal stop_signal
        stop_signal = signum
        # pytest shares the terminal's process group, so Ctrl-C reaches it directly; a SIGTERM
        # or SIGHUP sent to this runner alone is passed on.
        if pytest is not None and signum != signal.SIGINT and pytest.poll() is None:
            pytest.send_signal(signum)

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, on_signal)

    started: list[EmbeddedPostgres | EmbeddedRedis] = []
    try:
        if env.get("DATABASE_URL"):
            say("PostgreSQL: external, from DATABASE_URL")
        else:
            postgres = EmbeddedPostgres(DATA_DIR / "postgres-test")
            postgres.start()
            started.append(postgres)
            postgres.tune_for_tests()
            postgres.ensure_database(DATABASE_NAME)
            env["DATABASE_URL"] = postgres.url(DATABASE_NAME)
        if env.get("REDIS_URL"):
            say("Redis: external, from REDIS_URL")
        else:
            redis = EmbeddedRedis(DATA_DIR / "redis-test", first_port=None, persist=False)
            redis.start()
            started.append(redis)
            env["REDIS_URL"] = redis.url
        # The browser tests' Chromium: found, or installed now (they fail, never skip, without).
        browser = ensure_browser(say, env)
        if browser:
            env[BROWSER_ENV] = browser
            ensure_cjk_font(say)  # the zh-hans screenshots' glyphs
        if stop_signal is not None:
            say(f"{signal.Signals(stop_signal).name} received during start-up: stopping")
            return 128 + stop_signal

        pytest = spawn(
            [sys.executable, "-m", "pytest", *pytest_args], env=env, own_process_group=False
        )
        returncode = pytest.wait()
    except DevServerError as exc:
        say(f"error: {exc}")
        return 1
    finally:
        for service in reversed(started):
            service.stop()

    if returncode == PYTEST_NO_TESTS_COLLECTED:
        say("FAILED: pytest collected no tests (exit code 5); a run that tests nothing fails")
        return 1
    if returncode < 0:
        say(f"pytest was {describe_exit(returncode)}")
        return 128 - returncode
    return returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
