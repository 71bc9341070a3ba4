from django.db import migrations


def install(apps, schema_editor):
    NotifyTemplate = apps.get_model("notifications", "NotifyTemplate")
    NotifyTemplate.objects.get_or_create(
        code="ticket-overflow",
        defaults={
            "name": "Nobody available (to the leader)",
            "title": "Nobody available for {{billCode}}",
            "content": "Ticket {{billCode}} ({{title}}) has waited {{minutes}} minutes in "
            "{{group}} with nobody available to take it. Please assign it.",
            "channels": ["in_app", "email"],
            "sample_params": {"billCode": "TK20260101000042", "title": "VPN down",
                              "minutes": "15", "group": "IT support"},
        },
    )


def remove(apps, schema_editor):
    apps.get_model("notifications", "NotifyTemplate").objects.filter(
        code="ticket-overflow"
    ).delete()


class Migration(migrations.Migration):
    dependencies = [("notifications", "0003_outbox_sweep_schedule")]

    operations = [migrations.RunPython(install, remove)]
