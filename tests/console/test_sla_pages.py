"""The SLA on the console: the ticket page's timeline (the team's view only) and the leaders'
page /console/sla/ (compliance per day, with the report's filters). Time is explicit: services
take `now=`, the scan `now=`, and each page is read under time-machine."""

import re
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from sla import ladder
from sla.models import SlaOutcome, SlaRule
from sla.rules import set_levels
from sla.scanner import sla_scan
from sla.selectors import sla_timeline
from sla.services import sla_pause, sla_resume
from tests.factories import ApproverFactory, HandlerGroupFactory, StaffFactory, UserFactory
from workflow import services

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)  # a Monday
SLA_PAGE = "/console/sla/"


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def hm(moment: datetime) -> str:
    return timezone.localtime(moment).strftime("%H:%M")


def text(response) -> str:
    return response.content.decode()


def get(client, url, when, **params):
    with time_machine.travel(when, tick=False):
        return client.get(url, params)


@pytest.fixture
def rule(db) -> SlaRule:
    """High priority: respond in 1 h, resolve in 4 h, warn 15 min before; 24×7. Its default
    ladder: L1 15 min before and L2 at the response deadline, L3 and L4 the same on resolve."""
    return SlaRule.objects.create(
        name="high",
        priority=3,
        response_hours=Decimal("1"),
        resolve_hours=Decimal("4"),
        warn_before_minutes=15,
        sort=10,
    )


@pytest.fixture
def sla_ticket(rule, submit, group, approver, handlers):
    """Submitted and approved at 09:00 into the support pool; L1 fires at 09:46; handler0
    accepts at 09:50 (so L2 is void at 10:01); paused 10:00–10:30, so the resolve deadline
    moves from 13:00 to 13:30."""
    ticket = submit(handler_group_id=group.pk, now=T0)
    services.ticket_approve(ticket_id=ticket.pk, approver=approver, now=T0)
    sla_scan(now=at(46))
    services.ticket_accept(ticket_id=ticket.pk, handler=handlers[0], now=at(50))
    sla_pause(ticket_id=ticket.pk, user=handlers[0], now=at(60))
    sla_scan(now=at(61))
    sla_resume(ticket_id=ticket.pk, user=handlers[0], now=at(90))
    return ticket


def detail(ticket) -> str:
    return f"/console/tickets/{ticket.pk}/"


# --- the ticket page's timeline -------------------------------------------------------------


def test_the_handler_sees_both_clocks_with_levels_deadlines_and_pause(
    as_user, sla_ticket, handlers
):
    page = text(get(as_user(handlers[0]), detail(sla_ticket), at(120)))
    assert 'aria-labelledby="sla-timeline-title"' in page
    assert '<svg xmlns="http://www.w3.org/2000/svg" class="sla-timeline"' in page
    assert f"Level 1 due {hm(at(45))}, fired {hm(at(46))}" in page
    assert f"Level 2 due {hm(at(60))}, void: the clock stopped first" in page
    assert f"Level 3 due {hm(at(255))}, pending" in page  # 15 min before the moved deadline
    assert f"Level 4 due {hm(at(270))}, pending" in page
    assert f"Deadline {hm(at(60))}" in page  # response
    assert f"Deadline {hm(at(270))}" in page  # resolve, moved by the 30 min pause
    assert f"Paused {hm(at(60))} – {hm(at(90))} (waiting on the applicant)" in page
    assert f"now {hm(at(120))}" in page
    assert ">responded<" in page and ">running<" in page
    assert f"Times in {timezone.get_current_timezone_name()}" in page


@pytest.mark.parametrize("who", ["member", "leader", "staff"])
def test_the_whole_team_sees_the_timeline(as_user, sla_ticket, handlers, leader, who):
    viewer = {"member": handlers[1], "leader": leader, "staff": StaffFactory()}[who]
    assert "Level 1 due" in text(get(as_user(viewer), detail(sla_ticket), at(120)))


