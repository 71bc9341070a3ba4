from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    # Built without locking out writes: the ticket table is large.
    atomic = False

    dependencies = [("ticketing", "0015_merged_into")]

    operations = [
        AddIndexConcurrently(
            model_name="ticket",
            index=models.Index(
                condition=models.Q(("merged_into__isnull", False)),
                fields=["merged_into"],
                name="ticket_merged_into_idx",
            ),
        ),
    ]
