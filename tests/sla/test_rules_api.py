"""The rules API: staff write, group leaders read. Rules carry their escalation ladder nested
(`levels`); level errors name the index and field as the queue-ranking errors do. A change
applies to new tickets; the recompute action shows (dry run) or applies what changes for the
open ones."""

from datetime import datetime, timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from handler_groups.models import GroupStatus
from sla.models import Calendar, EscalationLevel, EventState, SlaEvent, SlaRule
from tests.factories import HandlerGroupFactory, StaffFactory, UserFactory
from tests.sla.conftest import T0
from ticketing.models import TicketStatus

pytestmark = pytest.mark.django_db

URL = "/api/sla/rules/"

RESPONSE_AT_HALF = {
    "clock": "response",
    "trigger": "percent_elapsed",
    "value": 50,
    "notify": ["handler"],
}


def _snapshot() -> list[tuple]:
    """Every rule and its ladder, to show that a refused request changed nothing."""
    return [
        (
            rule.pk,
            rule.name,
            rule.priority,
            rule.response_hours,
            rule.resolve_hours,
            rule.warn_before_minutes,
            rule.sort,
            rule.status,
            rule.calendar_id,
            [
                (
                    level.pk,
                    level.position,
                    level.clock,
                    level.trigger,
                    level.value,
                    level.notify,
                    level.template_code,
                    level.reassign_group_id,
                    level.raise_priority,
                )
                for level in rule.levels.order_by("position")
            ],
        )
        for rule in SlaRule.objects.order_by("pk")
    ]


def _ladder(rule: SlaRule) -> list[tuple]:
    return [
        (lv.position, lv.clock, lv.trigger, lv.value, lv.notify)
        for lv in rule.levels.order_by("position")
    ]


@pytest.fixture
def staff_api(api):
    return api.as_user(StaffFactory(username="rules-staff"))


@pytest.fixture
def escalation_group(db):
    return HandlerGroupFactory(name="second line")


# Create and read ------------------------------------------------------------------------------


def test_create_with_nested_levels_keeps_their_order_and_numbers_them(staff_api, escalation_group):
    body = {
        "name": "urgent network",
        "priority": 4,
        "category": "network",
        "response_hours": "1.5",
        "resolve_hours": 8,
        "warn_before_minutes": 20,
        "sort": 5,
        "levels": [
            {**RESPONSE_AT_HALF, "position": 7},  # a position sent is ignored
            {
                "clock": "resolve",
                "trigger": "minutes_after",
                "value": "30",
                "notify": ["leader", "escalation_contact"],
                "template_code": "ticket-sla-timeout",
                "reassign_group_id": escalation_group.pk,
                "raise_priority": True,
            },
            {"clock": "resolve", "trigger": "minutes_before", "value": 0},
        ],
    }
    created = staff_api.post(URL, body, format="json")
    assert created.status_code == 201, created.json()
    rule_id = created.json()["id"]

    got = staff_api.get(f"{URL}{rule_id}/").json()
    assert created.json() == got
    assert {k: got[k] for k in ("name", "priority", "category", "status", "calendar_id")} == {
        "name": "urgent network",
        "priority": 4,
        "category": "network",
        "status": 1,
        "calendar_id": None,
    }
    assert (got["response_hours"], got["resolve_hours"]) == ("1.50", "8.00")
    levels = got["levels"]
    assert [lv["position"] for lv in levels] == [1, 2, 3]
    assert [(lv["clock"], lv["trigger"], lv["value"]) for lv in levels] == [
        ("response", "percent_elapsed", "50.00"),
        ("resolve", "minutes_after", "30.00"),
        ("resolve", "minutes_before", "0.00"),
    ]
    assert levels[1] == {
        "id": levels[1]["id"],
        "position": 2,
        "clock": "resolve",
        "trigger": "minutes_after",
        "value": "30.00",
        "notify": ["leader", "escalation_contact"],
        "template_code": "ticket-sla-timeout",
        "reassign_group_id": escalation_group.pk,
        "raise_priority": True,
    }
    # Defaults of a level: the handler and the leader, default template, no move, no raise.
    assert levels[2]["notify"] == ["handler", "leader"]
    assert (levels[2]["template_code"], levels[2]["reassign_group_id"]) == ("", None)
    assert levels[2]["raise_priority"] is False
    ids = list(
        EscalationLevel.objects.filter(rule_id=rule_id)
        .order_by("position")
        .values_list("id", flat=True)
    )
    assert [lv["id"] for lv in levels] == ids

    listed = staff_api.get(URL).json()["results"]
    assert rule_id in [r["id"] for r in listed]


