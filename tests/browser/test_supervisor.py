"""The supervisor dashboard in a real browser: a leader watches an agent's state change
without reloading, at desktop width and on a 390 px phone screen (nothing wider than the
screen); screenshots of both go to $TEST_ARTIFACTS_DIR/screenshots."""

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from insight.models import Simulation
from routing.models import AgentPresence
from tests.browser.session import PASSWORD, TIMEOUT_MS, log_in
from tests.factories import HandlerGroupFactory, TicketFactory, UserFactory
from ticketing.models import ProcessStatus, TicketStatus

pytestmark = [pytest.mark.browser]


@pytest.fixture
def floor(transactional_db):
    lead = UserFactory(username="lead_it", password=PASSWORD)
    bob, carol = UserFactory(username="it_bob"), UserFactory(username="it_carol")
    group = HandlerGroupFactory(name="IT", members=[bob, carol], leader=lead, assign_strategy=1)
    now = timezone.now()
    AgentPresence.objects.create(user=bob, state="available", state_since=now, last_heartbeat=now)
    AgentPresence.objects.create(user=carol, state="busy", state_since=now, last_heartbeat=now)
    for minutes in (12, 3):
        TicketFactory(
            handler_group=group,
            process_status=ProcessStatus.APPROVED,
            ticket_status=TicketStatus.PENDING_ASSIGN,
            approved_time=now - timedelta(minutes=minutes),
            queued_time=now - timedelta(minutes=minutes),
        )
    Simulation.objects.create(
        group=group,
        params={},
        status="done",
        created_by=lead,
        finished=now,
        result={
            "strategies": [
                {"strategy": code, "strategy_label": label, "wait_p50_seconds": p50,
                 "wait_p95_seconds": p95, "sla_response_breaches": breaches,
                 "max_queue_length": queue, "count_stddev": spread, "occupancy_stddev": occ}
                for code, label, p50, p95, breaches, queue, spread, occ in [
                    (1, "round robin", 12.0, 140.0, 3, 4, 1.0, 0.08),
                    (2, "least load", 10.0, 120.0, 2, 4, 1.4, 0.06),
                    (3, "online priority", 9.0, 150.0, 4, 5, 3.2, 0.15),
                    (4, "longest idle", 8.0, 95.0, 1, 3, 2.0, 0.05),
                ]
            ]
        },
    )  # fmt: skip
    return {"lead": lead, "carol": carol}


def test_the_leader_watches_the_floor_change_without_reloading(
    floor, live_server, browser, settings, screenshots_dir
):
    settings.SUPERVISOR_REFRESH_MS = 500
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    log_in(page, live_server.url, "lead_it", lands_on="/console/")
    page.goto(f"{live_server.url}/console/supervisor/")
    live = page.locator("#live")
    expect(live).to_contain_text("2 tickets waiting", timeout=TIMEOUT_MS)
    expect(live.locator(".agent.state-busy")).to_contain_text("it_carol")
    expect(page.locator("svg.staffing-chart")).to_be_visible()
    expect(page.locator("#simulation-wait")).to_be_visible()  # strategies side by side
    page.screenshot(path=str(screenshots_dir / "supervisor-desktop.png"), full_page=True)

    AgentPresence.objects.filter(user=floor["carol"]).update(state="available")
    expect(live.locator(".agent.state-available")).to_have_count(2, timeout=TIMEOUT_MS)
    expect(live).to_contain_text("2 of 2 available")

    phone = browser.new_page(viewport={"width": 390, "height": 844})
    log_in(phone, live_server.url, "lead_it", lands_on="/console/")
    phone.goto(f"{live_server.url}/console/supervisor/")
    expect(phone.locator("#live")).to_contain_text("2 tickets waiting", timeout=TIMEOUT_MS)
    # The 30-day quality card arrives after the page (?part=quality): measure with it in.
    expect(phone.get_by_test_id("quality-card")).to_be_visible(timeout=TIMEOUT_MS)
    width = phone.evaluate("document.scrollingElement.scrollWidth")
    assert width <= 390, f"the page is {width} px wide on a 390 px screen"
    phone.screenshot(path=str(screenshots_dir / "supervisor-phone.png"), full_page=True)
