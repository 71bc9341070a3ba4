from django.db import migrations

NAME = "mail: fetch every IMAP mailbox"


def install(apps, schema_editor):
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    every_30_seconds, _ = IntervalSchedule.objects.get_or_create(every=30, period="seconds")
    # A fetch not started within 25 s is superseded by the next one: no backlog of them.
    PeriodicTask.objects.get_or_create(
        name=NAME,
        defaults={"task": "mail.fetch_all", "interval": every_30_seconds, "expire_seconds": 25},
    )


def remove(apps, schema_editor):
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    PeriodicTask.objects.filter(name=NAME).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("mail", "0001_initial"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(install, remove)]
