"""Macros through the API: steps validated on save (400 naming `actions[<i>].<param>`), the
scopes, and applying one to a ticket — every step through its own service as one
transaction with one history entry, and a step that may not run (its permission, checked
first; the ticket's state; its input) answering with its status and index while nothing
of the run is left (the ticket, its records, replies, tags, notifications re-read)."""

import pytest

from notifications.models import Notification
from tests.toolbox.macros_cast import NOW, macro, make_cast
from ticketing.models import Tag, Ticket, TicketField, TicketRecord, TicketReply
from toolbox.models import Macro
from workflow import services

pytestmark = pytest.mark.django_db

LIST = "/api/macros/"


def apply_url(ticket, item):
    item_id = item if isinstance(item, int) else item.pk
    return f"/api/tickets/{ticket.pk}/macros/{item_id}/apply/"


@pytest.fixture
def cast(applicant, approver):
    return make_cast(applicant, approver)


@pytest.fixture
def field(db):
    return TicketField.objects.create(key="asset", label="Asset", type="text")


def state(ticket):
    """Everything a refused run must leave as it was."""
    return (
        Ticket.objects.filter(pk=ticket.pk).values().get(),
        list(TicketRecord.objects.filter(ticket=ticket).order_by("id").values()),
        list(TicketReply.objects.filter(ticket=ticket).order_by("id").values()),
        list(Tag.objects.order_by("name").values_list("name", "ticket_count")),
        list(Notification.objects.order_by("id").values_list("id", flat=True)),
    )


# Saving


def test_an_agent_saves_a_macro_with_its_steps_in_their_stored_shape(api, cast, field):
    actions = [
        {"action": "reply", "text": "Hi {{ applicant.name }}", "internal": False},
        {"action": "pause"},
        {"action": "set_priority", "priority": 4},
        {"action": "transfer", "group_id": cast["other_group"].pk},
        {"action": "add_tags", "tags": ["  Printer ", "awaiting   PART", "printer"]},
        {"action": "remove_tags", "tags": ["new"]},
        {"action": "set_field", "key": "asset", "value": "PR-7"},
        {"action": "resume"},
        {"action": "complete"},
    ]
    response = api.as_user(cast["handlers"][0]).post(
        LIST, {"name": "Everything", "actions": actions}, format="json"
    )
    assert response.status_code == 201, response.json()
    stored = Macro.objects.get(pk=response.json()["id"]).actions
    assert stored[4] == {"action": "add_tags", "tags": ["printer", "awaiting part"]}
    assert stored[0] == {"action": "reply", "text": "Hi {{ applicant.name }}", "internal": False}
    assert [s["action"] for s in response.json()["actions"]] == [a["action"] for a in actions]


@pytest.mark.parametrize(
    ("actions", "field_name"),
    [
        ([], "actions"),
        ("reply", "actions"),
        ([{"action": "dance"}], "actions[0].action"),
        (["pause"], "actions[0].action"),
        ([{"action": "pause"}, {"action": "reply"}], "actions[1].text"),
        ([{"action": "reply", "text": "  "}], "actions[0].text"),
        ([{"action": "reply", "text": "Hi {{ ticket.secret }}"}], "actions[0].text"),
        ([{"action": "reply", "text": "Hi", "internal": "yes"}], "actions[0].internal"),
        ([{"action": "pause", "priority": 2}], "actions[0].priority"),
        ([{"action": "set_priority", "priority": 5}], "actions[0].priority"),
        ([{"action": "set_priority", "priority": True}], "actions[0].priority"),
        ([{"action": "transfer"}], "actions[0].group_id"),
        ([{"action": "transfer", "group_id": 999999}], "actions[0].group_id"),
        ([{"action": "add_tags", "tags": []}], "actions[0].tags"),
        ([{"action": "add_tags", "tags": ["x" * 51]}], "actions[0].tags"),
        ([{"action": "remove_tags", "tags": [" "]}], "actions[0].tags"),
        ([{"action": "set_field", "key": "nope", "value": 1}], "actions[0].key"),
        ([{"action": "set_field", "key": "asset"}], "actions[0].value"),
    ],
)
def test_a_bad_step_is_a_400_naming_it_and_nothing_is_saved(api, cast, field, actions, field_name):
    response = api.as_user(cast["handlers"][0]).post(
        LIST, {"name": "Bad", "actions": actions}, format="json"
    )
    assert response.status_code == 400
    assert field_name in response.json()["errors"], response.json()
    assert not Macro.objects.exists()


