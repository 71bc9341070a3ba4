"""The outbox sweep every 15 s (was every minute): with the 30 s delivery lease, a delivery
in flight when its worker died goes again within 45 s (notifications/delivery.py)."""

from django.db import migrations

NAME = "notifications: outbox sweep"


def every(seconds: int, period: str):
    def change(apps, schema_editor):
        IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
        PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
        interval, _ = IntervalSchedule.objects.get_or_create(every=seconds, period=period)
        PeriodicTask.objects.update_or_create(
            name=NAME, defaults={"task": "notifications.outbox_sweep", "interval": interval}
        )

    return change


install = every(15, "seconds")  # tests/conftest.py re-installs reference data by this name


class Migration(migrations.Migration):
    dependencies = [
        ("notifications", "0006_chinese_templates"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(install, every(1, "minutes"))]
