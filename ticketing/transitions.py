"""The transition primitive: every status change of a ticket is one transition of the state
machine (lifecycle.py), applied by one compare-and-set statement with its audit record in the
same transaction. Every other audit record goes through `record` too (SLA events, replies,
routing steps), so the trail has one writer.

May import: ticketing.models, ticketing.lifecycle, config."""

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache, lru_cache
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.models import Model, Q

from config.db import prepared_cursor

from .lifecycle import IllegalTransition, Transition
from .models import ProcessStatus, Ticket, TicketRecord


def record(
    *,
    ticket_id: int,
    action: str,
    actor_id: int | None,
    now: datetime,
    from_status: int | None = None,
    to_status: int | None = None,
    detail: dict[str, Any] | None = None,
) -> TicketRecord:
    return TicketRecord.objects.create(
        ticket_id=ticket_id,
        action=action,
        actor_id=actor_id,
        created=now,
        from_status=from_status,
        to_status=to_status,
        detail=detail or {},
    )


@dataclass(frozen=True)
class Along:
    """A statement that goes with a transition, inside the transition's one statement (as a
    CTE named `name`), so that it costs no round trip of its own: a write that belongs to
    the status change (the SLA clocks of an approval; the routing decision of an
    assignment).

    `sql` may read `upd`, the updated ticket row: `INSERT … SELECT … FROM upd` writes only
    when the transition applies (a transition that did not apply raises IllegalTransition,
    but the caller's transaction may go on). `columns`: expressions over the CTE's (at most
    one) row to read back, returned by `apply_transition_along`; a plain SELECT runs only
    when something of it is read back."""

    name: str
    sql: str
    params: Sequence[Any] = ()
    columns: Sequence[str] = ()


def apply_transition(
    *,
    ticket_id: int,
    transition: Transition,
    actor_id: int | None,
    now: datetime,
    values: dict[str, Any] | None = None,
    condition: Q | None = None,
    detail: dict[str, Any] | None = None,
) -> Ticket:
    """Move the ticket along `transition` if it is still in one of the source statuses
    (compare-and-set: the UPDATE's WHERE is the check, so two racing callers cannot both
    win), writing its audit record in the same statement. Takes the ticket's row lock until
    the caller's transaction ends. Raises IllegalTransition, changing nothing, when the ticket
    is not in a source status (or does not meet `condition`)."""
    ticket, _ = apply_transition_along(
        ticket_id=ticket_id,
        transition=transition,
        actor_id=actor_id,
        now=now,
        values=values,
        condition=condition,
        detail=detail,
    )
    return ticket


def apply_transition_along(
    *,
    ticket_id: int,
    transition: Transition,
    actor_id: int | None,
    now: datetime,
    values: dict[str, Any] | None = None,
    condition: Q | None = None,
    detail: dict[str, Any] | None = None,
    along: Sequence[Along] = (),
) -> tuple[Ticket, dict[str, tuple | None]]:
    """`apply_transition`, with the statements `along` in the same statement. Returns the
    ticket and, by name, the columns read back from each along (None for a CTE without a
    row)."""
    assert connection.in_atomic_block, "apply_transition must run inside transaction.atomic"
    where_sql, where_params = _where(ticket_id, transition, condition)
    claimed = _compare_and_set(
        where_sql,
        where_params,
        field=transition.field,
        updates={transition.field: transition.target, **(values or {})},
        audit=(
            actor_id,
            now,
            transition.name,
            transition.target,
            json.dumps({"field": transition.field, **(detail or {})}),
        ),
        along=along,
    )
    if claimed is None:
        current = Ticket.objects.filter(pk=ticket_id).values_list(transition.field, flat=True)
        raise IllegalTransition(transition, current.first())
    return claimed


def _where(ticket_id: int, transition: Transition, condition: Q | None) -> tuple[str, list]:
    """The compare-and-set's WHERE: this ticket, in a source status of the transition (and
    approved, where the transition needs it), and meeting `condition`."""
    table = connection.ops.quote_name(Ticket._meta.db_table)
    column = connection.ops.quote_name(transition.field)
    sources = ", ".join(["%s"] * len(transition.sources))
    sql = f"{table}.id = %s AND {table}.{column} IN ({sources})"
    params: list = [ticket_id, *transition.sources]
    if transition.requires_approved:
        sql += f" AND {table}.process_status = %s"
        params.append(ProcessStatus.APPROVED)
    if condition is not None:
        queryset = Ticket.objects.filter(condition)
        compiler = queryset.query.get_compiler(connection=connection)
        extra_sql, extra_params = compiler.compile(queryset.query.where)
        sql += f" AND ({extra_sql})"
        params.extend(extra_params)
    return sql, params


@cache
def _ticket_columns() -> tuple[str, list]:
    """RETURNING list and per-field converters of the ticket row (the same for every call)."""
    meta = Ticket._meta
    table = connection.ops.quote_name(meta.db_table)
    fields = meta.concrete_fields
    returning = ", ".join(f"{table}.{connection.ops.quote_name(f.column)}" for f in fields)
    # A field stands for its column here; Django's stubs type the two apart.
    converters = [
        (f, f.get_db_converters(connection) + connection.ops.get_db_converters(f)) for f in fields  # type: ignore[attr-defined, arg-type]
    ]
    return returning, converters


