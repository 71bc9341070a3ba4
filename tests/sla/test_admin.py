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