def test_macro_scopes_follow_the_same_rules(api, cast):
    pause = [{"action": "pause"}]
    member = api.as_user(cast["handlers"][0])
    response = member.post(LIST, {"name": "x", "actions": pause, "scope": "global"}, format="json")
    assert response.status_code == 403
    assert (
        api.as_user(cast["applicant"])
        .post(LIST, {"name": "x", "actions": pause}, format="json")
        .status_code
        == 403
    )
    assert not Macro.objects.exists()
    ours = macro(cast["leader"], pause, scope="group", group=cast["group"])
    theirs = macro(cast["other_leader"], pause, scope="group", group=cast["other_group"])
    member = api.as_user(cast["handlers"][0])
    assert [m["id"] for m in member.get(LIST).json()] == [ours.pk]
    assert member.get(f"{LIST}{theirs.pk}/").status_code == 404
    assert member.patch(f"{LIST}{ours.pk}/", {"name": "Mine"}, format="json").status_code == 403
    assert member.delete(f"{LIST}{ours.pk}/").status_code == 403
    assert Macro.objects.get(pk=ours.pk).name == "Printer: awaiting part"
    leader = api.as_user(cast["leader"])
    response = leader.patch(f"{LIST}{ours.pk}/", {"actions": [{"action": "resume"}]}, format="json")
    assert response.status_code == 200 and response.json()["actions"] == [{"action": "resume"}]
    bad = leader.patch(f"{LIST}{ours.pk}/", {"actions": [{"action": "fly"}]}, format="json")
    assert bad.status_code == 400 and "actions[0].action" in bad.json()["errors"]
    assert Macro.objects.get(pk=ours.pk).actions == [{"action": "resume"}]
    assert leader.delete(f"{LIST}{ours.pk}/").status_code == 204


# Applying


def test_applying_runs_every_step_with_one_history_entry(api, cast, field):
    ticket = cast["ticket"]()
    agent = cast["handlers"][0]
    item = macro(
        agent,
        [
            {
                "action": "reply",
                "text": "Dear {{ applicant.name }}, {{ ticket.bill_code }} waits "
                "for a part. {{ agent.name }}",
                "internal": False,
            },
            {"action": "reply", "text": "Part ordered", "internal": True},
            {"action": "set_priority", "priority": 4},
            {"action": "add_tags", "tags": ["printer", "awaiting part"]},
            {"action": "set_field", "key": "asset", "value": "PR-7"},
            {"action": "pause"},
        ],
    )
    before = TicketRecord.objects.filter(ticket=ticket).order_by("-id").first().pk
    response = api.as_user(agent).post(apply_url(ticket, item))
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["id"] == ticket.pk and body["priority"] == 4
    ticket.refresh_from_db()
    assert ticket.priority == 4 and ticket.sla_paused
    assert ticket.tags == ["printer", "awaiting part"] and ticket.fields == {"asset": "PR-7"}
    replies = list(TicketReply.objects.filter(ticket=ticket).order_by("id"))
    assert [r.reply_type for r in replies][-2:] == [1, 2]
    assert replies[-2].content == f"Dear Ada Byron, {ticket.bill_code} waits for a part. Bob Hale"
    records = list(TicketRecord.objects.filter(ticket=ticket, pk__gt=before).order_by("id"))
    run = records[-1]
    assert run.action == "macro" and run.actor_id == agent.pk
    assert run.detail["macro"] == "Printer: awaiting part" and run.detail["macro_id"] == item.pk
    assert [s["action"] for s in run.detail["steps"]] == [
        "reply",
        "reply",
        "set_priority",
        "add_tags",
        "set_field",
        "pause",
    ]
    assert [r.action for r in records[:-1]] == [
        "reply",
        "reply",
        "priority",
        "tags",
        "fields",
        "sla_pause",
    ]
    assert all(r.detail["macro_run"] == run.pk for r in records[:-1])
    assert Tag.objects.get(name="printer").ticket_count == 1


