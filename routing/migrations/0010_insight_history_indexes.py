"""An agent's presence spans by when they ended, for staffing's and queue metrics'
availability over a window at years of history. Built CONCURRENTLY (hence not atomic)."""

import django.db.models.functions.comparison
from django.conf import settings
from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ('routing', '0009_handler_load'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        AddIndexConcurrently(
            model_name='presencespan',
            index=models.Index(models.F('user'), models.F('state'), django.db.models.functions.comparison.Coalesce('ended', django.db.models.functions.comparison.Cast(models.Value('infinity'), models.DateTimeField())), name='presence_span_user_end_idx'),
        ),
    ]
