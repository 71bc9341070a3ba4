"""The transition primitive: every status change of a ticket is one transition of the state
machine (lifecycle.py), applied by one compare-and-set statement with its audit record in the
same transaction. Every other audit record goes through `record` too (SLA events, replies,
routing steps), so the trail has one writer.

May import: ticketing.models, ticketing.lifecycle, config."""

import json
from datetime import datetime
from functools import cache
from typing import Any

from django.db import connection
from django.db.models import Model, Q

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
    assert connection.in_atomic_block, "apply_transition must run inside transaction.atomic"
    where_sql, where_params = _where(ticket_id, transition, condition)
    updates = {transition.field: transition.target, **(values or {})}
    audit = {
        "action": transition.name,
        "actor_id": actor_id,
        "to_status": transition.target,
        "created": now,
        "detail": {"field": transition.field, **(detail or {})},
    }
    claimed = _compare_and_set(
        where_sql, where_params, previous_field=transition.field, updates=updates, audit=audit
    )
    if claimed is None:
        current = Ticket.objects.filter(pk=ticket_id).values_list(transition.field, flat=True)
        raise IllegalTransition(transition, current.first())
    return claimed


def _where(ticket_id: int, transition: Transition, condition: Q | None) -> tuple[str, list]:
    """The compare-and-set's WHERE: this ticket, in a source status (approved, where the
    transition needs it), and meeting `condition`."""
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
    converters = [
        (f, f.get_db_converters(connection) + connection.ops.get_db_converters(f)) for f in fields
    ]
    return returning, converters


def _compare_and_set(
    where_sql: str,
    where_params: list,
    *,
    previous_field: str,
    updates: dict[str, Any],
    audit: dict[str, Any],
):
    """One statement: lock the row matching WHERE, update it, write the audit record, and
    return the updated ticket — or None when no row matched (and nothing was written).

        WITH old AS (SELECT id, <field> FROM t WHERE <where> FOR UPDATE),
             upd AS (UPDATE t SET … FROM old WHERE t.id = old.id RETURNING old.<field>, t.*),
             rec AS (INSERT INTO oa_ticket_record … SELECT … FROM upd)
        SELECT * FROM upd

    The WHERE is on the locked table, so after waiting for a concurrent writer PostgreSQL
    re-checks it against the new row version (a lost race matches nothing)."""
    meta = Ticket._meta
    quote = connection.ops.quote_name
    table = quote(meta.db_table)
    assignments, set_params = [], []
    for name, value in updates.items():
        field = meta.get_field(name)
        if isinstance(value, Model):
            value = value.pk
        assignments.append(f"{quote(field.column)} = %s")
        set_params.append(field.get_db_prep_save(value, connection))
    returning, converters = _ticket_columns()
    column = quote(meta.get_field(previous_field).column)
    records = quote(TicketRecord._meta.db_table)
    sql = (
        f"WITH old AS (SELECT {table}.id, {table}.{column} AS previous FROM {table} "
        f"WHERE {where_sql} FOR UPDATE), "
        f"upd AS (UPDATE {table} SET {', '.join(assignments)} FROM old "
        f"WHERE {table}.id = old.id RETURNING old.previous, {returning}), "
        f"rec AS (INSERT INTO {records} "
        f"(ticket_id, action, actor_id, from_status, to_status, created, detail) "
        f"SELECT upd.id, %s, %s, upd.previous, %s, %s, %s::jsonb FROM upd) "
        f"SELECT * FROM upd"
    )
    audit_params = [
        audit["action"],
        audit["actor_id"],
        audit["to_status"],
        audit["created"],
        json.dumps(audit["detail"]),
    ]
    with connection.cursor() as cursor:
        cursor.execute(sql, [*where_params, *set_params, *audit_params])
        row = cursor.fetchone()
    if row is None:
        return None
    values = []
    for (field, field_converters), value in zip(converters, row[1:], strict=True):
        for converter in field_converters:
            value = converter(value, field, connection)
        values.append(value)
    return Ticket.from_db(connection.alias, [f.attname for f, _ in converters], values)
