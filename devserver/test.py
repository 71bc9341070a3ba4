"""`make test`: the whole pytest suite against real PostgreSQL and real Redis.

Uses the servers named by DATABASE_URL / REDIS_URL, or starts embedded ones for the run (data in
./.data/postgres-test, Redis on a free port with nothing kept) and stops them afterwards. Exits
with pytest's exit code, except that "no tests collected" (5) is a failure: a run that tests
nothing must not pass. The browser tests' Chromium is found (Debian's, on PATH, Playwright's) or
installed first (devserver/browser.py), and so is ClamAV's clamd (Debian's clamav-daemon), which
the attachment scanning tests start with a one-signature database of their own
(tests/attachments/conftest.py), and Dovecot (Debian's dovecot-imapd), which the IMAP mail-in
tests start with a configuration of their own (tests/mail/imap_fixtures.py).

Then, when no pytest arguments were given (the whole suite, as `make test` and CI run it), the
PgBouncer job: the database-heavy tests in PGBOUNCER_TESTS once more, through a PgBouncer in
transaction pooling mode (devserver/services.py: Debian's package, installed when missing) in
front of the same PostgreSQL, with DB_PREPARED_STATEMENTS=false, as a deployment behind one
runs. `--pgbouncer` runs only that job (`make test-pgbouncer`), with the pytest arguments
given (options such as -x or -k; paths add to PGBOUNCER_TESTS).

    python -m devserver.test [pytest arguments]
    python -m devserver.test --pgbouncer [pytest arguments]
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable

from psycopg.conninfo import conninfo_to_dict

from devserver.browser import ENV_NAME as BROWSER_ENV
from devserver.browser import ensure_browser, ensure_cjk_font
from devserver.processes import DevServerError, describe_exit, say, spawn
from devserver.services import (
    DATA_DIR,
    EmbeddedPgBouncer,
    EmbeddedPostgres,
    EmbeddedRedis,
    ensure_clamd,
    ensure_dovecot,
    ensure_pgbouncer,
    read_dotenv,
)

DATABASE_NAME = "ticketdesk"  # pytest-django creates and drops test_ticketdesk
PYTEST_NO_TESTS_COLLECTED = 5
PGBOUNCER_FLAG = "--pgbouncer"

# The PgBouncer job's tests: those whose database use a transaction pooler could break. Real
# parallel connections racing for the same rows (accepts, approvals, load rows, the SLA
# scanner's processes), transaction=True tests whose commits other connections must see,
# row locks and transaction-level advisory locks (routing/loads.py's sweep), the approval and
# routing flows, SLA escalation and the outbox, and a real worker and beat (the tick).
PGBOUNCER_TESTS = (
    "tests/handler_groups/test_concurrency.py",
    "tests/routing/test_routing_concurrency.py",
    "tests/routing/test_approval_path.py",
    "tests/routing/test_loads.py",
    "tests/routing/test_routing.py",
    "tests/sla/test_scanner.py",
    "tests/sla/test_escalation.py",
    "tests/sla/test_tick_lag.py",
    "tests/notifications/test_send.py",
    "tests/notifications/test_delivery.py",
)


def main(argv: list[str]) -> int:
    pgbouncer_only = PGBOUNCER_FLAG in argv
    pytest_args = [arg for arg in argv if arg != PGBOUNCER_FLAG]
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
        # The PgBouncer job has no browser test.
        browser = None if pgbouncer_only else ensure_browser(say, env)
        if browser:
            env[BROWSER_ENV] = browser
            ensure_cjk_font(say)  # the zh-hans screenshots' glyphs
        if not pgbouncer_only:
            # Found, or installed now, once: each pytest session starts its own daemon. Without
            # one the scanning tests fail (never skip) with this message; the rest still run.
            try:
                say(f"clamd for the attachment scanning tests: {ensure_clamd()}")
            except DevServerError as exc:
                say(f"warning: {exc}")
            # Likewise Dovecot, for the IMAP mail-in tests (tests/mail/imap_fixtures.py).
            try:
                say(f"Dovecot for the IMAP mail-in tests: {ensure_dovecot()}")
            except DevServerError as exc:
                say(f"warning: {exc}")
        with_pgbouncer_job = pgbouncer_only or not pytest_args
        if with_pgbouncer_job:  # found, or installed now (tests/test_pgbouncer.py uses it too)
            say(f"PgBouncer for the PgBouncer job: {ensure_pgbouncer()}")
        if stop_signal is not None:
            say(f"{signal.Signals(stop_signal).name} received during start-up: stopping")
            return 128 + stop_signal

        def run_pytest(args: list[str], job_env: dict[str, str]) -> int:
            nonlocal pytest
            pytest = spawn(
                [sys.executable, "-m", "pytest", *args], env=job_env, own_process_group=False
            )
            return verdict(pytest.wait())

        returncode = 0
        if not pgbouncer_only:
            returncode = run_pytest(pytest_args, env)
        if with_pgbouncer_job and stop_signal is None:
            say("The PgBouncer job: the database-heavy tests through PgBouncer")
            through = pgbouncer_job([*PGBOUNCER_TESTS, *pytest_args], env, run_pytest)
            returncode = returncode or through
    except DevServerError as exc:
        say(f"error: {exc}")
        return 1
    finally:
        for service in reversed(started):
            service.stop()
    return returncode


def verdict(returncode: int) -> int:
    """pytest's exit code as the runner's, where a run that tested nothing fails."""
    if returncode == PYTEST_NO_TESTS_COLLECTED:
        say("FAILED: pytest collected no tests (exit code 5); a run that tests nothing fails")
        return 1
    if returncode < 0:
        say(f"pytest was {describe_exit(returncode)}")
        return 128 - returncode
    return returncode


def pgbouncer_job(
    pytest_args: list[str],
    env: dict[str, str],
    run_pytest: Callable[[list[str], dict[str, str]], int],
) -> int:
    """`pytest_args` through a PgBouncer (transaction pooling) in front of env's PostgreSQL,
    with DB_PREPARED_STATEMENTS=false. pytest-django creates the test database through it
    and keeps it (--reuse-db): PgBouncer holds idle server connections to it, which a DROP
    DATABASE through it would find in use, so the runner drops it over a direct connection,
    before (a crashed run's) and once PgBouncer has stopped."""
    direct = env["DATABASE_URL"]
    test_database = "test_" + str(conninfo_to_dict(direct)["dbname"])
    drop_database(direct, test_database)
    pgbouncer = EmbeddedPgBouncer(DATA_DIR / "pgbouncer-test", direct)
    pgbouncer.start()
    try:
        job_env = {
            **env,
            "DATABASE_URL": pgbouncer.url_for(direct),
            "DB_PREPARED_STATEMENTS": "false",
        }
        returncode = run_pytest(["--reuse-db", *pytest_args], job_env)
        pooled = sum(int(str(row["total_xact_count"])) for row in pgbouncer.show("STATS"))
        say(f"PgBouncer pooled {pooled} transactions for the job")
        if pooled == 0 and returncode == 0:
            say("FAILED: no transaction went through PgBouncer; the job tested nothing of it")
            returncode = 1
    finally:
        pgbouncer.stop()
        drop_database(direct, test_database)
    return returncode


def drop_database(database_url: str, name: str) -> None:
    """DROP DATABASE IF EXISTS `name`, on the server of `database_url`, connected directly;
    WITH (FORCE): a process the main run left behind (a test's server that did not stop) must
    not fail the job before it starts."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(database_url, dbname="postgres", autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
