"""The bill code stays unique (the same constraint, oa_ticket_bill_bill_code_key, now declared
as a UniqueConstraint) and loses the varchar_pattern_ops index PostgreSQL's backend builds for
a unique CharField: no query uses it (bill codes are searched with icontains) and every status
change of every ticket wrote an entry in it. Only that index is dropped; the constraint and
its index are left as they are (nothing is rebuilt)."""

from django.db import migrations, models

LIKE_INDEX = "oa_ticket_bill_bill_code_67fbca67_like"


class Migration(migrations.Migration):
    dependencies = [("ticketing", "0010_redundant_fk_indexes")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="ticket",
                    name="bill_code",
                    field=models.CharField(
                        editable=False, max_length=32, verbose_name="bill code"
                    ),
                ),
                migrations.AddConstraint(
                    model_name="ticket",
                    constraint=models.UniqueConstraint(
                        fields=("bill_code",), name="oa_ticket_bill_bill_code_key"
                    ),
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    f'DROP INDEX IF EXISTS "{LIKE_INDEX}"',
                    reverse_sql=(
                        f'CREATE INDEX IF NOT EXISTS "{LIKE_INDEX}" '
                        "ON oa_ticket_bill (bill_code varchar_pattern_ops)"
                    ),
                )
            ],
        ),
    ]
