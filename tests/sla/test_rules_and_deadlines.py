from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from django.core.management import call_command

from sla.models import ClockSegment, SlaRule
from sla.selectors import match_rule
from tests.factories import StaffFactory
from tests.sla.conftest import T0

pytestmark = pytest.mark.django_db


def test_catch_all_rule_is_installed_so_every_ticket_gets_deadlines(approved):
    catch_all = SlaRule.objects.get(sort=999)
    assert catch_all.priority is None and catch_all.category == ""
    ticket = approved(priority=1)
    assert ticket.sla_rule_id == catch_all.pk
    assert ticket.response_deadline == T0 + timedelta(hours=float(catch_all.response_hours))
    assert ticket.resolve_deadline == T0 + timedelta(hours=float(catch_all.resolve_hours))


def test_matching_takes_the_first_enabled_rule_by_sort():
    SlaRule.objects.create(name="any high", priority=3, sort=50, resolve_hours=8)
    network = SlaRule.objects.create(
        name="high network", priority=3, category="network", sort=20, resolve_hours=2
    )
    SlaRule.objects.create(name="high network later", priority=3, category="network", sort=30)
    assert match_rule(priority=3, category="network") == network
    assert match_rule(priority=3, category="payroll").name == "any high"
    assert match_rule(priority=1, category="network").sort == 999


def test_disabled_rule_no_longer_matches_and_existing_deadlines_stay(approved, rule):
    ticket = approved()
    assert ticket.sla_rule_id == rule.pk
    rule.status = 0
    rule.save()
    assert match_rule(priority=3, category="").sort == 999
    later = approved()
    assert later.sla_rule.sort == 999
    ticket.refresh_from_db()
    assert ticket.sla_rule_id == rule.pk
    assert ticket.resolve_deadline == T0 + timedelta(hours=4)


def test_deadlines_count_from_submission_not_approval(approved, rule):
    ticket = approved(submitted=T0, approved_at=T0 + timedelta(hours=3))
    assert ticket.response_deadline == T0 + timedelta(hours=1)
    assert ticket.resolve_deadline == T0 + timedelta(hours=4)
    assert ticket.approved_time == T0 + timedelta(hours=3)


def test_half_hours_and_missing_clocks(approved):
    SlaRule.objects.create(
        name="low", priority=1, response_hours=Decimal("0.5"), resolve_hours=None, sort=1
    )
    ticket = approved(priority=1)
    assert ticket.response_deadline == T0 + timedelta(minutes=30)
    assert ticket.resolve_deadline is None
    assert list(ClockSegment.objects.filter(ticket=ticket).values_list("clock", flat=True)) == [
        "response"
    ]


def test_business_hours_calendar(approved, office_hours):
    SlaRule.objects.create(
        name="biz", priority=2, response_hours=2, resolve_hours=8, calendar=office_hours, sort=1
    )
    # Friday 16:00 UTC = 17:00 Berlin (CET): 1 h left on Friday, then Monday 09:00–...
    friday = datetime(2026, 3, 6, 16, 0, tzinfo=UTC)
    ticket = approved(priority=2, submitted=friday)
    assert ticket.response_deadline == datetime(2026, 3, 9, 9, 0, tzinfo=UTC)  # Mon 10:00 CET
    # 8 h: 1 h Friday, Monday 09–12 (3 h), 13–17 (4 h) → Monday 17:00 CET = 16:00 UTC
    assert ticket.resolve_deadline == datetime(2026, 3, 9, 16, 0, tzinfo=UTC)


def test_sla_fields_in_the_api(api, approved, people, rule):
    ticket = approved()
    body = api.as_user(people["applicant"]).get(f"/api/tickets/{ticket.pk}/").json()
    assert body["response_deadline"].startswith("2026-03-02T10:00:00")
    assert body["resolve_deadline"].startswith("2026-03-02T13:00:00")
    assert body["sla_paused"] is False
    # The rule is the team's business, not the applicant's.
    assert body["sla_rule_id"] is None
    staff_side = api.as_user(StaffFactory()).get(f"/api/tickets/{ticket.pk}/").json()
    assert staff_side["sla_rule_id"] == rule.pk


def test_recompute_after_a_rule_change(approved, rule, capsys):
    ticket = approved()
    rule.resolve_hours = Decimal("6")
    rule.save()
    call_command("sla_recompute", "--dry-run")
    assert "would move 1" in capsys.readouterr().out
    ticket.refresh_from_db()
    assert ticket.resolve_deadline == T0 + timedelta(hours=4)
    call_command("sla_recompute")
    assert "moved 1" in capsys.readouterr().out
    ticket.refresh_from_db()
    assert ticket.resolve_deadline == T0 + timedelta(hours=6)


def test_recompute_dry_run_counts_new_breaches(approved, rule, capsys):
    from sla.services import sla_recompute

    approved(submitted=datetime.now(UTC) - timedelta(hours=2))
    rule.resolve_hours = Decimal("1")
    rule.save()
    result = sla_recompute(dry_run=True)
    assert (result.moved, result.newly_breached) == (1, 1)