def test_a_macro_failing_half_way_changes_nothing_and_names_the_step(api, cast):
    # Complete before accept: offered to handler0 (its handler), not accepted yet, the
    # fourth step is illegal now, after three that ran.
    ticket = cast["ticket"](accept=False)
    agent = cast["handlers"][0]
    services.ticket_transfer(ticket_id=ticket.pk, user=cast["leader"], handler_id=agent.pk)
    Tag.objects.create(name="printer", ticket_count=0)
    item = macro(
        cast["staff"],
        [
            {"action": "reply", "text": "On it", "internal": False},
            {"action": "add_tags", "tags": ["printer"]},
            {"action": "set_priority", "priority": 1},
            {"action": "complete"},
        ],
        scope="global",
    )
    before = state(ticket)
    response = api.as_user(agent).post(apply_url(ticket, item))
    assert response.status_code == 409
    body = response.json()
    assert body["code"] == "conflict" and body["step"] == 3 and body["action"] == "complete"
    assert body["detail"]
    assert state(ticket) == before


def test_a_step_the_caller_may_not_take_is_a_403_before_anything_runs(api, cast):
    # A member may tag and reply but not transfer (the leader or staff do).
    ticket = cast["ticket"]()
    member = cast["handlers"][0]
    item = macro(
        member,
        [
            {"action": "add_tags", "tags": ["x"]},
            {"action": "transfer", "group_id": cast["other_group"].pk},
        ],
    )
    before = state(ticket)
    response = api.as_user(member).post(apply_url(ticket, item))
    assert response.status_code == 403
    assert response.json()["step"] == 1 and response.json()["action"] == "transfer"
    assert state(ticket) == before
    # The other member is on the team but not its handler: complete is theirs to refuse.
    other = macro(cast["handlers"][1], [{"action": "complete"}])
    response = api.as_user(cast["handlers"][1]).post(apply_url(ticket, other))
    assert response.status_code == 403 and response.json()["step"] == 0
    assert state(ticket) == before


def test_a_step_whose_input_the_service_refuses_is_a_400_naming_the_step(api, cast):
    ticket = cast["ticket"]()
    agent = cast["handlers"][0]
    TicketField.objects.create(key="count", label="Count", type="number")
    item = macro(
        agent,
        [
            {"action": "reply", "text": "x", "internal": True},
            {"action": "set_field", "key": "count", "value": "many"},
        ],
    )
    before = state(ticket)
    response = api.as_user(agent).post(apply_url(ticket, item))
    assert response.status_code == 400
    body = response.json()
    assert body["step"] == 1 and body["action"] == "set_field" and "fields.count" in body["errors"]
    assert state(ticket) == before


def test_a_transfer_step_hands_the_ticket_to_the_group(api, cast):
    ticket = cast["ticket"]()
    item = macro(
        cast["leader"],
        [
            {"action": "reply", "text": "Facilities will help", "internal": True},
            {"action": "transfer", "group_id": cast["other_group"].pk},
        ],
        scope="group",
        group=cast["group"],
    )
    response = api.as_user(cast["leader"]).post(apply_url(ticket, item))
    assert response.status_code == 200, response.json()
    ticket.refresh_from_db()
    assert ticket.handler_group_id == cast["other_group"].pk and ticket.handler_id is None


