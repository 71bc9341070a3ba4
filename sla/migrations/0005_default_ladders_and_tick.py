"""Today's behaviour as the default ladder of every rule (warn `warn_before_minutes` before each
deadline, time out at each deadline), the events of every open ticket from its flags (what
already fired stays fired, a stopped clock's levels are void), and the per-second tick."""

from django.db import migrations
from django.utils import timezone

TICK_TASK = "sla: tick (escalation levels on the second)"

EVENTS_SQL = """
INSERT INTO oa_sla_event (ticket_id, clock, level, escalation_level_id, due_at, state, fired_at)
SELECT t.id, l.clock, l.position, l.id,
       CASE
         WHEN l.clock = 'resolve' AND t.sla_paused THEN NULL
         WHEN l.trigger = 'minutes_before' THEN d.deadline - make_interval(mins => l.value::int)
         ELSE d.deadline
       END,
       s.state,
       CASE WHEN s.state = 'fired' THEN LEAST(%(now)s, d.deadline) END
FROM oa_ticket_bill t
JOIN oa_sla_level l ON l.rule_id = t.sla_rule_id
CROSS JOIN LATERAL (SELECT CASE l.clock WHEN 'response' THEN t.response_deadline
                                        ELSE t.resolve_deadline END AS deadline) d
CROSS JOIN LATERAL (SELECT CASE
    WHEN l.clock = 'response' AND t.responded_time IS NOT NULL THEN 'void'
    WHEN l.trigger = 'minutes_before' AND l.clock = 'response' AND t.response_warned THEN 'fired'
    WHEN l.trigger = 'minutes_before' AND l.clock = 'resolve' AND t.resolve_warned THEN 'fired'
    WHEN l.trigger = 'minutes_before' AND l.clock = 'response' AND t.response_timeout THEN 'void'
    WHEN l.trigger = 'minutes_before' AND l.clock = 'resolve' AND t.resolve_timeout THEN 'void'
    WHEN l.trigger = 'minutes_after' AND l.clock = 'response' AND t.response_timeout THEN 'fired'
    WHEN l.trigger = 'minutes_after' AND l.clock = 'resolve' AND t.resolve_timeout THEN 'fired'
    ELSE 'pending' END AS state) s
WHERE t.process_status = 2 AND t.ticket_status IN (1, 2, 3) AND d.deadline IS NOT NULL
ON CONFLICT DO NOTHING
"""


def install(apps, schema_editor):
    SlaRule = apps.get_model("sla", "SlaRule")
    EscalationLevel = apps.get_model("sla", "EscalationLevel")
    for rule in SlaRule.objects.all():
        if EscalationLevel.objects.filter(rule=rule).exists():
            continue
        warn = rule.warn_before_minutes
        EscalationLevel.objects.bulk_create(
            EscalationLevel(
                rule=rule,
                position=position,
                clock=clock,
                trigger=trigger,
                value=value,
                notify=["handler", "leader"],
            )
            for position, clock, trigger, value in (
                (1, "response", "minutes_before", warn),
                (2, "response", "minutes_after", 0),
                (3, "resolve", "minutes_before", warn),
                (4, "resolve", "minutes_after", 0),
            )
        )
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(EVENTS_SQL, {"now": timezone.now()})

    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    every_second, _ = IntervalSchedule.objects.get_or_create(every=1, period="seconds")
    PeriodicTask.objects.get_or_create(
        name=TICK_TASK,
        defaults={"task": "sla.tick", "interval": every_second, "expire_seconds": 2},
    )


def remove(apps, schema_editor):
    apps.get_model("sla", "SlaEvent").objects.all().delete()
    apps.get_model("sla", "EscalationLevel").objects.all().delete()
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(name=TICK_TASK).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("sla", "0004_escalation"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(install, remove)]