def test_create_without_levels_gets_the_default_ladder(staff_api):
    created = staff_api.post(
        URL,
        {"name": "medium", "priority": 2, "resolve_hours": 24, "warn_before_minutes": 45},
        format="json",
    )
    assert created.status_code == 201, created.json()
    levels = created.json()["levels"]
    assert [(lv["position"], lv["clock"], lv["trigger"], lv["value"]) for lv in levels] == [
        (1, "response", "minutes_before", "45.00"),
        (2, "response", "minutes_after", "0.00"),
        (3, "resolve", "minutes_before", "45.00"),
        (4, "resolve", "minutes_after", "0.00"),
    ]
    assert all(lv["notify"] == ["handler", "leader"] for lv in levels)


def test_create_with_an_empty_ladder_has_no_levels(staff_api):
    created = staff_api.post(URL, {"name": "quiet", "levels": []}, format="json")
    assert created.status_code == 201
    assert created.json()["levels"] == []
    assert not EscalationLevel.objects.filter(rule_id=created.json()["id"]).exists()


def test_create_with_a_calendar_and_percent_200(staff_api):
    calendar = Calendar.objects.create(name="Office")
    created = staff_api.post(
        URL,
        {
            "name": "office hours",
            "calendar_id": calendar.pk,
            "levels": [{**RESPONSE_AT_HALF, "value": 200}],
        },
        format="json",
    )
    assert created.status_code == 201, created.json()
    assert created.json()["calendar_id"] == calendar.pk
    assert created.json()["levels"][0]["value"] == "200.00"


# Validation: the error names the level's index and field; nothing is written -------------------


def _bad_levels(escalation_group):
    disabled = HandlerGroupFactory(name="retired", status=GroupStatus.DISABLED)
    return {
        "percent 0": ({"trigger": "percent_elapsed", "value": 0}, "value"),
        "percent 201": ({"trigger": "percent_elapsed", "value": 201}, "value"),
        "minutes -1": ({"trigger": "minutes_before", "value": -1}, "value"),
        "minutes after -1": ({"trigger": "minutes_after", "value": "-1"}, "value"),
        "unknown notify": ({"notify": ["handler", "boss"]}, "notify"),
        "duplicate notify": ({"notify": ["leader", "handler", "leader"]}, "notify"),
        "disabled group": ({"reassign_group_id": disabled.pk}, "reassign_group_id"),
        "missing group": ({"reassign_group_id": 987654}, "reassign_group_id"),
        "unknown template": ({"template_code": "no-such-template"}, "template_code"),
        "unknown clock": ({"clock": "lunch"}, "clock"),
        "unknown trigger": ({"trigger": "whenever"}, "trigger"),
    }


BAD_CASES = [
    "percent 0",
    "percent 201",
    "minutes -1",
    "minutes after -1",
    "unknown notify",
    "duplicate notify",
    "disabled group",
    "missing group",
    "unknown template",
    "unknown clock",
    "unknown trigger",
]


@pytest.mark.parametrize("case", BAD_CASES)
def test_create_with_a_bad_level_names_index_and_field_and_writes_nothing(
    staff_api, escalation_group, case
):
    change, field = _bad_levels(escalation_group)[case]
    bad = {
        "clock": "resolve",
        "trigger": "minutes_after",
        "value": 10,
        "notify": ["leader"],
        **change,
    }
    before = _snapshot()
    response = staff_api.post(
        URL, {"name": "bad", "levels": [RESPONSE_AT_HALF, bad]}, format="json"
    )
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "invalid_argument"
    assert list(body["errors"]) == ["levels"]
    assert list(body["errors"]["levels"]) == ["1"]
    assert list(body["errors"]["levels"]["1"]) == [field]
    assert isinstance(body["errors"]["levels"]["1"][field], list)
    assert body["errors"]["levels"]["1"][field][0]
    assert _snapshot() == before


