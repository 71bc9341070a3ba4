"""Prepared statements for the hottest raw SQL (an approval's statements, the member
figures routing reads under the group lock, a notice's insert).

Django binds parameters on the client and never prepares (psycopg's `prepare_threshold` is
off): every execution sends the full text, which PostgreSQL parses and plans again — for the
approval's compare-and-set that is about 0.8 ms of planning, all of it under the group lock.
`prepared_cursor()` gives a Django cursor (execute wrappers, query logging and error
translation as usual) over a psycopg server-binding cursor that prepares each statement on
the server the first time a connection runs it and executes it by name after that. psycopg
keeps the prepared names per connection (`prepared_max`), so nothing here holds state.

A transaction-pooling proxy (PgBouncer before 1.21 in transaction mode) cannot keep
prepared statements across transactions: DB_PREPARED_STATEMENTS=false turns them off, and
the same code then runs with plain server-side binding (settings: psycopg's
`prepare_threshold` is None then, and psycopg prepares nothing).

`checking_constraints_now()` sends SET CONSTRAINTS ALL IMMEDIATE ahead of a transaction's
first statement, in its round trip, so that the foreign keys of what a transaction writes
are checked as it goes rather than at its COMMIT (an approval commits under its group's
lock).

May import: Django and psycopg only."""

from contextlib import contextmanager

import psycopg
from django.db import DEFAULT_DB_ALIAS, connections
from psycopg.pq import Format
from psycopg.types.json import JsonbBinaryLoader

JSONB_OID = 3802


class _PreparingCursor(psycopg.Cursor):
    """Server-side binding, every statement prepared once per connection, and results in
    binary (no text to parse: a timestamp is eight bytes)."""

    def execute(self, query, params=None, *, prepare=None, binary=None):
        return super().execute(query, params, prepare=True, binary=True)

    def _send_query_prepared(self, name, pgq, *, binary=None):
        super()._send_query_prepared(name, pgq, binary=binary)
        # What Django's query log reads (psycopg sets it only for statements it does not
        # prepare).
        self._query = pgq


class _JsonbBinaryAsText(JsonbBinaryLoader):
    """A jsonb column in binary results, as Django reads jsonb: its text (a JSONField parses
    it itself)."""

    _loads = staticmethod(bytes.decode)  # type: ignore[assignment]  # binary: always bytes


@contextmanager
def prepared_cursor(using: str = DEFAULT_DB_ALIAS):
    """A cursor for raw SQL whose statements are prepared on the server (see the module).
    Parameters are bound on the server: a parameter whose type PostgreSQL cannot infer from
    its place needs a cast in the SQL (`%s::jsonb`). Rows come as Django's own cursor gives
    them (timestamps in the connection's zone, jsonb as text), read in binary."""
    db = connections[using]
    # As Django's own cursor(): a connection the server closed (CONN_HEALTH_CHECKS) is
    # replaced rather than failed.
    db.close_if_health_check_failed()
    db.ensure_connection()
    db.validate_thread_sharing()
    adapters = db.connection.adapters
    if adapters.get_loader(JSONB_OID, Format.BINARY) is not _JsonbBinaryAsText:
        adapters.register_loader("jsonb", _JsonbBinaryAsText)
    with db.wrap_database_errors:
        raw = _PreparingCursor(db.connection)
    # Both wrap a driver's cursor (Django's stubs type their argument as the wrapper itself).
    cursor = db.make_debug_cursor(raw) if db.queries_logged else db.make_cursor(raw)  # type: ignore[arg-type]
    try:
        yield cursor
    finally:
        cursor.close()


def outermost_atomic(using: str = DEFAULT_DB_ALIAS) -> bool:
    """Whether the caller's `transaction.atomic` block is the outermost one: the transaction
    is the caller's own (not a caller's, not a test's), so how it checks its constraints
    and when it commits are the caller's to choose."""
    db = connections[using]
    return db.in_atomic_block and len(db.atomic_blocks) == 1 and not db.savepoint_ids


@contextmanager
def checking_constraints_now(using: str = DEFAULT_DB_ALIAS):
    """In a transaction of the caller's own (`outermost_atomic`), the statement executed
    inside goes to the server behind SET CONSTRAINTS ALL IMMEDIATE, in the same round trip
    (pipeline mode): from then on the transaction checks its foreign keys as each statement
    ends, not all at its COMMIT (Django declares them DEFERRABLE INITIALLY DEFERRED). For a
    transaction that commits under a lock everyone waits on (an approval, under its group's
    lock) the checks of what it wrote before taking the lock are then done before it, not at
    the COMMIT under it. In someone else's transaction the statement just runs."""
    db = connections[using]
    if not outermost_atomic(using):
        yield
        return
    db.ensure_connection()
    raw = db.connection
    with db.wrap_database_errors, raw.pipeline():
        raw.execute("SET CONSTRAINTS ALL IMMEDIATE", prepare=False)
        yield
