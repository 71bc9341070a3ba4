"""The sweep that recovers simulations whose worker died or whose message was lost
(insight/services.py simulation_sweep), every 30 s."""

from django.db import migrations

NAME = "insight: simulation recovery sweep"


def install(apps, schema_editor):
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    every, _ = IntervalSchedule.objects.get_or_create(every=30, period="seconds")
    PeriodicTask.objects.get_or_create(
        name=NAME, defaults={"task": "insight.simulation_sweep", "interval": every}
    )


def remove(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(name=NAME).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("insight", "0003_simulation_recovery_fields"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(install, remove)]