@pytest.mark.parametrize("case", BAD_CASES)
def test_patch_with_a_bad_level_names_index_and_field_and_changes_nothing(
    staff_api, escalation_group, rule, case
):
    change, field = _bad_levels(escalation_group)[case]
    bad = {"clock": "response", "trigger": "minutes_before", "value": 5, **change}
    before = _snapshot()
    response = staff_api.patch(
        f"{URL}{rule.pk}/",
        {"name": "renamed", "levels": [RESPONSE_AT_HALF, RESPONSE_AT_HALF, bad]},
        format="json",
    )
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert list(errors) == ["levels"]
    assert list(errors["levels"]) == ["2"]
    assert list(errors["levels"]["2"]) == [field]
    assert errors["levels"]["2"][field][0]
    assert _snapshot() == before


def test_every_bad_level_is_reported_with_its_own_index(staff_api):
    before = _snapshot()
    response = staff_api.post(
        URL,
        {
            "name": "bad",
            "levels": [
                {**RESPONSE_AT_HALF, "value": 0},
                RESPONSE_AT_HALF,
                {"clock": "resolve", "trigger": "minutes_after", "value": 5, "notify": ["x"]},
                "not a level",
            ],
        },
        format="json",
    )
    assert response.status_code == 400
    errors = response.json()["errors"]["levels"]
    assert list(errors) == ["0", "2", "3"]
    assert errors["0"] == {
        "value": ["A percentage of the clock must be more than 0 and at most 200."]
    }
    assert list(errors["2"]) == ["notify"]
    assert list(errors["3"]) == ["non_field_errors"]
    assert _snapshot() == before


def test_a_patched_level_must_be_complete(staff_api, rule):
    """A PATCH of the rule is partial; each level in it replaces the ladder whole, so its
    required fields stay required."""
    before = _snapshot()
    response = staff_api.patch(
        f"{URL}{rule.pk}/", {"levels": [{"trigger": "minutes_before", "value": 5}]}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["errors"] == {"levels": {"0": {"clock": ["This field is required."]}}}
    assert _snapshot() == before


def test_at_most_20_levels(staff_api):
    before = _snapshot()
    response = staff_api.post(
        URL, {"name": "long", "levels": [RESPONSE_AT_HALF] * 21}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["errors"] == {"levels": ["At most 20 levels per rule; got 21."]}
    assert _snapshot() == before
    assert (
        staff_api.post(
            URL, {"name": "ok", "levels": [RESPONSE_AT_HALF] * 20}, format="json"
        ).status_code
        == 201
    )


def test_bad_calendar_id_is_named(staff_api, rule):
    before = _snapshot()
    created = staff_api.post(URL, {"name": "x", "calendar_id": 424242}, format="json")
    assert created.status_code == 400
    assert created.json() == {
        "code": "invalid_argument",
        "errors": {"calendar_id": ["No calendar with id 424242."]},
    }
    patched = staff_api.patch(f"{URL}{rule.pk}/", {"calendar_id": 424242}, format="json")
    assert patched.status_code == 400
    assert list(patched.json()["errors"]) == ["calendar_id"]
    assert _snapshot() == before


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("priority", 5),
        ("priority", 0),
        ("response_hours", -1),
        ("resolve_hours", "-0.5"),
        ("warn_before_minutes", -1),
        ("status", 2),
        ("name", ""),
    ],
)
def test_bad_rule_fields_are_named(staff_api, rule, field, value):
    before = _snapshot()
    response = staff_api.patch(f"{URL}{rule.pk}/", {field: value}, format="json")
    assert response.status_code == 400
    assert list(response.json()["errors"]) == [field]
    assert _snapshot() == before


