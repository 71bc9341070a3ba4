"""Deploying behind PgBouncer in transaction mode (issue 23 item 7): the runner's PgBouncer
(devserver/services.py) pools by transaction in front of the test database's server and
leaves nothing behind; production settings turn off what such a pooler cannot keep when
DB_PREPARED_STATEMENTS=false. The suite's database-heavy tests run through it in the
PgBouncer job (devserver/test.py, docs/tests.md)."""

import os
import socket

import psycopg
import pytest

from devserver import services
from devserver.processes import DevServerError
from devserver.services import EmbeddedPgBouncer
from tests.security.test_settings import PRODUCTION_ENV, run


@pytest.fixture
def pgbouncer(tmp_path):
    """A PgBouncer whose pool holds one server connection, in front of the test server."""
    bouncer = EmbeddedPgBouncer(tmp_path / "pgbouncer", os.environ["DATABASE_URL"], pool_size=1)
    bouncer.start()
    yield bouncer
    bouncer.stop()


def backend_pid(conn: psycopg.Connection) -> int:
    with conn.transaction():
        row = conn.execute("SELECT pg_backend_pid()").fetchone()
    assert row is not None
    return row[0]


def test_two_clients_take_turns_on_one_server_connection_transaction_by_transaction(pgbouncer):
    """With one server connection in the pool, a second client gets it as soon as the first
    one's transaction ends, while the first stays connected: pooling by transaction (in
    session mode the second would wait for the first to disconnect)."""
    url = pgbouncer.url("postgres")
    with (
        psycopg.connect(url, autocommit=True, prepare_threshold=None) as first,
        psycopg.connect(url, autocommit=True, prepare_threshold=None) as second,
    ):
        pids = [backend_pid(first), backend_pid(second), backend_pid(first)]
    assert len(set(pids)) == 1
    (config,) = [row for row in pgbouncer.show("CONFIG") if row["key"] == "pool_mode"]
    assert config["value"] == "transaction"


def test_a_stopped_pgbouncer_frees_its_port_and_its_directory(tmp_path):
    bouncer = EmbeddedPgBouncer(tmp_path / "pgbouncer", os.environ["DATABASE_URL"])
    bouncer.start()
    port = bouncer.port
    bouncer.stop()
    with socket.socket() as sock:
        assert sock.connect_ex(("127.0.0.1", port)) != 0
    again = EmbeddedPgBouncer(tmp_path / "pgbouncer", os.environ["DATABASE_URL"])
    again.start()  # the directory's lock was released
    again.stop()


def test_a_second_runner_cannot_take_a_running_pgbouncers_directory(pgbouncer, tmp_path):
    with pytest.raises(DevServerError, match="in use by another runner"):
        EmbeddedPgBouncer(tmp_path / "pgbouncer", os.environ["DATABASE_URL"]).start()


def test_without_pgbouncer_and_no_way_to_install_it_the_runner_says_how(monkeypatch):
    monkeypatch.setattr(services, "find_pgbouncer", lambda: None)
    monkeypatch.setattr(os, "geteuid", lambda: 1000)  # not root: no apt-get install
    with pytest.raises(DevServerError, match="apt-get install pgbouncer"):
        services.ensure_pgbouncer()


def test_the_upstream_password_reaches_only_the_private_user_list(tmp_path):
    bouncer = EmbeddedPgBouncer(
        tmp_path / "pgbouncer", "postgres://desk:s%40cret@127.0.0.1:5432/ticketdesk"
    )
    bouncer.port = 6432
    assert bouncer.url("ticketdesk") == "postgres://desk:s%40cret@127.0.0.1:6432/ticketdesk"
    assert "s@cret" not in bouncer.ini()
    assert "pool_mode = transaction" in bouncer.ini().splitlines()


SETTINGS = (
    "import config.wsgi, django.conf; db = django.conf.settings.DATABASES['default']; "
    "print(db['OPTIONS']['prepare_threshold'], db['DISABLE_SERVER_SIDE_CURSORS'])"
)


def test_production_behind_a_transaction_pooler_prepares_nothing_and_declares_no_cursor():
    result = run(SETTINGS, {**PRODUCTION_ENV, "DB_PREPARED_STATEMENTS": "false"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[-2:] == ["None", "True"]


def test_production_prepares_the_hottest_statements_by_default(monkeypatch):
    monkeypatch.delenv("DB_PREPARED_STATEMENTS", raising=False)
    monkeypatch.delenv("DB_SERVER_SIDE_CURSORS", raising=False)
    result = run(SETTINGS, PRODUCTION_ENV)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[-2:] == [str(2**31 - 1), "False"]


def test_server_side_cursors_can_be_chosen_apart_from_prepared_statements():
    result = run(
        SETTINGS,
        {**PRODUCTION_ENV, "DB_PREPARED_STATEMENTS": "false", "DB_SERVER_SIDE_CURSORS": "true"},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[-2:] == ["None", "False"]
