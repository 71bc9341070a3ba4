"""The free-text categories become rows: one Category per distinct name the tickets and the
SLA rules use (the tickets keep their names; nothing of theirs changes either way). Back:
the rows go (the table itself goes with 0017)."""

from django.db import migrations


def forward(apps, schema_editor):
    Category = apps.get_model("ticketing", "Category")
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT DISTINCT category FROM oa_ticket_bill WHERE category <> '' "
            "UNION SELECT DISTINCT category FROM oa_sla_rule WHERE category <> ''"
        )
        names = sorted(name for (name,) in cursor.fetchall() if name.strip())
    existing = set(Category.objects.values_list("name", flat=True))
    Category.objects.bulk_create(
        [Category(name=name) for name in dict.fromkeys(names) if name not in existing]
    )


def backward(apps, schema_editor):
    apps.get_model("ticketing", "Category").objects.all().delete()


class Migration(migrations.Migration):
    dependencies = [("ticketing", "0018_tags_fields_indexes"), ("sla", "0008_merged_result")]

    operations = [migrations.RunPython(forward, backward, elidable=False)]
