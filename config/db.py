"""Raw SQL: the hottest statements prepared on the server (`prepared_cursor`), and rows as
model instances (`instances`), the one place that turns a hand-written statement's rows
into what a queryset would have built.

Django binds parameters on the client and never prepares: every execution sends the full
text, which PostgreSQL parses and plans again. `prepared_cursor()` gives a Django cursor
(execute wrappers, query logging and error translation as usual) over a psycopg
server-binding cursor that executes every statement with psycopg's `prepare=True`: prepared
on the server the first time a connection runs it, executed by name after that. psycopg
keeps the prepared names per connection (`prepared_max`), so nothing here holds state.
Worth 10-37 % of approvals throughput when measured (docs/adr/0004-prepared-statements.md).

A transaction-pooling proxy (PgBouncer before 1.21 in transaction mode) cannot keep
prepared statements across transactions: DB_PREPARED_STATEMENTS=false turns them off
(psycopg's `prepare_threshold` is None then, and psycopg prepares nothing: the same
cursors run with plain server-side binding).

May import: Django and psycopg only."""

from collections.abc import Iterable, Sequence
from contextlib import contextmanager
from functools import cache
from typing import TypeVar

import psycopg
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.utils import CursorDebugWrapper, CursorWrapper
from django.db.models import Model
from psycopg.adapt import Loader
from psycopg.pq import Format

M = TypeVar("M", bound=Model)
JSONB_OID = 3802


class _PreparingCursor(psycopg.Cursor):
    """Server-side binding, every statement prepared once per connection (psycopg's
    `prepare=True`), and results in binary (no text to parse: a timestamp is eight bytes)."""

    def execute(self, query, params=None, *, prepare=None, binary=None):
        return super().execute(query, params, prepare=True, binary=True)


class _JsonbBinaryAsText(Loader):
    """A jsonb column in binary results, as Django reads jsonb: its text (a JSONField parses
    it itself). jsonb's binary form is a version byte (1) and the text."""

    format = Format.BINARY

    def load(self, data) -> str:
        return bytes(data[1:]).decode()


class _LoggedAsWritten(CursorDebugWrapper):
    """Django's debug cursor (DEBUG, or a test capturing queries), logging each statement as
    written, with its placeholders: Django reads a statement's text back from psycopg, which
    keeps none of one it executes by name."""

    def execute(self, sql, params=None):
        with self.debug_sql(sql, params):
            return CursorWrapper.execute(self, sql, params)


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
    # make_cursor wraps a driver's cursor (Django's stubs type its argument as the wrapper).
    cursor = _LoggedAsWritten(raw, db) if db.queries_logged else db.make_cursor(raw)  # type: ignore[arg-type]
    try:
        yield cursor
    finally:
        cursor.close()


def instances(
    model: type[M],
    rows: Iterable[Sequence],
    attnames: Sequence[str] | None = None,
    *,
    using: str = DEFAULT_DB_ALIAS,
) -> list[M]:
    """The model instances of raw rows (a cursor, or rows read from one), as a queryset would
    build them: each value through its field's converters from the database (a JSONField
    parses its text), then `Model.from_db`, so that `_state` says loaded from `using` (a
    save() updates rather than inserts). `attnames`: the fields' attnames in the rows' column
    order (any order, any subset: the others are deferred); all the model's concrete fields,
    in their order, by default."""
    names, order, converters = _layout(
        model, tuple(attnames or (f.attname for f in model._meta.concrete_fields)), using
    )
    db = connections[using]
    found = []
    for row in rows:
        values = [row[index] for index in order]
        for index, field, field_converters in converters:
            for converter in field_converters:
                values[index] = converter(values[index], field, db)
        found.append(model.from_db(using, names, values))
    return found


@cache
def _layout(model: type[Model], attnames: tuple[str, ...], using: str) -> tuple:
    """How rows of `attnames` become what `Model.from_db` takes: the names and the columns'
    positions in the model's field order (from_db reads values in that order), and
    (position, field, converters) of the fields that have converters — the backend's, then
    the field's, in the order the ORM's compiler applies them."""
    db = connections[using]
    fields = [f for f in model._meta.concrete_fields if f.attname in attnames]
    order = [attnames.index(f.attname) for f in fields]
    converters = []
    for index, field in enumerate(fields):
        # A field stands for its column here; Django's stubs type the two apart.
        field_converters = db.ops.get_db_converters(field) + field.get_db_converters(db)  # type: ignore[arg-type, attr-defined]
        if field_converters:
            converters.append((index, field, field_converters))
    return tuple(f.attname for f in fields), order, converters
