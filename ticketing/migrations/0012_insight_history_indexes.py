"""Indexes for the supervisors' reads at years of history (insight's queue metrics and
staffing): a group's approvals by time, and a group's and a handler's tickets by when they
stopped being worked. Built CONCURRENTLY, so a desk with a million tickets keeps taking
writes while they build (hence not atomic)."""

import django.db.models.functions.comparison
from django.conf import settings
from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ('handler_groups', '0010_translatable_labels'),
        ('sla', '0006_translatable_labels'),
        ('ticketing', '0011_bill_code_without_like_index'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        AddIndexConcurrently(
            model_name='ticket',
            index=models.Index(fields=['handler_group', 'approved_time'], name='ticket_group_approved_idx'),
        ),
        AddIndexConcurrently(
            model_name='ticket',
            index=models.Index(models.F('handler_group'), django.db.models.functions.comparison.Coalesce('completed_time', 'closed_time', django.db.models.functions.comparison.Cast(models.Value('infinity'), models.DateTimeField())), name='ticket_group_finished_idx'),
        ),
        AddIndexConcurrently(
            model_name='ticket',
            index=models.Index(models.F('handler'), django.db.models.functions.comparison.Coalesce('completed_time', 'closed_time', django.db.models.functions.comparison.Cast(models.Value('infinity'), models.DateTimeField())), name='ticket_handler_finished_idx'),
        ),
    ]
