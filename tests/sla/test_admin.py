"""Operators' screens: rules with the "test this rule" preview, calendars with holiday import,
and the template preview."""

import pytest

from sla.models import Calendar, Holiday, SlaRule
from sla.services import import_holidays
from tests.factories import StaffFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def operator(client):
    admin = StaffFactory(username="operator", is_superuser=True)
    client.force_login(admin)
    return client


def test_rule_list_has_editable_sort_and_the_test_link(operator):
    page = operator.get("/admin/sla/slarule/")
    assert page.status_code == 200
    assert b'name="form-0-sort"' in page.content
    assert b"Test this rule" in page.content


def test_test_this_rule_shows_the_matching_rule_and_deadlines(operator):
    SlaRule.objects.create(
        name="urgent network",
        priority=4,
        category="network",
        response_hours=1,
        resolve_hours=4,
        sort=5,
    )
    page = operator.get(
        "/admin/sla/slarule/test/",
        {"priority": 4, "category": "network", "submitted": "2026-03-02 09:00"},
    )
    assert page.status_code == 200
    assert b"urgent network" in page.content
    fallback = operator.get("/admin/sla/slarule/test/", {"priority": 1})
    assert b"Catch-all" in fallback.content


def test_recompute_dry_run_admin_action(operator):
    rule = SlaRule.objects.get(sort=999)
    response = operator.post(
        "/admin/sla/slarule/",
        {"action": "recompute_dry_run", "_selected_action": [rule.pk]},
        follow=True,
    )
    assert b"Dry run over" in response.content


def test_holidays_import_for_a_country_and_year():
    calendar = Calendar.objects.create(
        name="Berlin", timezone="Europe/Berlin", holiday_country="DE"
    )
    added = import_holidays(calendar=calendar, country="DE", year=2026)
    assert added >= 9
    assert Holiday.objects.filter(calendar=calendar, date="2026-12-25").exists()
    assert import_holidays(calendar=calendar, country="DE", year=2026) == 0  # idempotent
    with pytest.raises(ValueError, match="no holiday data"):
        import_holidays(calendar=calendar, country="XX", year=2026)


def test_calendar_admin_import_action(operator):
    calendar = Calendar.objects.create(
        name="Berlin", timezone="Europe/Berlin", holiday_country="DE"
    )
    response = operator.post(
        "/admin/sla/calendar/",
        {"action": "import_holidays_next_year", "_selected_action": [calendar.pk]},
        follow=True,
    )
    assert b"holidays imported" in response.content
    assert calendar.holidays.count() > 0


def test_template_admin_shows_a_rendered_preview(operator):
    from notifications.models import NotifyTemplate

    template = NotifyTemplate.objects.get(code="ticket-sla-timeout")
    page = operator.get(f"/admin/notifications/notifytemplate/{template.pk}/change/")
    assert page.status_code == 200
    assert b"[SLA timeout] Ticket TK20260101000042 (VPN down): resolve deadline passed" in (
        page.content
    )
    template.content = "Ticket {{billCode}} for {{customer}}"
    template.save()
    broken = operator.get(f"/admin/notifications/notifytemplate/{template.pk}/change/")
    assert b"Cannot render: missing parameter(s): customer" in broken.content


# The escalation ladder with real widgets ------------------------------------------------------


def _rule_form(levels: list[dict], rule=None) -> dict:
    """The admin's rule form as a browser posts it, with one inline row per level."""
    data = {
        "name": "Urgent network",
        "priority": "4",
        "category": "network",
        "response_hours": "1",
        "resolve_hours": "4",
        "warn_before_minutes": "15",
        "sort": "10",
        "status": "1",
        "calendar": "",
        "levels-TOTAL_FORMS": str(len(levels)),
        "levels-INITIAL_FORMS": "0",
        "levels-MIN_NUM_FORMS": "0",
        "levels-MAX_NUM_FORMS": "1000",
    }
    for index, level in enumerate(levels):
        for key, value in level.items():
            data[f"levels-{index}-{key}"] = value
    return data


LADDER = [
    {
        "position": "1",
        "clock": "response",
        "trigger": "percent_elapsed",
        "value": "50",
        "notify": ["handler", "leader"],
        "template_code": "",
    },
    {
        "position": "2",
        "clock": "resolve",
        "trigger": "minutes_after",
        "value": "30",
        "notify": ["leader", "escalation_contact"],
        "template_code": "ticket-sla-timeout",
        "reassign_group": "",
        "raise_priority": "on",
    },
]


@pytest.fixture
def timeout_template(db):
    from notifications.models import NotifyTemplate

    return NotifyTemplate.objects.update_or_create(
        code="ticket-sla-timeout", defaults={"name": "SLA timeout", "title": "t", "content": "c"}
    )[0]


def test_the_ladder_is_edited_with_checkboxes_and_choices(operator, timeout_template):
    page = operator.get("/admin/sla/slarule/add/").content.decode()
    # Who is told: one checkbox per target, not a JSON text box; the template: a choice.
    assert 'type="checkbox" name="levels-__prefix__-notify" value="leader"' in page
    assert '<select name="levels-__prefix__-template_code"' in page
    assert 'value="ticket-sla-timeout"' in page


def test_a_ladder_saved_in_the_admin_is_what_the_api_reads(operator, api, timeout_template):
    response = operator.post("/admin/sla/slarule/add/", _rule_form(LADDER))
    assert response.status_code == 302, response.context["inline_admin_formsets"][0].formset.errors
    rule = SlaRule.objects.get(name="Urgent network")
    staff = StaffFactory(username="reader")
    body = api.as_user(staff).get(f"/api/sla/rules/{rule.pk}/").json()
    ladder = [
        {k: level[k] for k in ("position", "clock", "trigger", "value", "notify", "template_code",
                               "reassign_group_id", "raise_priority")}
        for level in body["levels"]
    ]  # fmt: skip
    assert ladder == [
        {
            "position": 1,
            "clock": "response",
            "trigger": "percent_elapsed",
            "value": "50.00",
            "notify": ["handler", "leader"],
            "template_code": "",
            "reassign_group_id": None,
            "raise_priority": False,
        },
        {
            "position": 2,
            "clock": "resolve",
            "trigger": "minutes_after",
            "value": "30.00",
            "notify": ["leader", "escalation_contact"],
            "template_code": "ticket-sla-timeout",
            "reassign_group_id": None,
            "raise_priority": True,
        },
    ]
    # And back: the change page shows the stored ladder in the same widgets, ticked.
    page = operator.get(f"/admin/sla/slarule/{rule.pk}/change/").content.decode()
    assert (
        'name="levels-1-notify" value="escalation_contact" id="id_levels-1-notify_2" checked'
        in (page)
    )


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"trigger": "percent_elapsed", "value": "250"}, "value", "at most 200"),
        ({"value": "-5"}, "value", ""),
        ({"notify": ["leader", "boss"]}, "notify", "boss"),
        ({"template_code": "no-such-template"}, "template_code", "no-such-template"),
    ],
)
def test_a_bad_level_is_a_form_error_on_its_field_and_saves_nothing(
    operator, timeout_template, change, field, message
):
    levels = [dict(LADDER[0]), {**LADDER[1], **change}]
    response = operator.post("/admin/sla/slarule/add/", _rule_form(levels))
    assert response.status_code == 200
    formset = response.context["inline_admin_formsets"][0].formset
    assert formset.forms[0].errors == {}
    assert field in formset.forms[1].errors, formset.forms[1].errors
    assert message in " ".join(formset.forms[1].errors[field])
    assert not SlaRule.objects.filter(name="Urgent network").exists()
