"""The search index: trigrams of UPPER(bill_code || ' ' || title || ' ' || category) (ticketing/search.py, whose
search_text() is this very expression, so that the planner matches the two); and the approval
queue's, only the tickets awaiting approval in their order; and the pool's by age.

Built CONCURRENTLY (so the migration is not atomic): on a million tickets it takes a minute or
two, during which tickets are written as usual. pg_trgm ships with PostgreSQL (contrib) and is
a trusted extension, so the app's own role may create it. Written in SQL: Django's OpClass
puts the operator class inside the expression's parentheses for this index."""

from django.contrib.postgres.operations import AddIndexConcurrently, TrigramExtension
from django.db import migrations, models

CREATE = """
CREATE INDEX CONCURRENTLY IF NOT EXISTS ticket_search_trgm_idx ON oa_ticket_bill
USING gin ((UPPER(("bill_code" || ' ' || "title" || ' ' || "category"))) gin_trgm_ops)
"""
DROP = "DROP INDEX CONCURRENTLY IF EXISTS ticket_search_trgm_idx"


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("ticketing", "0011_bill_code_without_like_index"),
    ]

    operations = [
        TrigramExtension(),
        migrations.RunSQL(CREATE, DROP),
        AddIndexConcurrently(
            model_name="ticket",
            index=models.Index(
                condition=models.Q(("process_status", 1)),
                fields=["submitted_time", "id"],
                name="ticket_approvals_idx",
            ),
        ),
        AddIndexConcurrently(
            model_name="ticket",
            index=models.Index(
                fields=["process_status", "submitted_time", "id"], name="ticket_age_idx"
            ),
        ),
        # Statistics of the search expression, so that the planner knows a common word from
        # a rare one (a common one is found walking the list's order, a rare one by index).
        migrations.RunSQL("ANALYZE oa_ticket_bill", migrations.RunSQL.noop),
    ]
