"""An existing database migrates forward without data loss: from the schema before the routing
app existed (presence and assignment events in handler_groups; replies counted all together)
to today's, with tickets, replies, groups, presence and assignment events in it."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

BEFORE = [
    ("ticketing", "0007_responded_time"),
    ("handler_groups", "0004_routing_names"),
    ("routing", None),
]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    nodes = [(app, name) for app, name in targets if name is not None]
    return MigrationExecutor(connection).loader.project_state(nodes).apps


@pytest.mark.django_db(transaction=True)
def test_a_database_from_before_the_routing_app_migrates_forward_with_its_data():
    old = _migrate(BEFORE)
    now = timezone.now()
    User = old.get_model("auth", "User")
    Group = old.get_model("handler_groups", "HandlerGroup")
    Presence = old.get_model("handler_groups", "AgentPresence")
    Event = old.get_model("handler_groups", "AssignmentEvent")
    Ticket = old.get_model("ticketing", "Ticket")
    Reply = old.get_model("ticketing", "TicketReply")
    ContentType = old.get_model("contenttypes", "ContentType")
    Permission = old.get_model("auth", "Permission")

    agent = User.objects.create(username="agent", password="!")
    customer = User.objects.create(username="customer", password="!")
    group = Group.objects.create(name="it", member_user_ids=str(agent.pk), assign_strategy=4)
    ticket = Ticket.objects.create(
        bill_code="TK1",
        title="VPN",
        content="down",
        priority=2,
        creator=customer,
        handler_group=group,
        handler=agent,
        process_status=2,
        ticket_status=2,
        submitted_time=now,
        reply_count=3,
    )
    for kind in (1, 2, 1):  # public, internal, public
        Reply.objects.create(ticket=ticket, author=agent, reply_type=kind, content="x")
    Presence.objects.create(
        user=agent, state="available", state_since=now, last_heartbeat=now, idle_since=now
    )
    Event.objects.create(
        group=group,
        ticket=ticket,
        user=agent,
        kind="assigned",
        strategy=4,
        pick_ms=0.2,
        created=now,
    )
    presence_type, _ = ContentType.objects.get_or_create(
        app_label="handler_groups", model="agentpresence"
    )
    Permission.objects.get_or_create(
        content_type=presence_type,
        codename="view_agentpresence",
        defaults={"name": "Can view agent presence"},
    )
    agent.user_permissions.add(
        Permission.objects.get(content_type=presence_type, codename="view_agentpresence")
    )

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    from django.contrib.auth import get_user_model

    from handler_groups.models import HandlerGroup
    from routing.models import AgentPresence, AssignmentEvent
    from ticketing.models import Ticket as TicketNow

    moved = AgentPresence.objects.get(pk=agent.pk)
    assert (moved.state, moved.last_heartbeat) == ("available", now)
    event = AssignmentEvent.objects.get()
    assert (event.group_id, event.ticket_id, event.user_id, event.pick_ms) == (
        group.pk,
        ticket.pk,
        agent.pk,
        0.2,
    )
    assert HandlerGroup.objects.get(pk=group.pk).member_ids == [agent.pk]
    migrated = TicketNow.objects.get(pk=ticket.pk)
    assert (migrated.reply_count, migrated.public_reply_count) == (3, 2)
    # Permissions on the moved models keep working: their content type moved with them.
    user = get_user_model().objects.get(pk=agent.pk)
    assert user.has_perm("routing.view_agentpresence")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT to_regclass('oa_agent_presence'), to_regclass('oa_assignment_event')"
        )
        assert cursor.fetchone() == ("oa_agent_presence", "oa_assignment_event")
