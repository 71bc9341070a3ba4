"""config.db: the hottest statements are prepared on the server once per connection (and
not at all with DB_PREPARED_STATEMENTS=false), still logged as written; raw rows become
model instances as a queryset builds them."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from config.db import instances, prepared_cursor
from notifications.models import Notification
from tests.factories import HandlerGroupFactory, UserFactory

pytestmark = pytest.mark.django_db

STATEMENT = "SELECT id, name FROM oa_ticket_handler_group WHERE id = %s"


def prepared_here() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE %s",
            ["%FROM oa_ticket_handler_group WHERE id = $1%"],
        )
        return cursor.fetchone()[0]


def test_a_statement_is_prepared_once_and_logged_as_written():
    group = HandlerGroupFactory()
    with CaptureQueriesContext(connection) as queries:
        for _ in range(3):
            with prepared_cursor() as cursor:
                cursor.execute(STATEMENT, [group.pk])
                assert cursor.fetchone() == (group.pk, group.name)
    assert prepared_here() == 1
    assert [q["sql"] for q in queries.captured_queries] == [STATEMENT] * 3


def test_without_prepared_statements_nothing_is_prepared():
    group = HandlerGroupFactory()
    connection.ensure_connection()
    threshold = connection.connection.prepare_threshold
    connection.connection.prepare_threshold = None  # what DB_PREPARED_STATEMENTS=false sets
    try:
        for _ in range(3):
            with prepared_cursor() as cursor:
                cursor.execute(STATEMENT, [group.pk])
                assert cursor.fetchone() == (group.pk, group.name)
    finally:
        connection.connection.prepare_threshold = threshold
    assert prepared_here() == 0


def test_rows_become_instances_as_a_queryset_builds_them():
    """Through the fields' converters (a JSONField's text parsed), loaded from the database
    (a save() updates)."""
    note = Notification.objects.create(
        recipient=UserFactory(),
        template_code="t",
        title="x",
        content="y",
        params={"n": [1, 2]},
        dedupe_key="k",
        created=timezone.now(),
    )
    with prepared_cursor() as cursor:
        cursor.execute("SELECT * FROM oa_notification WHERE id = %s", [note.pk])
        columns = [column.name for column in cursor.description]
        (found,) = instances(Notification, cursor.fetchall(), columns)
    assert (found.pk, found.params, found.created) == (note.pk, {"n": [1, 2]}, note.created)
    assert not found._state.adding and found._state.db == "default"
    found.title = "z"
    found.save(update_fields=["title"])
    assert Notification.objects.filter(title="z").count() == 1