@cache
def _ticket_attnames() -> list[str]:
    return [f.attname for f in Ticket._meta.concrete_fields]


@lru_cache(maxsize=256)
def _cas_sql(
    where_sql: str,
    field: str,
    columns: tuple[str, ...],
    alongs: tuple[tuple[str, str, tuple[str, ...]], ...],
) -> str:
    """The compare-and-set's SQL for one shape of transition (see _compare_and_set): the same
    few shapes come again and again, and each is built once."""
    meta = Ticket._meta
    quote = connection.ops.quote_name
    table = quote(meta.db_table)
    assignments = ", ".join(f"{quote(column)} = %s" for column in columns)
    returning, _ = _ticket_columns()
    records = quote(TicketRecord._meta.db_table)
    # `field` is a concrete field of the ticket (a column), not a relation's reverse side.
    sql = (
        f"WITH old AS (SELECT {table}.id, {table}.{quote(meta.get_field(field).column)} "  # type: ignore[union-attr, arg-type]
        f"AS previous FROM {table} WHERE {where_sql} FOR UPDATE), "
        f"upd AS (UPDATE {table} SET {assignments} FROM old "
        f"WHERE {table}.id = old.id RETURNING old.previous, {returning}), "
        f"rec AS (INSERT INTO {records} "
        f"(ticket_id, action, actor_id, from_status, to_status, created, detail) "
        f"SELECT upd.id, %s::text, %s::bigint, upd.previous, %s::smallint, %s::timestamptz, "
        f"%s::jsonb FROM upd)"
    )
    read_back, joins = [], []  # type: ignore[var-annotated]  # lists of SQL texts
    for name, along_sql, along_columns in alongs:
        sql += f", {name} AS ({along_sql})"
        if along_columns:
            read_back.extend(f"{name}.{column}" for column in along_columns)
            joins.append(f" LEFT JOIN {name} ON true")
    return sql + f" SELECT {', '.join(['upd.*', *read_back])} FROM upd{''.join(joins)}"


def _compare_and_set(
    where_sql: str,
    where_params: list,
    *,
    field: str,
    updates: dict[str, Any],
    audit: tuple,
    along: Sequence[Along] = (),
) -> tuple[Ticket, dict[str, tuple | None]] | None:
    """One statement: lock the row matching WHERE, update it, write the audit record of the
    status `field` it changes (`audit`: actor, instant, action, new status, detail) and run
    the `along` statements, and return the updated ticket with what the alongs read back —
    or None when no row matched (and nothing was written).

        WITH old AS (SELECT id, <field> AS previous FROM t WHERE <where> FOR UPDATE),
             upd AS (UPDATE t SET … FROM old WHERE t.id = old.id
                     RETURNING old.previous, t.*),
             rec AS (INSERT INTO oa_ticket_record … SELECT upd.id, … FROM upd),
             <along.name> AS (<along.sql>), …
        SELECT upd.*, <along columns> FROM upd LEFT JOIN <along.name> ON true …

    The WHERE is on the locked table, so after waiting for a concurrent writer PostgreSQL
    re-checks it against the new row version (a lost race matches nothing)."""
    db = connections[DEFAULT_DB_ALIAS]  # the connection itself, not the per-access proxy
    meta = Ticket._meta
    columns, set_params = [], []
    for name, value in updates.items():
        model_field = meta.get_field(name)  # a concrete field: a column
        if isinstance(value, Model):
            value = value.pk
        columns.append(model_field.column)  # type: ignore[union-attr]
        set_params.append(model_field.get_db_prep_save(value, db))  # type: ignore[union-attr]
    sql = _cas_sql(
        where_sql,
        field,
        tuple(columns),
        tuple((a.name, a.sql, tuple(a.columns)) for a in along),
    )
    actor_id, now, action, to_status, detail = audit
    audit_params = [action, actor_id, to_status, now, detail]
    along_params = [param for statement in along for param in statement.params]
    with prepared_cursor() as cursor:
        cursor.execute(sql, [*where_params, *set_params, *audit_params, *along_params])
        row = cursor.fetchone()
    if row is None:
        return None
    _, converters = _ticket_columns()
    values = []
    start = 1  # after old.previous
    end = start + len(converters)
    for (model_field, field_converters), value in zip(converters, row[start:end], strict=True):
        for converter in field_converters:
            value = converter(value, model_field, db)
        values.append(value)
    ticket = Ticket.from_db(db.alias, _ticket_attnames(), values)
    read: dict[str, tuple | None] = {}
    for statement in along:
        if statement.columns:
            width = len(statement.columns)
            read_back = tuple(row[end : end + width])
            read[statement.name] = None if all(c is None for c in read_back) else read_back
            end += width
    return ticket, read
