from django.db import migrations


class Migration(migrations.Migration):
    """Bill codes are TK<yyyymmdd><n>; n comes from a sequence so concurrent submissions never
    collide and no row is written twice."""

    dependencies = [("ticketing", "0001_initial")]

    operations = [
        migrations.RunSQL(
            "CREATE SEQUENCE IF NOT EXISTS ticket_bill_code_seq START 1",
            "DROP SEQUENCE IF EXISTS ticket_bill_code_seq",
        )
    ]
