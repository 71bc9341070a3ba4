"""Prepared statements for the hottest raw SQL (an approval's four statements, the member
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

May import: Django and psycopg only."""

from contextlib import contextmanager

import psycopg
from django.db import DEFAULT_DB_ALIAS, connections


class _PreparingCursor(psycopg.Cursor):
    """Server-side binding, and every statement prepared once per connection."""

    def execute(self, query, params=None, *, prepare=None, binary=None):
        return super().execute(query, params, prepare=True, binary=binary)

    def _send_query_prepared(self, name, pgq, *, binary=None):
        super()._send_query_prepared(name, pgq, binary=binary)
        # What Django's query log reads (psycopg sets it only for statements it does not
        # prepare).
        self._query = pgq


@contextmanager
def prepared_cursor(using: str = DEFAULT_DB_ALIAS):
    """A cursor for raw SQL whose statements are prepared on the server (see the module).
    Parameters are bound on the server: a parameter whose type PostgreSQL cannot infer from
    its place needs a cast in the SQL (`%s::jsonb`)."""
    db = connections[using]
    db.ensure_connection()
    db.validate_thread_sharing()
    with db.wrap_database_errors:
        raw = _PreparingCursor(db.connection)
    cursor = db.make_debug_cursor(raw) if db.queries_logged else db.make_cursor(raw)
    try:
        yield cursor
    finally:
        cursor.close()