def test_create_needs_a_name(staff_api):
    response = staff_api.post(URL, {"priority": 2}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"] == {"name": ["This field is required."]}


# Who may do what ----------------------------------------------------------------------------


def test_a_group_leader_reads_but_cannot_write(api, rule):
    leader = UserFactory(username="lead")
    HandlerGroupFactory(name="led", leader=leader)
    client = api.as_user(leader)
    assert client.get(URL).status_code == 200
    got = client.get(f"{URL}{rule.pk}/")
    assert got.status_code == 200
    assert len(got.json()["levels"]) == 4

    before = _snapshot()
    attempts = [
        client.post(URL, {"name": "mine"}, format="json"),
        client.patch(f"{URL}{rule.pk}/", {"name": "mine", "levels": []}, format="json"),
        client.delete(f"{URL}{rule.pk}/"),
        client.post(f"{URL}{rule.pk}/recompute/"),
    ]
    for response in attempts:
        assert response.status_code == 403
        assert response.json() == {
            "code": "permission_denied",
            "detail": "Only staff may change SLA rules.",
        }
    assert _snapshot() == before


def test_a_plain_user_is_refused_everything(api, rule):
    client = api.as_user(UserFactory(username="plain"))
    before = _snapshot()
    for response in [
        client.get(URL),
        client.get(f"{URL}{rule.pk}/"),
        client.post(URL, {"name": "mine"}, format="json"),
        client.patch(f"{URL}{rule.pk}/", {"name": "mine"}, format="json"),
        client.delete(f"{URL}{rule.pk}/"),
        client.post(f"{URL}{rule.pk}/recompute/?dry_run=1"),
    ]:
        assert response.status_code == 403
        assert response.json()["detail"] == "Only staff and group leaders may read SLA rules."
    assert _snapshot() == before


def test_a_group_member_who_leads_nothing_is_refused(api, rule):
    member = UserFactory(username="member")
    HandlerGroupFactory(name="desk", members=[member])
    assert api.as_user(member).get(URL).status_code == 403


def test_anonymous_is_401(api, rule):
    for response in [
        api.get(URL),
        api.get(f"{URL}{rule.pk}/"),
        api.post(URL, {"name": "x"}, format="json"),
        api.patch(f"{URL}{rule.pk}/", {"name": "x"}, format="json"),
        api.delete(f"{URL}{rule.pk}/"),
        api.post(f"{URL}{rule.pk}/recompute/"),
    ]:
        assert response.status_code == 401
        assert response.json()["code"] == "not_authenticated"


def test_unknown_and_non_numeric_ids_are_json_404s(staff_api):
    for path in (f"{URL}987654/", f"{URL}abc/", f"{URL}987654/recompute/"):
        response = staff_api.post(path) if path.endswith("recompute/") else staff_api.get(path)
        assert response.status_code == 404, path
        assert response.json()["code"] == "not_found"


def test_put_is_not_offered(staff_api, rule):
    response = staff_api.put(f"{URL}{rule.pk}/", {"name": "x"}, format="json")
    assert response.status_code == 405


# Update -------------------------------------------------------------------------------------


def test_patch_levels_replaces_the_ladder(staff_api, rule):
    old_ids = set(rule.levels.values_list("id", flat=True))
    response = staff_api.patch(
        f"{URL}{rule.pk}/",
        {
            "levels": [
                {"clock": "resolve", "trigger": "percent_elapsed", "value": "75.5"},
                RESPONSE_AT_HALF,
            ]
        },
        format="json",
    )
    assert response.status_code == 200, response.json()
    levels = response.json()["levels"]
    assert [(lv["position"], lv["clock"], lv["value"]) for lv in levels] == [
        (1, "resolve", "75.50"),
        (2, "response", "50.00"),
    ]
    assert _ladder(rule) == [
        (1, "resolve", "percent_elapsed", Decimal("75.50"), ["handler", "leader"]),
        (2, "response", "percent_elapsed", Decimal("50.00"), ["handler"]),
    ]
    assert not old_ids & set(rule.levels.values_list("id", flat=True))

    emptied = staff_api.patch(f"{URL}{rule.pk}/", {"levels": []}, format="json")
    assert emptied.status_code == 200
    assert emptied.json()["levels"] == []
    assert not rule.levels.exists()


def test_patch_without_levels_keeps_the_ladder(staff_api, rule):
    staff_api.patch(f"{URL}{rule.pk}/", {"levels": [RESPONSE_AT_HALF]}, format="json")
    ladder = _ladder(rule)
    response = staff_api.patch(
        f"{URL}{rule.pk}/",
        {"name": "high, renamed", "resolve_hours": 6, "warn_before_minutes": 5},
        format="json",
    )
    assert response.status_code == 200
    rule.refresh_from_db()
    assert (rule.name, rule.resolve_hours, rule.warn_before_minutes) == (
        "high, renamed",
        Decimal("6.00"),
        5,
    )
    assert rule.priority == 3 and rule.sort == 10  # untouched fields stay
    assert _ladder(rule) == ladder


def test_patch_of_warn_before_minutes_moves_a_default_ladder(staff_api, rule):
    response = staff_api.patch(f"{URL}{rule.pk}/", {"warn_before_minutes": 40}, format="json")
    assert response.status_code == 200
    assert [lv["value"] for lv in response.json()["levels"]] == [
        "40.00",
        "0.00",
        "40.00",
        "0.00",
    ]


def test_patch_calendar_and_status(staff_api, rule):
    calendar = Calendar.objects.create(name="Office")
    response = staff_api.patch(
        f"{URL}{rule.pk}/", {"calendar_id": calendar.pk, "status": 0}, format="json"
    )
    assert response.status_code == 200
    assert (response.json()["calendar_id"], response.json()["status"]) == (calendar.pk, 0)
    cleared = staff_api.patch(f"{URL}{rule.pk}/", {"calendar_id": None}, format="json")
    assert cleared.json()["calendar_id"] is None


def test_a_rule_change_applies_to_new_tickets_only(staff_api, approved, rule):
    old = approved(submitted=T0)
    staff_api.patch(f"{URL}{rule.pk}/", {"resolve_hours": 8}, format="json")
    new = approved(submitted=T0)
    old.refresh_from_db()
    assert old.resolve_deadline == T0 + timedelta(hours=4)
    assert new.resolve_deadline == T0 + timedelta(hours=8)


# Delete -------------------------------------------------------------------------------------


def test_delete_an_unused_rule(staff_api, rule):
    level_ids = list(rule.levels.values_list("id", flat=True))
    response = staff_api.delete(f"{URL}{rule.pk}/")
    assert response.status_code == 204
    assert not SlaRule.objects.filter(pk=rule.pk).exists()
    assert not EscalationLevel.objects.filter(pk__in=level_ids).exists()
    assert staff_api.get(f"{URL}{rule.pk}/").status_code == 404


def test_delete_a_rule_open_tickets_run_on_is_a_conflict(staff_api, approved, rule):
    ticket = approved()
    assert ticket.sla_rule_id == rule.pk
    before = _snapshot()
    response = staff_api.delete(f"{URL}{rule.pk}/")
    assert response.status_code == 409
    body = response.json()
    assert body["code"] == "conflict"
    assert "1 open ticket(s)" in body["detail"]
    assert "status=0" in body["detail"]
    assert _snapshot() == before
    ticket.refresh_from_db()
    assert ticket.sla_rule_id == rule.pk


def test_delete_a_rule_only_closed_tickets_used(staff_api, approved, rule):
    ticket = approved()
    type(ticket).objects.filter(pk=ticket.pk).update(ticket_status=TicketStatus.COMPLETED)
    response = staff_api.delete(f"{URL}{rule.pk}/")
    assert response.status_code == 204
    ticket.refresh_from_db()
    assert ticket.sla_rule_id is None


# Recompute ----------------------------------------------------------------------------------


def test_recompute_dry_run_shows_then_apply_changes(staff_api, approved, rule):
    start = timezone.now().replace(microsecond=0)
    ticket = approved(submitted=start)
    assert ticket.resolve_deadline == start + timedelta(hours=4)
    pending_before = {
        (e.clock, e.level): e.due_at
        for e in SlaEvent.objects.filter(ticket=ticket, state=EventState.PENDING)
    }
    assert pending_before[("resolve", 4)] == start + timedelta(hours=4)

    patched = staff_api.patch(f"{URL}{rule.pk}/", {"resolve_hours": 8}, format="json")
    assert patched.status_code == 200
    ticket.refresh_from_db()
    assert ticket.resolve_deadline == start + timedelta(hours=4)  # open tickets stay

    dry = staff_api.post(f"{URL}{rule.pk}/recompute/?dry_run=1")
    assert dry.status_code == 200, dry.json()
    body = dry.json()
    assert body["dry_run"] is True
    assert (body["examined"], body["moved"], body["events_changed"], body["newly_breached"]) == (
        1,
        1,
        1,
        0,
    )
    [change] = body["changes"]
    assert change["ticket_id"] == ticket.pk
    assert change["bill_code"] == ticket.bill_code
    assert change["rule_id"] == {"from": rule.pk, "to": rule.pk}
    assert _instant(change["resolve_deadline"]["from"]) == start + timedelta(hours=4)
    assert _instant(change["resolve_deadline"]["to"]) == start + timedelta(hours=8)
    assert change["newly_breached"] is False
    planned = {(lv["clock"], lv["level"]): _instant(lv["due_at"]) for lv in change["levels"]}
    assert planned[("resolve", 3)] == start + timedelta(hours=8, minutes=-15)
    assert planned[("resolve", 4)] == start + timedelta(hours=8)

    ticket.refresh_from_db()
    assert ticket.resolve_deadline == start + timedelta(hours=4)  # a dry run writes nothing
    assert {
        (e.clock, e.level): e.due_at
        for e in SlaEvent.objects.filter(ticket=ticket, state=EventState.PENDING)
    } == pending_before

    applied = staff_api.post(f"{URL}{rule.pk}/recompute/")
    assert applied.status_code == 200
    assert applied.json()["dry_run"] is False
    assert (applied.json()["moved"], applied.json()["events_changed"]) == (1, 1)
    ticket.refresh_from_db()
    assert ticket.resolve_deadline == start + timedelta(hours=8)
    pending_after = {
        (e.clock, e.level): e.due_at
        for e in SlaEvent.objects.filter(ticket=ticket, state=EventState.PENDING)
    }
    assert pending_after[("resolve", 3)] == start + timedelta(hours=8, minutes=-15)
    assert pending_after[("resolve", 4)] == start + timedelta(hours=8)
    assert pending_after[("response", 2)] == pending_before[("response", 2)]

    again = staff_api.post(f"{URL}{rule.pk}/recompute/?dry_run=true").json()
    assert (again["examined"], again["moved"], again["changes"]) == (1, 0, [])


@pytest.mark.parametrize("flag", ["0", "false"])
def test_recompute_dry_run_false_applies(staff_api, approved, rule, flag):
    ticket = approved(submitted=timezone.now().replace(microsecond=0))
    SlaRule.objects.filter(pk=rule.pk).update(resolve_hours=Decimal("2"))
    response = staff_api.post(f"{URL}{rule.pk}/recompute/?dry_run={flag}")
    assert response.json()["dry_run"] is False
    ticket.refresh_from_db()
    assert ticket.resolve_deadline == ticket.submitted_time + timedelta(hours=2)


def test_recompute_with_a_bad_dry_run_flag_is_400(staff_api, rule):
    response = staff_api.post(f"{URL}{rule.pk}/recompute/?dry_run=maybe")
    assert response.status_code == 400
    assert list(response.json()["errors"]) == ["dry_run"]


def _instant(text: str) -> datetime:
    return datetime.fromisoformat(text)


# Admin --------------------------------------------------------------------------------------


def test_admin_shows_the_ladder_inline(client, rule):
    client.force_login(StaffFactory(username="operator", is_superuser=True))
    page = client.get(f"/admin/sla/slarule/{rule.pk}/change/")
    assert page.status_code == 200
    assert b'name="levels-TOTAL_FORMS" value="4"' in page.content
    assert b'name="levels-0-trigger"' in page.content


def _admin_ladder_form(levels: list[dict], initial: int = 0, **rule) -> dict:
    """The rule form as a browser posts it: a level's notify targets are ticked checkboxes
    (one value each), not JSON."""
    data = {
        "name": "from the admin",
        "category": "",
        "warn_before_minutes": 30,
        "sort": 50,
        "status": 1,
        **rule,
        "levels-TOTAL_FORMS": len(levels),
        "levels-INITIAL_FORMS": initial,
        "levels-MIN_NUM_FORMS": 0,
        "levels-MAX_NUM_FORMS": 1000,
    }
    for index, level in enumerate(levels):
        defaults = {"notify": ["handler"], "template_code": "", "reassign_group": ""}
        for key, value in {**defaults, **level}.items():
            data[f"levels-{index}-{key}"] = value
    return data


def test_admin_levels_entered_with_a_new_rule_replace_the_default_ladder(client):
    client.force_login(StaffFactory(username="operator", is_superuser=True))
    response = client.post(
        "/admin/sla/slarule/add/",
        _admin_ladder_form(
            [
                {"position": 5, "clock": "resolve", "trigger": "minutes_after", "value": "10"},
                {"position": 2, "clock": "response", "trigger": "percent_elapsed", "value": "80"},
            ]
        ),
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    rule = SlaRule.objects.get(name="from the admin")
    assert _ladder(rule) == [
        (1, "response", "percent_elapsed", Decimal("80.00"), ["handler"]),
        (2, "resolve", "minutes_after", Decimal("10.00"), ["handler"]),
    ]


def test_admin_new_rule_without_levels_keeps_the_default_ladder(client):
    client.force_login(StaffFactory(username="operator", is_superuser=True))
    response = client.post("/admin/sla/slarule/add/", _admin_ladder_form([]))
    assert response.status_code == 302
    assert len(_ladder(SlaRule.objects.get(name="from the admin"))) == 4


def test_admin_swapping_two_positions_saves(client, rule):
    client.force_login(StaffFactory(username="operator", is_superuser=True))
    levels = list(rule.levels.order_by("position"))
    forms = [
        {
            "id": level.pk,
            "rule": rule.pk,
            "position": {1: 2, 2: 1}.get(level.position, level.position),
            "clock": level.clock,
            "trigger": level.trigger,
            "value": str(level.value),
            "notify": ["handler", "leader"],
        }
        for level in levels
    ]
    response = client.post(
        f"/admin/sla/slarule/{rule.pk}/change/",
        _admin_ladder_form(
            forms,
            initial=len(forms),
            name=rule.name,
            priority=rule.priority,
            response_hours=rule.response_hours,
            resolve_hours=rule.resolve_hours,
            warn_before_minutes=rule.warn_before_minutes,
            sort=rule.sort,
        ),
    )
    assert response.status_code == 302, response.content.decode()[:3000]
    assert [(p, c, t) for p, c, t, _v, _n in _ladder(rule)] == [
        (1, "response", "minutes_after"),
        (2, "response", "minutes_before"),
        (3, "resolve", "minutes_before"),
        (4, "resolve", "minutes_after"),
    ]


def test_admin_refuses_a_level_the_api_would_refuse(client):
    client.force_login(StaffFactory(username="operator", is_superuser=True))
    retired = HandlerGroupFactory(name="retired", status=GroupStatus.DISABLED)
    before = _snapshot()
    response = client.post(
        "/admin/sla/slarule/add/",
        _admin_ladder_form(
            [
                {
                    "position": 1,
                    "clock": "resolve",
                    "trigger": "percent_elapsed",
                    "value": "250",
                    "notify": ["handler", "boss"],
                },
                {
                    "position": 2,
                    "clock": "resolve",
                    "trigger": "minutes_after",
                    "value": "5",
                    "reassign_group": retired.pk,
                },
            ]
        ),
    )
    assert response.status_code == 200  # the form again, with the errors
    errors = response.context["inline_admin_formsets"][0].formset.errors
    assert set(errors[0]) == {"notify"}
    assert set(errors[1]) == {"reassign_group"}
    assert _snapshot() == before


def test_admin_refuses_a_percentage_over_200(client):
    client.force_login(StaffFactory(username="operator", is_superuser=True))
    response = client.post(
        "/admin/sla/slarule/add/",
        _admin_ladder_form(
            [{"position": 1, "clock": "resolve", "trigger": "percent_elapsed", "value": "250"}]
        ),
    )
    assert response.status_code == 200
    errors = response.context["inline_admin_formsets"][0].formset.errors
    assert errors[0] == {
        "value": ["A percentage of the clock must be more than 0 and at most 200."]
    }
    assert not SlaRule.objects.filter(name="from the admin").exists()
