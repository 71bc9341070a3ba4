"""AgentPresence and AssignmentEvent, moved here from handler_groups with their tables
(oa_agent_presence, oa_assignment_event): state only, no row is touched. Their content types
move too, so permissions granted on them keep working."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


MOVED_MODELS = ["agentpresence", "assignmentevent"]


def move_content_types(apps, schema_editor):
    content_type = apps.get_model("contenttypes", "ContentType")
    for model in MOVED_MODELS:
        if not content_type.objects.filter(app_label="routing", model=model).exists():
            content_type.objects.filter(app_label="handler_groups", model=model).update(
                app_label="routing"
            )


def restore_content_types(apps, schema_editor):
    content_type = apps.get_model("contenttypes", "ContentType")
    content_type.objects.filter(app_label="routing", model__in=MOVED_MODELS).update(
        app_label="handler_groups"
    )


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('auth', '0012_alter_user_first_name_max_length'),
        ('handler_groups', '0005_move_presence_and_events_to_routing'),
        ('ticketing', '0008_public_reply_count_and_handle_permission'),
        ('contenttypes', '0002_remove_content_type_name'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='AgentPresence',
                    fields=[
                        ('user', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='presence', serialize=False, to=settings.AUTH_USER_MODEL)),
                        ('state', models.CharField(choices=[('offline', 'Offline'), ('available', 'Available'), ('busy', 'Busy'), ('wrap_up', 'Wrap Up')], default='offline', max_length=10)),
                        ('state_since', models.DateTimeField()),
                        ('last_heartbeat', models.DateTimeField(blank=True, null=True)),
                        ('online_since', models.DateTimeField(blank=True, null=True)),
                        ('idle_since', models.DateTimeField(blank=True, null=True)),
                        ('wrap_up_until', models.DateTimeField(blank=True, null=True)),
                    ],
                    options={
                        'verbose_name': 'agent presence',
                        'verbose_name_plural': 'agent presence',
                        'db_table': 'oa_agent_presence',
                        'indexes': [models.Index(fields=['state', 'last_heartbeat'], name='presence_sweep_idx')],
                    },
                ),
                migrations.CreateModel(
                    name='AssignmentEvent',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('kind', models.CharField(choices=[('assigned', 'Assigned'), ('missed', 'Missed'), ('overflowed', 'Overflowed')], max_length=12)),
                        ('strategy', models.PositiveSmallIntegerField()),
                        ('pick_ms', models.FloatField(blank=True, null=True)),
                        ('overflowed', models.BooleanField(default=False)),
                        ('reclaimed', models.BooleanField(default=False)),
                        ('created', models.DateTimeField()),
                        ('group', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='events', to='handler_groups.handlergroup')),
                        ('ticket', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='ticketing.ticket')),
                        ('user', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'oa_assignment_event',
                        'indexes': [models.Index(fields=['group', 'created'], name='assignment_event_group_idx'), models.Index(fields=['user', 'kind', 'created'], name='assignment_event_user_idx')],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(move_content_types, restore_content_types),
    ]
