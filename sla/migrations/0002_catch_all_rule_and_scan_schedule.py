from decimal import Decimal

from django.db import migrations

CATCH_ALL = "Catch-all (any priority, any category)"
SCAN_TASK = "sla: scan deadlines (warn / timeout)"


def install(apps, schema_editor):
    SlaRule = apps.get_model("sla", "SlaRule")
    if not SlaRule.objects.filter(sort=999, priority__isnull=True, category="").exists():
        SlaRule.objects.create(
            name=CATCH_ALL,
            priority=None,
            category="",
            response_hours=Decimal("24"),
            resolve_hours=Decimal("72"),
            warn_before_minutes=30,
            sort=999,
            status=1,
        )
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    every_minute, _ = IntervalSchedule.objects.get_or_create(every=1, period="minutes")
    PeriodicTask.objects.get_or_create(
        name=SCAN_TASK, defaults={"task": "sla.scan", "interval": every_minute}
    )


def remove(apps, schema_editor):
    apps.get_model("sla", "SlaRule").objects.filter(name=CATCH_ALL, sort=999).delete()
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(name=SCAN_TASK).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("sla", "0001_initial"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(install, remove)]
