"""The ticket's creator and handler lose their single-column indexes: ticket_creator_idx
(creator, -id) and ticket_handler_idx (handler, ticket_status) lead with the same column and
serve every lookup and every foreign-key check those did, and each index costs an entry on
every status change of every ticket. Only the indexes are dropped (the foreign keys stay as
they are: no constraint is re-validated over the whole table)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

INDEXES = {
    "oa_ticket_bill_creator_id_4838138f": "creator_id",
    "oa_ticket_bill_handler_id_744f5c9b": "handler_id",
}


class Migration(migrations.Migration):
    dependencies = [
        ("ticketing", "0009_translatable_labels"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="ticket",
                    name="creator",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="created_tickets",
                        to=settings.AUTH_USER_MODEL,
                        verbose_name="creator",
                    ),
                ),
                migrations.AlterField(
                    model_name="ticket",
                    name="handler",
                    field=models.ForeignKey(
                        blank=True,
                        db_index=False,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="handled_tickets",
                        to=settings.AUTH_USER_MODEL,
                        verbose_name="handler",
                    ),
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    f'DROP INDEX IF EXISTS "{name}"',
                    reverse_sql=f'CREATE INDEX IF NOT EXISTS "{name}" ON oa_ticket_bill ({column})',
                )
                for name, column in INDEXES.items()
            ],
        ),
    ]
