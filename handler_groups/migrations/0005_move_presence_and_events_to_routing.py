from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('handler_groups', '0004_routing_names'),
    ]

    # AgentPresence and AssignmentEvent moved to the routing app with their tables: only
    # Django's idea of which app owns them changes (routing/migrations/0001_initial.py).
    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField(
                    model_name='assignmentevent',
                    name='group',
                ),
                migrations.RemoveField(
                    model_name='assignmentevent',
                    name='ticket',
                ),
                migrations.RemoveField(
                    model_name='assignmentevent',
                    name='user',
                ),
                migrations.DeleteModel(
                    name='AgentPresence',
                ),
                migrations.DeleteModel(
                    name='AssignmentEvent',
                ),
            ],
            database_operations=[],
        ),
    ]
