from django.db import migrations

SCHEDULES = [
    # name, task, every, period
    ("routing: presence sweep (offline, wrap-up end)", "handler_groups.presence_sweep", 15,
     "seconds"),
    ("routing: offer timeouts, overflow, drain", "ticketing.routing_sweep", 30, "seconds"),
    ("routing: reconcile Redis from PostgreSQL", "handler_groups.reconcile", 5, "minutes"),
]


def install(apps, schema_editor):
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    for name, task, every, period in SCHEDULES:
        interval, _ = IntervalSchedule.objects.get_or_create(every=every, period=period)
        PeriodicTask.objects.get_or_create(name=name, defaults={"task": task, "interval": interval})


def remove(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(
        name__in=[s[0] for s in SCHEDULES]
    ).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("handler_groups", "0002_handlergroup_daily_cap_per_member_and_more"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(install, remove)]
