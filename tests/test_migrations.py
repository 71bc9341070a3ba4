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


def _applied_state(app_label):
    """The project state with `app_label` at its last migration applied in the database."""
    executor = MigrationExecutor(connection)
    applied = sorted(
        name for app, name in executor.recorder.applied_migrations() if app == app_label
    )
    leaf = next(
        node
        for node in reversed(
            executor.loader.graph.forwards_plan(max(executor.loader.graph.leaf_nodes(app_label)))
        )
        if node[0] == app_label and node[1] in applied
    )
    return executor.loader.project_state([leaf]).apps


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
    from routing.models import AgentPresence, AssignmentEvent, HandlerLoad
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
    # The handlers' load rows start from the tickets already there: the agent holds one
    # ticket, offered and not accepted, never assigned by routing.
    assert list(
        HandlerLoad.objects.values_list("user_id", "group_id", "active", "offers", "assigned")
    ) == [(agent.pk, group.pk, 1, 1, 0)]
    # Permissions on the moved models keep working: their content type moved with them.
    user = get_user_model().objects.get(pk=agent.pk)
    assert user.has_perm("routing.view_agentpresence")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT to_regclass('oa_agent_presence'), to_regclass('oa_assignment_event')"
        )
        assert cursor.fetchone() == ("oa_agent_presence", "oa_assignment_event")


SLA_BEFORE = [
    ("sla", "0003_outcome_results"),
    ("handler_groups", "0007_offer_timeout_at_most_a_day"),
]


@pytest.mark.django_db(transaction=True)
def test_rules_get_the_default_ladder_and_open_tickets_their_events_from_the_flags():
    """Before ladders: one warning and one timeout per clock, remembered as flags on the
    ticket. After: every rule has the default ladder, and every open ticket one event per
    level — fired where its flag says it fired, void where the clock stopped or the warning
    was missed, pending (re-timed) otherwise."""
    from datetime import timedelta

    old = _migrate(SLA_BEFORE)
    now = timezone.now()
    User = old.get_model("auth", "User")
    Rule = old.get_model("sla", "SlaRule")
    # Ticketing as the database has it now (its later migrations depend on later SLA ones).
    Ticket = _applied_state("ticketing").get_model("ticketing", "Ticket")

    customer = User.objects.create(username="customer", password="!")
    rule = Rule.objects.create(
        name="high", priority=3, response_hours=1, resolve_hours=4, warn_before_minutes=20
    )
    deadline = {
        "response_deadline": now + timedelta(hours=1),
        "resolve_deadline": now + timedelta(hours=4),
    }

    def ticket(code, **fields):
        values = {
            "bill_code": code, "title": "t", "content": "c", "priority": 3,
            "creator_id": customer.pk, "process_status": 2, "ticket_status": 3,
            "submitted_time": now, "sla_rule_id": rule.pk, **deadline, **fields,
        }  # fmt: skip
        return Ticket.objects.create(**values)

    fresh = ticket("TK1", ticket_status=1)
    warned = ticket("TK2", ticket_status=1, response_warned=True)
    answered = ticket("TK3", responded_time=now, resolve_warned=True, resolve_timeout=True)
    missed = ticket("TK4", ticket_status=1, response_timeout=True)
    paused = ticket("TK5", responded_time=now, sla_paused=True)
    done = ticket("TK6", ticket_status=4, responded_time=now)

    _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())

    from sla.models import EscalationLevel, SlaEvent

    assert [
        (lv.position, lv.clock, lv.trigger, int(lv.value))
        for lv in EscalationLevel.objects.filter(rule_id=rule.pk)
    ] == [
        (1, "response", "minutes_before", 20),
        (2, "response", "minutes_after", 0),
        (3, "resolve", "minutes_before", 20),
        (4, "resolve", "minutes_after", 0),
    ]

    def states(t):
        return dict(SlaEvent.objects.filter(ticket_id=t.pk).values_list("level", "state"))

    assert states(fresh) == {1: "pending", 2: "pending", 3: "pending", 4: "pending"}
    assert states(warned) == {1: "fired", 2: "pending", 3: "pending", 4: "pending"}
    assert states(answered) == {1: "void", 2: "void", 3: "fired", 4: "fired"}
    assert states(missed) == {1: "void", 2: "fired", 3: "pending", 4: "pending"}
    assert states(paused)[3] == "pending"
    assert SlaEvent.objects.get(ticket_id=paused.pk, level=3).due_at is None  # paused
    assert states(done) == {}  # a finished ticket has nothing left to fire
    due = SlaEvent.objects.get(ticket_id=fresh.pk, level=1).due_at
    assert due == deadline["response_deadline"] - timedelta(minutes=20)


@pytest.mark.django_db(transaction=True)
def test_the_bill_code_stays_unique_without_its_pattern_index():
    """ticketing 0011: the LIKE-prefix index goes, the unique constraint stays (same name,
    same index: nothing rebuilt), and back again."""
    from django.db import IntegrityError, transaction

    def indexes():
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT indexname FROM pg_indexes WHERE tablename = 'oa_ticket_bill' "
                "AND indexdef LIKE '%%(bill_code%%' AND indexdef NOT LIKE '%%USING gin%%' "
                "ORDER BY indexname"  # (the search's trigram index is 0012's, not this one)
            )
            return [name for (name,) in cursor.fetchall()]

    old = _migrate([("ticketing", "0010_redundant_fk_indexes")])
    assert indexes() == [
        "oa_ticket_bill_bill_code_67fbca67_like",
        "oa_ticket_bill_bill_code_key",
    ]
    User = old.get_model("auth", "User")
    Ticket = old.get_model("ticketing", "Ticket")
    customer = User.objects.create(username="customer", password="!")
    fields = {"title": "t", "content": "c", "priority": 2, "submitted_time": timezone.now()}
    Ticket.objects.create(bill_code="TK1", creator=customer, **fields)

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    from django.contrib.auth import get_user_model

    from ticketing.models import Ticket as TicketNow

    assert indexes() == ["oa_ticket_bill_bill_code_key"]
    customer_now = get_user_model().objects.get(pk=customer.pk)
    with pytest.raises(IntegrityError, match="oa_ticket_bill_bill_code_key"), transaction.atomic():
        TicketNow.objects.create(bill_code="TK1", creator=customer_now, **fields)
    assert list(TicketNow.objects.values_list("bill_code", flat=True)) == ["TK1"]

    _migrate([("ticketing", "0010_redundant_fk_indexes")])
    assert indexes() == [
        "oa_ticket_bill_bill_code_67fbca67_like",
        "oa_ticket_bill_bill_code_key",
    ]
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