@pytest.mark.parametrize("who", ["applicant", "approver"])
def test_the_applicant_and_approvers_see_no_timeline(as_user, sla_ticket, applicant, who):
    viewer = applicant if who == "applicant" else ApproverFactory(username="approver2")
    response = get(as_user(viewer), detail(sla_ticket), at(120))
    assert response.status_code == 200
    page = text(response)
    assert "SLA timeline" not in page and "<svg" not in page
    assert "Level 1" not in page
    if who == "applicant":  # their promise in words, not the clocks
        assert "We'll reply by" in page and "Resolve by" not in page
    else:
        assert "Resolve by" in page  # the public deadlines stay


def test_a_finished_ticket_shows_its_outcome_at_the_end_of_each_lane(as_user, sla_ticket, handlers):
    services.ticket_complete(ticket_id=sla_ticket.pk, handler=handlers[0], now=at(200))
    page = text(get(as_user(handlers[0]), detail(sla_ticket), at(60 * 24 * 20)))
    assert re.findall(r'class="sla-outcome"[^>]*>([^<]+)<', page) == ["met", "met"]
    assert 'class="sla-now"' not in page  # weeks later: the story, not squeezed by now


def test_a_ticket_without_sla_shows_no_timeline(as_user, submit, group, approver, handlers):
    for rule in SlaRule.objects.all():
        rule.status = 0
        rule.save()
    ticket = submit(handler_group_id=group.pk, now=T0)
    services.ticket_approve(ticket_id=ticket.pk, approver=approver, now=T0)
    page = text(get(as_user(handlers[0]), detail(ticket), at(30)))
    assert "SLA timeline" not in page
    assert "No SLA clocks for this ticket." in page


def test_the_timeline_reads_the_same_queries_however_many_levels(
    as_user, rule, submit, group, approver, handlers
):
    L = ladder.Level
    wide = SlaRule.objects.create(
        name="urgent", priority=4, response_hours=Decimal(1), resolve_hours=Decimal(4), sort=5
    )
    set_levels(
        wide,
        [L(n, "response", ladder.PERCENT_ELAPSED, Decimal(10 * n)) for n in range(1, 6)]
        + [L(n, "resolve", ladder.PERCENT_ELAPSED, Decimal(10 * n)) for n in range(6, 13)],
    )
    client = as_user(handlers[0])

    def queries(priority: int) -> tuple[int, int]:
        ticket = submit(handler_group_id=group.pk, priority=priority, now=T0)
        services.ticket_approve(ticket_id=ticket.pk, approver=approver, now=T0)
        with CaptureQueriesContext(connection) as selector:
            tracks = sla_timeline(ticket, outcome=None)
        assert sum(len(t.levels) for t in tracks) == (4 if priority == 3 else 12)
        with CaptureQueriesContext(connection) as page, time_machine.travel(at(30)):
            assert "Level 1 due" in text(client.get(detail(ticket)))
        return len(selector.captured_queries), len(page.captured_queries)

    four_levels = queries(3)
    assert four_levels[0] == 2  # the segment log and the events
    assert queries(4) == four_levels


# --- the leaders' page --------------------------------------------------------------------------


@pytest.fixture
def outcomes(rule, submit, group, approver, handlers, applicant):
    """On Mon Mar 2: three tickets completed (one response and one resolve breach) and one
    closed unfinished at 09:10 (both clocks closed before due). On Wed Mar 4: one accepted
    and completed two days late (both breached)."""
    handler = handlers[0]

    def approved(submitted=T0):
        ticket = submit(handler_group_id=group.pk, now=submitted)
        return services.ticket_approve(ticket_id=ticket.pk, approver=approver, now=submitted)

    for accept_after, complete_after in ((30, 120), (90, 300), (20, 60)):
        ticket = approved()
        services.ticket_accept(ticket_id=ticket.pk, handler=handler, now=at(accept_after))
        services.ticket_complete(ticket_id=ticket.pk, handler=handler, now=at(complete_after))
    closed = approved()
    services.ticket_close(ticket_id=closed.pk, user=applicant, now=at(10))
    late = approved()
    services.ticket_accept(ticket_id=late.pk, handler=handler, now=at(2 * 24 * 60))
    services.ticket_complete(ticket_id=late.pk, handler=handler, now=at(2 * 24 * 60 + 60))
    assert SlaOutcome.objects.count() == 5


LATER = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


