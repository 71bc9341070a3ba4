"""The pool query must use the pool index on a large table, and a transition's statement
the primary key (EXPLAIN, not timing)."""

import pytest
from django.db import connection
from django.db.models import Q
from django.utils import timezone

from tests.factories import HandlerGroupFactory, UserFactory
from ticketing import lifecycle, transitions
from ticketing.models import Ticket
from workflow.selectors import pool_for

pytestmark = pytest.mark.django_db


def fill_tickets(n: int, creator_id: int, group_ids: list[int]) -> None:
    """n tickets spread over the groups, written in one statement. As in a helpdesk that has
    run for a while, most are closed: 1 in 100 waits in the pool, 1 in 100 awaits approval."""
    groups = "ARRAY[" + ",".join(str(g) for g in group_ids) + "]::bigint[]"
    with connection.cursor() as cursor:
        cursor.execute("SELECT setseed(0.42)")
        cursor.execute(
            f"""
            INSERT INTO oa_ticket_bill (bill_code, title, content, priority, category,
                creator_id, handler_group_id, process_status, ticket_status, submitted_time,
                response_timeout, resolve_timeout, reply_count)
            SELECT 'BULK' || i, 't', 'c', 1 + i %% 4, '', %s,
                   CASE WHEN random() < 0.02 THEN NULL
                        ELSE ({groups})[1 + floor(random() * {len(group_ids)})::int] END,
                   CASE WHEN i %% 100 = 1 THEN 1 ELSE 2 END,
                   CASE WHEN i %% 100 = 0 THEN 1 WHEN i %% 100 = 1 THEN 0
                        WHEN i %% 100 < 5 THEN 3 ELSE 5 END,
                   now(), false, false, 0
            FROM generate_series(1, %s) AS i
            """,
            [creator_id, n],
        )
        cursor.execute("ANALYZE oa_ticket_bill")


def plan(queryset) -> str:
    sql, params = queryset.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN " + sql, params)
        return "\n".join(row[0] for row in cursor.fetchall())


def test_pending_pool_query_uses_the_pool_index():
    member = UserFactory(username="member")
    groups = [HandlerGroupFactory(name=f"g{i}") for i in range(40)]
    groups[3].member_ids = [member.pk]
    groups[3].save()
    fill_tickets(200_000, member.pk, [g.pk for g in groups])

    pending = plan(pool_for(member, view="pending")[:20])
    assert "ticket_pool_idx" in pending, pending
    # "all" matches a few percent of the table: walking the primary key backwards until 20
    # rows match is the cheaper plan there, and the planner rightly takes it; never a seq scan.
    everything = plan(pool_for(member, view="all")[:20])
    assert "Seq Scan" not in everything, everything


def test_a_transitions_compare_and_set_finds_its_ticket_by_the_primary_key():
    """COMPARE_AND_SET_SQL locks one row: on a large table it reaches it through the primary
    key (one row locked, no scan), with the ORM's condition and without."""
    creator = UserFactory(username="creator")
    groups = [HandlerGroupFactory(name=f"g{i}") for i in range(4)]
    fill_tickets(200_000, creator.pk, [g.pk for g in groups])
    ticket_id = Ticket.objects.order_by("pk").values_list("pk", flat=True)[100_000]
    for transition, condition in (
        (lifecycle.ACCEPT, None),
        (lifecycle.ACCEPT, Q(accepted_time__isnull=True)),
    ):
        where, where_params = transitions._where(ticket_id, transition, condition)
        statement = transitions._cas_sql(where, transition.field, (transition.field,), ())
        audit = [transition.name, creator.pk, transition.target, timezone.now(), "{}"]
        with connection.cursor() as cursor:
            cursor.execute("EXPLAIN " + statement, [*where_params, transition.target, *audit])
            found = "\n".join(row[0] for row in cursor.fetchall())
        assert "using oa_ticket_bill_pkey on oa_ticket_bill" in found, found
        assert "Seq Scan" not in found, found
