"""The transition primitive: every status change of a ticket is one transition of the state
machine (lifecycle.py), applied by one compare-and-set statement with its audit record in the
same transaction. Every other audit record goes through `record` too (SLA events, replies,
routing steps), so the trail has one writer.

May import: ticketing.models, ticketing.lifecycle, config."""

from datetime import datetime
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
    win). Takes the ticket's row lock until the caller's transaction ends. Raises
    IllegalTransition, changing nothing, when the ticket is not in a source status."""
    assert connection.in_atomic_block, "apply_transition must run inside transaction.atomic"
    conditions = {f"{transition.field}__in": transition.sources}
    if transition.requires_approved:
        conditions["process_status"] = ProcessStatus.APPROVED
    updates = {transition.field: transition.target, **(values or {})}
    claimed = _compare_and_set(
        Ticket.objects.filter(condition or Q(), pk=ticket_id, **conditions),
        previous_field=transition.field,
        updates=updates,
    )
    if claimed is None:
        current = Ticket.objects.filter(pk=ticket_id).values_list(transition.field, flat=True)
        raise IllegalTransition(transition, current.first())
    previous, ticket = claimed
    record(
        ticket_id=ticket_id,
        action=transition.name,
        actor_id=actor_id,
        now=now,
        from_status=previous,
        to_status=transition.target,
        detail={"field": transition.field, **(detail or {})},
    )
    return ticket


def _compare_and_set(queryset, *, previous_field: str, updates: dict[str, Any]):
    """One statement: lock the row matching the queryset's WHERE, update it, and return the
    previous value of `previous_field` with the updated ticket — or None when no row matched.

        WITH old AS (SELECT id, <field> FROM t WHERE <where> FOR UPDATE)
        UPDATE t SET … FROM old WHERE t.id = old.id RETURNING old.<field>, t.*

    The WHERE is the queryset's own, on the locked table, so after waiting for a concurrent
    writer PostgreSQL re-checks it against the new row version (a lost race matches nothing).
    """
    meta = Ticket._meta
    table = connection.ops.quote_name(meta.db_table)
    compiler = queryset.query.get_compiler(connection=connection)
    where_sql, where_params = compiler.compile(queryset.query.where)
    assignments, set_params = [], []
    for name, value in updates.items():
        field = meta.get_field(name)
        if isinstance(value, Model):
            value = value.pk
        assignments.append(f"{connection.ops.quote_name(field.column)} = %s")
        set_params.append(field.get_db_prep_save(value, connection))
    fields = meta.concrete_fields
    returning = ", ".join(f"{table}.{connection.ops.quote_name(f.column)}" for f in fields)
    column = connection.ops.quote_name(meta.get_field(previous_field).column)
    sql = (
        f"WITH old AS (SELECT {table}.id, {table}.{column} AS previous FROM {table} "
        f"WHERE {where_sql} FOR UPDATE) "
        f"UPDATE {table} SET {', '.join(assignments)} FROM old WHERE {table}.id = old.id "
        f"RETURNING old.previous, {returning}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*where_params, *set_params])
        row = cursor.fetchone()
    if row is None:
        return None
    converters = [
        (f, f.get_db_converters(connection) + connection.ops.get_db_converters(f)) for f in fields
    ]
    values = []
    for (field, field_converters), value in zip(converters, row[1:], strict=True):
        for converter in field_converters:
            value = converter(value, field, connection)
        values.append(value)
    ticket = Ticket.from_db(connection.alias, [f.attname for f in fields], values)
    return row[0], ticket
