# Each clock's result as a value of its own (met, breached, closed before due, no such clock),
# and whether the outcome was written at a close before completion. Existing outcomes all come
# from completions: their results follow from the met booleans.

from django.db import migrations, models
from django.db.models import Case, Value, When

RESULTS = [
    ("met", "met"),
    ("breached", "breached"),
    ("closed_before_due", "closed before due"),
    ("none", "no such clock"),
]


def _result(met_field: str) -> Case:
    return Case(
        When(**{met_field: True}, then=Value("met")),
        When(**{met_field: False}, then=Value("breached")),
        default=Value("none"),
    )


def fill_results(apps, schema_editor):
    SlaOutcome = apps.get_model("sla", "SlaOutcome")
    SlaOutcome.objects.update(
        response_result=_result("response_met"),
        resolve_result=_result("resolve_met"),
        closed_before_completion=False,
    )


class Migration(migrations.Migration):
    dependencies = [
        ("sla", "0002_catch_all_rule_and_scan_schedule"),
    ]

    operations = [
        migrations.AddField(
            model_name="slaoutcome",
            name="closed_before_completion",
            field=models.BooleanField(
                default=False,
                help_text="Closed by the applicant or staff while still being handled.",
                verbose_name="closed before completion",
            ),
        ),
        migrations.AddField(
            model_name="slaoutcome",
            name="response_result",
            field=models.CharField(
                choices=RESULTS, default="none", max_length=20, verbose_name="response result"
            ),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="slaoutcome",
            name="resolve_result",
            field=models.CharField(
                choices=RESULTS, default="none", max_length=20, verbose_name="resolve result"
            ),
            preserve_default=False,
        ),
        migrations.AlterField(
            model_name="slaoutcome",
            name="completed_time",
            field=models.DateTimeField(
                help_text=(
                    "The instant the clocks were finalised: completion, or the close when the "
                    "ticket was closed unfinished."
                )
            ),
        ),
        migrations.RunPython(fill_results, migrations.RunPython.noop, elidable=False),
        migrations.AddConstraint(
            model_name="slaoutcome",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(("response_met", True), ("response_result", "met")),
                    models.Q(("response_met", False), ("response_result", "breached")),
                    models.Q(
                        ("response_met__isnull", True),
                        ("response_result__in", ["closed_before_due", "none"]),
                    ),
                    _connector="OR",
                ),
                name="sla_outcome_response_result_matches_met",
            ),
        ),
        migrations.AddConstraint(
            model_name="slaoutcome",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(("resolve_met", True), ("resolve_result", "met")),
                    models.Q(("resolve_met", False), ("resolve_result", "breached")),
                    models.Q(
                        ("resolve_met__isnull", True),
                        ("resolve_result__in", ["closed_before_due", "none"]),
                    ),
                    _connector="OR",
                ),
                name="sla_outcome_resolve_result_matches_met",
            ),
        ),
    ]
