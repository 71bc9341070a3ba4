"""The statements routing runs under a group's lock reach their rows through an index on
large tables (EXPLAIN, not timing): the group's lock by its primary key, a member's fold by
the load rows' index."""

import pytest
from django.db import connection
from django.utils import timezone

from handler_groups.models import HandlerGroup
from routing import loads, route
from tests.factories import HandlerGroupFactory

pytestmark = pytest.mark.django_db


def explain(statement: str, params) -> str:
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN " + statement, params)
        return "\n".join(row[0] for row in cursor.fetchall())


def test_the_group_lock_reads_one_group_by_its_primary_key():
    target = HandlerGroupFactory(name="target")
    HandlerGroup.objects.bulk_create(
        [HandlerGroup(name=f"bulk {i}") for i in range(20_000)], batch_size=5_000
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE oa_ticket_handler_group")
    found = explain(route._lock_group_sql(), [target.pk])
    assert "using oa_ticket_handler_group_pkey" in found, found
    assert "Seq Scan" not in found, found


def test_a_members_fold_finds_their_rows_by_the_load_index():
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO oa_handler_load (user_id, group_id, since, active, offers, assigned) "
            "SELECT mod(i, 5000), mod(i, 40), now(), 1, 0, 1 FROM generate_series(1, 200000) AS i"
        )
        cursor.execute("ANALYZE oa_handler_load")
    gone, kept = loads.fold_params(7, 7, timezone.now())
    found = explain(loads.FOLD_SQL, [*gone, *kept])
    assert "handler_load_idx" in found, found
    assert "Seq Scan" not in found, found