def test_who_may_apply_a_macro(api, cast):
    ticket = cast["ticket"]()
    pause = [{"action": "pause"}]
    everyone = macro(cast["staff"], pause, scope="global")
    theirs = macro(cast["other_leader"], pause, scope="group", group=cast["other_group"])
    someones = macro(cast["handlers"][1], pause)
    before = state(ticket)
    # Not on the ticket's team: a handler of another group does not see it (404).
    assert api.as_user(cast["outsider"]).post(apply_url(ticket, everyone)).status_code == 404
    # The applicant sees the ticket but may use no macro (404), nor is on the team.
    assert api.as_user(cast["applicant"]).post(apply_url(ticket, everyone)).status_code == 404
    own = macro(cast["applicant"], pause)
    assert api.as_user(cast["applicant"]).post(apply_url(ticket, own)).status_code == 403
    # Another group's macro, a colleague's personal one, none at all: 404.
    client = api.as_user(cast["handlers"][0])
    assert client.post(apply_url(ticket, theirs)).status_code == 404
    assert client.post(apply_url(ticket, someones)).status_code == 404
    assert client.post(apply_url(ticket, 999999)).status_code == 404
    assert state(ticket) == before
    assert client.post(apply_url(ticket, everyone)).status_code == 200


def test_macro_apply_takes_an_explicit_now(cast):
    from toolbox.macros import macro_apply

    ticket = cast["ticket"]()
    agent = cast["handlers"][0]
    item = macro(agent, [{"action": "set_priority", "priority": 1}])
    macro_apply(ticket_id=ticket.pk, macro_id=item.pk, user=agent, now=NOW)
    run = TicketRecord.objects.filter(ticket=ticket, action="macro").get()
    assert run.created == NOW
    assert TicketRecord.objects.get(ticket=ticket, action="priority").created == NOW


def test_a_rolled_back_transfer_leaves_the_routing_state_in_redis_as_it_was(cast):
    """A longest-idle group's pick takes the agent from its Redis pool at once, outside the
    transaction: the run's rollback is followed by the group's reconciliation."""
    from routing import idle_pool, reconcile
    from tests.factories import HandlerGroupFactory, UserFactory
    from toolbox.macros import MacroStepFailed, macro_apply

    desk_agent = UserFactory(username="desk_agent")
    desk = HandlerGroupFactory(
        name="desk", members=[desk_agent], assign_strategy=4, offer_timeout_seconds=300
    )
    ticket = cast["ticket"]()
    reconcile.reconcile_group(group=desk, now=NOW)
    before = idle_pool.snapshot(desk.pk)
    assert [user for user, _score in before["idle"]] == [desk_agent.pk]
    item = macro(
        cast["staff"],
        [{"action": "transfer", "group_id": desk.pk}, {"action": "resume"}],
        scope="global",
    )
    with pytest.raises(MacroStepFailed) as failed:
        macro_apply(ticket_id=ticket.pk, macro_id=item.pk, user=cast["staff"], now=NOW)
    assert failed.value.step == 1 and failed.value.status == 409
    assert Ticket.objects.get(pk=ticket.pk).handler_group_id == cast["group"].pk
    assert idle_pool.snapshot(desk.pk) == before
    # (The same transfer alone does take the agent: the check above is not vacuous.)
    alone = macro(cast["staff"], [{"action": "transfer", "group_id": desk.pk}], scope="global")
    macro_apply(ticket_id=ticket.pk, macro_id=alone.pk, user=cast["staff"], now=NOW)
    assert Ticket.objects.get(pk=ticket.pk).handler_id == desk_agent.pk
    assert idle_pool.snapshot(desk.pk) != before


def test_the_macro_list_costs_the_same_few_queries_however_many_it_holds(
    api, cast, django_assert_max_num_queries
):
    for i in range(20):
        macro(
            cast["leader"], [{"action": "pause"}], scope="group", group=cast["group"], name=f"m{i}"
        )
    client = api.as_user(cast["handlers"][0])
    client.get(LIST)
    with django_assert_max_num_queries(6):
        response = client.get(LIST)
    assert len(response.json()) == 20
