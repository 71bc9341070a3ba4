import django.contrib.postgres.indexes
from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations


class Migration(migrations.Migration):
    # Built without locking out writes: the ticket table is large.
    atomic = False

    dependencies = [("ticketing", "0017_categories_tags_fields")]

    operations = [
        AddIndexConcurrently(
            model_name="ticket",
            index=django.contrib.postgres.indexes.GinIndex(fields=["tags"], name="ticket_tags_idx"),
        ),
        AddIndexConcurrently(
            model_name="ticket",
            index=django.contrib.postgres.indexes.GinIndex(
                fields=["fields"], name="ticket_fields_idx", opclasses=["jsonb_path_ops"]
            ),
        ),
    ]
