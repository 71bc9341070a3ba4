"""A filter on one custom field over a large table is an index scan of ticket_fields_idx
(GIN, jsonb_path_ops: `fields @> {...}`), and the categories migration (ticketing 0019)
goes forward and back on a database holding tickets."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from tests.factories import StaffFactory, UserFactory
from ticketing.fields import filter_fields
from ticketing.models import FieldType, Ticket, TicketField
from workflow.selectors import pool_for

TICKETS = 150_000


def fill_tickets(n: int, creator_id: int) -> None:
    """n tickets in one statement, most closed as in a desk that has run a while; each holds
    a model and a number of copies (1 in 1000 share one) and a third a tray list."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO oa_ticket_bill (bill_code, title, content, priority, category,
                creator_id, process_status, ticket_status, submitted_time,
                response_timeout, resolve_timeout, reply_count, tags, fields)
            SELECT 'BULK' || i, 't', 'c', 1 + i %% 4, 'printer', %s, 2,
                   CASE WHEN i %% 100 = 0 THEN 1 ELSE 5 END, now(), false, false, 0, '{}',
                   jsonb_build_object('model', 'm' || (i %% 50), 'copies', i %% 1000)
                   || CASE WHEN i %% 3 = 0 THEN '{"trays": ["a4", "a3"]}'::jsonb
                           ELSE '{}'::jsonb END
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


@pytest.mark.django_db
def test_a_filter_on_one_field_over_many_tickets_uses_the_fields_index():
    TicketField.objects.create(key="copies", label="Copies", type=FieldType.NUMBER)
    fill_tickets(TICKETS, UserFactory().pk)
    filtered = filter_fields(Ticket.objects.all(), {"copies": "7"})
    assert "ticket_fields_idx" in plan(filtered), plan(filtered)
    assert filtered.count() == TICKETS // 1000
    pool = pool_for(StaffFactory(), view="all", fields={"copies": "7"})
    assert "ticket_fields_idx" in plan(pool), plan(pool)


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return MigrationExecutor(connection).loader.project_state(targets).apps


BEFORE_CATEGORIES = [("ticketing", "0018_tags_fields_indexes"), ("sla", "0008_merged_result")]


@pytest.mark.django_db(transaction=True)
def test_the_categories_migration_goes_forward_and_back_with_tickets_in_the_database():
    old = _migrate(BEFORE_CATEGORIES)
    User = old.get_model("auth", "User")
    OldTicket = old.get_model("ticketing", "Ticket")
    Rule = old.get_model("sla", "SlaRule")
    customer = User.objects.create(username="customer", password="!")
    now = timezone.now()
    for code, category in [("TK1", "vpn"), ("TK2", "printer"), ("TK3", "vpn"), ("TK4", "")]:
        OldTicket.objects.create(
            bill_code=code,
            title="t",
            content="c",
            priority=2,
            category=category,
            creator=customer,
            submitted_time=now,
        )
    Rule.objects.create(name="mail", category="mail", response_hours=1, resolve_hours=2)
    Rule.objects.create(name="any", category="", response_hours=1, resolve_hours=2, sort=9)
    before = sorted(OldTicket.objects.values_list("bill_code", "category"))

    forward = _migrate([("ticketing", "0019_categories_from_tickets")])
    Category = forward.get_model("ticketing", "Category")
    assert sorted(Category.objects.values_list("name", flat=True)) == ["mail", "printer", "vpn"]
    assert all(c.active and c.handler_group_id is None for c in Category.objects.all())
    Ticket19 = forward.get_model("ticketing", "Ticket")
    assert sorted(Ticket19.objects.values_list("bill_code", "category")) == before

    back = _migrate(BEFORE_CATEGORIES)
    assert not back.get_model("ticketing", "Category").objects.exists()
    assert (
        sorted(back.get_model("ticketing", "Ticket").objects.values_list("bill_code", "category"))
        == before
    )

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
    from ticketing.models import Category as CategoryNow

    assert sorted(CategoryNow.objects.values_list("name", flat=True)) == ["mail", "printer", "vpn"]
