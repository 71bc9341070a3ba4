"""The transition primitive: every status change of a ticket is one transition of the state
machine (lifecycle.py), applied by one compare-and-set statement with its audit record in the
same transaction. Every other audit record goes through `record` too (SLA events, replies,
routing steps), so the trail has one writer.

Both announce the change to open pages once it commits (live.events): this is the one place
every change of a ticket passes.

May import: ticketing.models, ticketing.lifecycle, live.events, config."""

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connection, connections, transaction
from django.db.models import Model, Q
from psycopg import sql

from config.db import instances, prepared_cursor
from live import events as live_events

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
    created = TicketRecord.objects.create(
        ticket_id=ticket_id,
        action=action,
        actor_id=actor_id,
        created=now,
        from_status=from_status,
        to_status=to_status,
        detail=detail or {},
    )
    _announce_record(ticket_id, action, detail or {})
    return created


# Records the applicant's page shows the outcome of; every other record (notes, SLA pauses,
# routing steps, admin edits) is the team's business only.
_PUBLIC_RECORDS = {"submit"}


def _announce_record(ticket_id: int, action: str, detail: dict[str, Any]) -> None:
    if action == "reply":
        public = detail.get("reply_type") == "public"
        kind = "reply" if public else "note"
    else:
        public, kind = action in _PUBLIC_RECORDS, "record"

    def announce() -> None:
        people = (
            Ticket.objects.filter(pk=ticket_id)
            .values("creator_id", "handler_id", "handler_group_id")
            .first()
        )
        if people is None:
            return
        live_events.publish_now(
            live_events.event(
                kind=kind,
                ticket_id=ticket_id,
                audience=live_events.PUBLIC if public else live_events.TEAM,
                creator_id=people["creator_id"],
                handler_id=people["handler_id"],
                group_id=people["handler_group_id"],
                action=action,
            )
        )

    transaction.on_commit(announce)