def table(page: str) -> dict[str, list[int]]:
    """The numbers table: day (YYYY-MM-DD, or "Total") → its six counts."""
    body = re.search(r'<table class="sla-table".*?</table>', page, re.S)
    if body is None:
        return {}
    row_head = re.compile(r'<th scope="row">(?:<time datetime="([\d-]+)">.*?</time>|(\w+))</th>')
    rows = {}
    for row in re.findall(r"<tr>(.*?)</tr>", body.group(0), re.S):
        head = row_head.search(row)
        if head:
            counts = re.findall(r"<td>(\d+)</td>", row)
            rows[head.group(1) or head.group(2)] = [int(n) for n in counts]
    return rows


def test_a_leader_sees_compliance_per_day_as_a_chart_and_a_table(as_user, outcomes, leader):
    response = get(as_user(leader), SLA_PAGE, LATER)
    assert response.status_code == 200
    page = text(response)
    assert '<svg xmlns="http://www.w3.org/2000/svg" class="sla-daily-chart"' in page
    assert page.count('<g class="day">') == 30  # the last 30 days, today included
    assert "Mon Mar 2 — response: 2 met, 1 breached, 1 closed before due" in page
    assert table(page) == {
        "2026-03-02": [2, 1, 1, 2, 1, 1],
        "2026-03-04": [0, 1, 0, 0, 1, 0],
        "Total": [2, 2, 1, 2, 2, 1],
    }
    assert "Response compliance: 50 %" in page
    assert "closed before due (top, grey)" in page  # the legend says where they are
    assert "/api/sla/report/?" in page and "format=csv" in page


def test_staff_see_the_page_too(as_user, outcomes, staff):
    assert table(text(get(as_user(staff), SLA_PAGE, LATER)))["Total"] == [2, 2, 1, 2, 2, 1]


def test_the_page_is_403_for_members_and_others_and_a_login_for_strangers(
    as_user, client, outcomes, handlers, outsider
):
    assert get(as_user(handlers[0]), SLA_PAGE, LATER).status_code == 403
    assert get(as_user(outsider), SLA_PAGE, LATER).status_code == 403
    client.logout()
    anonymous = client.get(SLA_PAGE)
    assert anonymous.status_code == 302
    assert anonymous["Location"].startswith("/accounts/login/?next=")


def test_the_navigation_links_the_page_for_leaders_and_staff_only(
    as_user, group, leader, handlers, staff
):
    link = 'href="/console/sla/"'
    assert link in text(as_user(leader).get("/console/"))
    assert link in text(as_user(staff).get("/console/"))
    assert link not in text(as_user(handlers[0]).get("/console/"))


def test_the_filters_of_the_report_apply(as_user, outcomes, leader, group):
    client = as_user(leader)
    march = get(client, SLA_PAGE, LATER, **{"from": "2026-03-03", "to": "2026-03-05"})
    assert text(march).count('<g class="day">') == 3
    assert list(table(text(march))) == ["2026-03-04", "Total"]
    low = text(get(client, SLA_PAGE, LATER, priority="1"))
    assert table(low) == {}
    assert "No SLA outcome was finalised in this range." in low
    assert 'value="1" selected' in low
    assert "priority=1" in low and "format=csv" in low  # the CSV link keeps the filters
    mine = text(get(client, SLA_PAGE, LATER, handler_group=str(group.pk), priority=""))
    assert table(mine)["Total"] == [2, 2, 1, 2, 2, 1]
    elsewhere = HandlerGroupFactory(name="elsewhere", leader=UserFactory(username="boss2"))
    assert get(client, SLA_PAGE, LATER, handler_group=str(elsewhere.pk)).status_code == 403


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"from": "the-ides-of-march"}, "from"),
        ({"priority": "9"}, "priority"),
        ({"handler_group": "desk"}, "handler_group"),
        ({"from": "2026-03-05", "to": "2026-03-01"}, "to"),
        ({"from": "2020-01-01", "to": "2026-03-01"}, "from"),  # over a year of bars
    ],
)
def test_a_bad_filter_is_a_400_naming_the_field(as_user, leader, group, params, field):
    response = get(as_user(leader), SLA_PAGE, LATER, **params)
    assert response.status_code == 400
    errors = re.search(r'data-testid="filter-errors">(.*?)</div>', text(response), re.S).group(1)
    assert re.findall(r'<strong class="code">(\w+)</strong>', errors) == [field]
    assert "<svg" not in text(response)
