"""A saved view's list and its count on a large table go through the indexes its filters
name (EXPLAIN, not timing): a tag through ticket_tags_idx, "response due within the hour"
through the SLA scan's partial index, and all the views' counts in one statement."""

import pytest
from django.db import connection
from django.utils import timezone

from tests.factories import HandlerGroupFactory, UserFactory
from toolbox import saved_views
from toolbox.models import SavedView

pytestmark = pytest.mark.django_db

SIZE = 150_000


def fill_tickets(n: int, creator_id: int, group_ids: list[int]) -> None:
    """n approved tickets over the groups in one statement, most of them closed; 1 in 1,000
    tagged "printer", 1 in 1,000 open with a response deadline within the hour."""
    groups = "ARRAY[" + ",".join(str(g) for g in group_ids) + "]::bigint[]"
    with connection.cursor() as cursor:
        cursor.execute("SELECT setseed(0.42)")
        cursor.execute(
            f"""
            INSERT INTO oa_ticket_bill (bill_code, title, content, priority, category,
                creator_id, handler_group_id, process_status, ticket_status, submitted_time,
                response_timeout, resolve_timeout, reply_count, tags, fields,
                response_deadline)
            SELECT 'VIEW' || i, 't', 'c', 1 + i %% 4, '', %s,
                   ({groups})[1 + floor(random() * {len(group_ids)})::int],
                   2,
                   CASE WHEN i %% 1000 = 7 THEN 1 WHEN i %% 100 < 3 THEN 3 ELSE 5 END,
                   now(), false, false, 0,
                   CASE WHEN i %% 1000 = 3 THEN ARRAY['printer']::varchar(50)[]
                        WHEN i %% 10 = 0 THEN ARRAY['misc']::varchar(50)[]
                        ELSE ARRAY[]::varchar(50)[] END,
                   '{{}}'::jsonb,
                   CASE WHEN i %% 1000 = 7 THEN now() + interval '30 minutes'
                        WHEN i %% 1000 < 500 THEN now() - interval '30 days' END
            FROM generate_series(1, %s) AS i
            """,
            [creator_id, n],
        )
        cursor.execute("ANALYZE oa_ticket_bill")


def plan(sql: str, params) -> str:
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN " + sql, params)
        return "\n".join(row[0] for row in cursor.fetchall())


def queryset_plan(queryset) -> str:
    return plan(*queryset.query.sql_with_params())


@pytest.fixture
def large():
    member = UserFactory(username="member")
    groups = [HandlerGroupFactory(name=f"g{i}") for i in range(10)]
    for group in groups[:3]:
        group.member_ids = [member.pk]
        group.save()
    fill_tickets(SIZE, member.pk, [g.pk for g in groups])
    return member


def test_views_lists_use_the_indexes_their_filters_name(large):
    tagged = SavedView.objects.create(name="Printers", owner=large, filters={"tag": "printer"})
    due = SavedView.objects.create(
        name="Due soon", owner=large, filters={"sla": "response_due_1h"}, sort="sla"
    )
    now = timezone.now()

    found = queryset_plan(saved_views.view_tickets(large, tagged, now=now)[:20])
    assert "ticket_tags_idx" in found, found
    found = queryset_plan(saved_views.view_tickets(large, due, now=now)[:20])
    assert "ticket_sla_response_idx" in found, found


def test_the_counts_statement_reads_through_the_indexes(large):
    views = [
        SavedView.objects.create(name="Printers", owner=large, filters={"tag": "printer"}),
        SavedView.objects.create(name="Due", owner=large, filters={"sla": "response_due_1h"}),
    ]
    now = timezone.now()

    statement, params, counted = saved_views.count_statement(large, views, now=now)
    with connection.cursor() as cursor:
        found = plan(statement.as_string(cursor.connection), params)

    assert counted == [v.pk for v in views]
    assert "ticket_tags_idx" in found and "ticket_sla_response_idx" in found, found
    assert "Seq Scan" not in found, found
    counts = saved_views.view_counts(large, views, now=now, limit=10_000)
    # The members' three groups of ten hold about 3/10 of each 150.
    assert all(0 < counts[v.pk].value < 150 for v in views), counts