@dataclass(frozen=True)
class Along:
    """A statement that goes with a transition, inside the transition's one statement (as a
    CTE named `name`), so that it costs no round trip of its own: a write that belongs to
    the status change (the SLA clocks of an approval; the routing decision of an
    assignment).

    `sql` is one whole statement (a module's triple-quoted text, with its own docstring
    saying what it locks) that may read `upd`, the updated ticket row: `INSERT … SELECT …
    FROM upd` writes only when the transition applies (a transition that did not apply
    raises IllegalTransition, but the caller's transaction may go on). `columns`: columns
    of the CTE's (at most one) row to read back, returned by `apply_transition_along`; a
    plain SELECT runs only when something of it is read back."""

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
    where, where_params = _where(ticket_id, transition, condition)
    claimed = _compare_and_set(
        where,
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
    ticket = claimed[0]
    # The applicant's page shows every status; the event names the transition only to the team.
    live_events.publish(
        kind="status",
        ticket_id=ticket_id,
        audience=live_events.PUBLIC,
        creator_id=ticket.creator_id,
        handler_id=ticket.handler_id,
        group_id=ticket.handler_group_id,
        action=transition.name,
    )
    return claimed


def _where(ticket_id: int, transition: Transition, condition: Q | None) -> tuple[str, list]:
    """The compare-and-set's WHERE on the ticket table: this ticket, in a source status of
    the transition (and approved, where the transition needs it), and meeting `condition`
    (compiled by the ORM: its SQL is Django's own)."""
    where: sql.Composable = sql.SQL(TRANSITION_WHERE_SQL).format(
        # A concrete field (a column), not a relation's reverse side get_field may also give.
        status=sql.Identifier(Ticket._meta.get_field(transition.field).column)  # type: ignore[union-attr, arg-type]
    )
    params: list = [ticket_id, list(transition.sources)]
    if transition.requires_approved:
        where = sql.SQL("{} AND oa_ticket_bill.process_status = %s").format(where)
        params.append(ProcessStatus.APPROVED)
    if condition is not None:
        queryset = Ticket.objects.filter(condition)
        compiler = queryset.query.get_compiler(connection=connection)
        extra_sql, extra_params = compiler.compile(queryset.query.where)
        where = sql.SQL("{} AND ({})").format(where, sql.SQL(extra_sql))
        params.extend(extra_params)
    return where.as_string(), params


# This ticket in a source status of the transition (sources: an array parameter).
TRANSITION_WHERE_SQL = "oa_ticket_bill.id = %s AND oa_ticket_bill.{status} = ANY(%s::smallint[])"

COMPARE_AND_SET_SQL = """
WITH old AS (
    SELECT oa_ticket_bill.id, oa_ticket_bill.{status} AS previous
    FROM oa_ticket_bill
    WHERE {where}
    FOR UPDATE
), upd AS (
    UPDATE oa_ticket_bill SET {assignments}
    FROM old
    WHERE oa_ticket_bill.id = old.id
    RETURNING old.previous, {ticket_columns}
), rec AS (
    INSERT INTO oa_ticket_record
        (ticket_id, action, actor_id, from_status, to_status, created, detail)
    SELECT upd.id, %s::text, %s::bigint, upd.previous, %s::smallint, %s::timestamptz, %s::jsonb
    FROM upd
){alongs}
SELECT upd.*{read_back}
FROM upd{joins}
"""
"""One transition, one statement (`_compare_and_set`). Locks the ticket's row (FOR UPDATE in
`old`) until the caller's transaction ends: the WHERE is on the locked table, so after
waiting for a concurrent writer PostgreSQL re-checks it against the new row version and a
lost race matches nothing — no row, nothing written, not even by the alongs, which read
`upd`. `old` keeps the status before the update for the audit record (`rec`); `alongs` are
the `Along` statements of the caller (`, <name> AS (<its SQL>)`), `read_back` and `joins`
read back their columns (`LEFT JOIN <name> ON true`: at most one row each)."""


@lru_cache(maxsize=256)
def _cas_sql(
    where: str,
    field: str,
    columns: tuple[str, ...],
    alongs: tuple[tuple[str, str, tuple[str, ...]], ...],
) -> str:
    """COMPARE_AND_SET_SQL for one shape of transition (its WHERE, the columns it sets, its
    alongs): the same few shapes come again and again, and each is composed once."""
    meta = Ticket._meta
    comma = sql.SQL(", ")
    statement = sql.SQL(COMPARE_AND_SET_SQL).format(
        # (as above: the transition's status field is a column)
        status=sql.Identifier(meta.get_field(field).column),  # type: ignore[union-attr, arg-type]
        where=sql.SQL(where),
        assignments=comma.join(
            sql.SQL("{} = %s").format(sql.Identifier(column)) for column in columns
        ),
        ticket_columns=comma.join(
            sql.Identifier(meta.db_table, f.column) for f in meta.concrete_fields
        ),
        alongs=sql.SQL("").join(
            sql.SQL(",\n{} AS ({})").format(sql.Identifier(name), sql.SQL(along_sql.strip()))
            for name, along_sql, _ in alongs
        ),
        read_back=sql.SQL("").join(
            sql.SQL(", {}").format(sql.Identifier(name, column))
            for name, _, along_columns in alongs
            for column in along_columns
        ),
        joins=sql.SQL("").join(
            sql.SQL("\nLEFT JOIN {} ON true").format(sql.Identifier(name))
            for name, _, along_columns in alongs
            if along_columns
        ),
    )
    return statement.as_string()


def _compare_and_set(
    where: str,
    where_params: list,
    *,
    field: str,
    updates: dict[str, Any],
    audit: tuple,
    along: Sequence[Along] = (),
) -> tuple[Ticket, dict[str, tuple | None]] | None:
    """COMPARE_AND_SET_SQL: lock the row matching WHERE, update it, write the audit record
    of the status `field` it changes (`audit`: actor, instant, action, new status, detail)
    and run the `along` statements; the updated ticket with what the alongs read back — or
    None when no row matched (and nothing was written)."""
    db = connections[DEFAULT_DB_ALIAS]  # the connection itself, not the per-access proxy
    meta = Ticket._meta
    columns, set_params = [], []
    for name, value in updates.items():
        model_field = meta.get_field(name)  # a concrete field: a column
        if isinstance(value, Model):
            value = value.pk
        columns.append(model_field.column)  # type: ignore[union-attr]
        set_params.append(model_field.get_db_prep_save(value, db))  # type: ignore[union-attr]
    statement = _cas_sql(
        where,
        field,
        tuple(columns),
        tuple((a.name, a.sql, tuple(a.columns)) for a in along),
    )
    actor_id, now, action, to_status, detail = audit
    audit_params = [action, actor_id, to_status, now, detail]
    along_params = [param for statement in along for param in statement.params]
    with prepared_cursor() as cursor:
        cursor.execute(statement, [*where_params, *set_params, *audit_params, *along_params])
        row = cursor.fetchone()
    if row is None:
        return None
    width = len(meta.concrete_fields)
    (ticket,) = instances(Ticket, [row[1 : 1 + width]])  # after old.previous
    read: dict[str, tuple | None] = {}
    end = 1 + width
    for along_statement in along:  # (`statement` is the SQL text above)
        if along_statement.columns:
            read_back = tuple(row[end : end + len(along_statement.columns)])
            read[along_statement.name] = None if all(c is None for c in read_back) else read_back
            end += len(along_statement.columns)
    return ticket, read
