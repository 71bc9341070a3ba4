"""Presence from the console's header in a real browser, at desktop and phone sizes, in
English and Chinese: the agent chooses Available → /api/presence/ and the supervisor page
say so within 5 s and a ticket approved into a presence-requiring group is routed to them
(it shows in My work); Busy → the next ticket is not; logging out → offline. And an open
tab's heartbeats keep the agent available past PRESENCE_TIMEOUT_SECONDS, while a closed one
lets the sweep take them offline."""

import time

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from accounts.models import Profile
from routing.models import AgentPresence
from routing.presence import presence_sweep
from tests.browser.session import PASSWORD, log_in
from tests.factories import ApproverFactory, HandlerGroupFactory, UserFactory
from ticketing.models import Ticket
from workflow import services

pytestmark = [pytest.mark.browser]

AGREE_MS = 5_000
DEVICES = {"desktop": {"width": 1366, "height": 900}, "phone": {"width": 390, "height": 844}}
WORDS = {
    "en": {"available": "Available", "busy": "Busy", "offline": "Offline"},
    "zh-hans": {"available": "空闲", "busy": "忙碌", "offline": "离线"},
}


@pytest.fixture
def desk(transactional_db):
    agent = UserFactory(username="it_alice", password=PASSWORD)
    lead = UserFactory(username="lead_it", password=PASSWORD)
    applicant = UserFactory(username="applicant1", password=PASSWORD)
    group = HandlerGroupFactory(
        name="IT desk", members=[agent], leader=lead, assign_strategy=4, requires_presence=True
    )
    return {
        "agent": agent,
        "lead": lead,
        "applicant": applicant,
        "approver": ApproverFactory(username="avery"),
        "group": group,
    }


def approved(desk, title: str) -> Ticket:
    ticket = services.ticket_submit(
        creator=desk["applicant"],
        title=title,
        content=f"{title}: details.",
        priority=2,
        handler_group_id=desk["group"].pk,
    )
    services.ticket_approve(ticket_id=ticket.pk, approver=desk["approver"])
    return Ticket.objects.get(pk=ticket.pk)


def api_state(page, base: str) -> str:
    rows = page.request.get(f"{base}/api/presence/").json()
    return rows[0]["state"] if rows else "none"


def wait_for_api(page, base: str, state: str) -> None:
    deadline = time.monotonic() + AGREE_MS / 1000
    while api_state(page, base) != state:
        assert time.monotonic() < deadline, f"/api/presence/ never said {state!r} within 5 s"
        time.sleep(0.2)


@pytest.mark.parametrize("language", ["en", "zh-hans"])
@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_presence_chosen_in_the_header_routes_and_logging_out_ends_it(
    desk, live_server, browser, settings, screenshots_dir, device, language
):
    base = live_server.url  # the supervisor page at its own refresh rate
    for person in (desk["agent"], desk["lead"]):
        Profile.objects.create(user=person, language=language, time_zone="Europe/Berlin")
    words = WORDS[language]
    agent_context = browser.new_context(viewport=DEVICES[device])
    lead_context = browser.new_context(viewport=DEVICES[device])
    page, board = agent_context.new_page(), lead_context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    log_in(page, base, "it_alice", lands_on="/console/")
    switch = page.get_by_test_id("presence-switch")
    expect(page.get_by_test_id("presence-word")).to_have_text(words["offline"])
    assert "state-offline" in (switch.get_attribute("class") or "")
    log_in(board, base, "lead_it")
    board.goto(f"{base}/console/supervisor/")

    page.get_by_test_id("presence-state").select_option("available")
    expect(page.get_by_test_id("presence-word")).to_have_text(words["available"])
    expect(switch).to_have_attribute("data-state", "available")
    assert page.url.endswith("/console/")  # no reload, no navigation
    wait_for_api(page, base, "available")
    expect(board.locator("#live .agent.state-available")).to_contain_text(
        "it_alice", timeout=AGREE_MS
    )
    page.screenshot(path=str(screenshots_dir / f"presence-{language}-{device}.png"))
    width = page.evaluate("document.scrollingElement.scrollWidth")
    assert width <= DEVICES[device]["width"], f"the header makes the page {width} px wide"

    routed = approved(desk, "Printer on fire")
    assert routed.handler_id == desk["agent"].pk
    page.reload()
    expect(page.locator("main")).to_contain_text("Printer on fire")

    page.get_by_test_id("presence-state").select_option("busy")
    expect(page.get_by_test_id("presence-word")).to_have_text(words["busy"])
    wait_for_api(page, base, "busy")
    expect(board.locator("#live .agent.state-busy")).to_contain_text("it_alice", timeout=AGREE_MS)
    waiting = approved(desk, "Monitor flickers")
    assert waiting.handler_id is None
    page.reload()
    expect(page.get_by_test_id("presence-word")).to_have_text(words["busy"])
    expect(page.locator("main")).not_to_contain_text("Monitor flickers")

    page.get_by_test_id("presence-state").select_option("available")
    wait_for_api(page, base, "available")
    page.locator("form[action='/accounts/logout/'] button").click()
    page.wait_for_url(lambda url: "/logout" in url or "/login" in url)
    assert AgentPresence.objects.get(pk=desk["agent"].pk).state == "offline"
    expect(board.locator("#live .agent.state-offline")).to_contain_text(
        "it_alice", timeout=AGREE_MS
    )
    assert errors == []
    agent_context.close()
    lead_context.close()


def test_an_open_tab_keeps_the_agent_available_past_the_timeout(
    desk, live_server, browser, settings
):
    settings.PRESENCE_TIMEOUT_SECONDS = 3  # a heartbeat every second
    base = live_server.url
    context = browser.new_context(viewport=DEVICES["desktop"])
    page = context.new_page()
    log_in(page, base, "it_alice", lands_on="/console/")
    page.get_by_test_id("presence-state").select_option("available")
    wait_for_api(page, base, "available")

    time.sleep(5)  # longer than the timeout: only the tab's heartbeats keep her

    assert presence_sweep(now=timezone.now())["offline"] == 0
    row = AgentPresence.objects.get(pk=desk["agent"].pk)
    assert row.state == "available"
    assert (timezone.now() - row.last_heartbeat).total_seconds() < 3

    context.close()  # no tab, no heartbeat: the sweep takes her offline
    time.sleep(4)
    assert presence_sweep(now=timezone.now())["offline"] == 1
    assert AgentPresence.objects.get(pk=desk["agent"].pk).state == "offline"


def test_a_hidden_tab_keeps_the_agent_available(desk, live_server, browser, settings):
    """Headless Chromium never hides a tab, so the page is told it is hidden (the Page
    Visibility API's properties and event); it must keep beating all the same."""
    settings.PRESENCE_TIMEOUT_SECONDS = 3
    base = live_server.url
    context = browser.new_context(viewport=DEVICES["desktop"])
    console = context.new_page()
    log_in(console, base, "it_alice", lands_on="/console/")
    console.get_by_test_id("presence-state").select_option("available")
    wait_for_api(console, base, "available")
    console.evaluate(
        """() => {
          Object.defineProperty(document, "hidden", { configurable: true, get: () => true });
          Object.defineProperty(document, "visibilityState",
                                { configurable: true, get: () => "hidden" });
          document.dispatchEvent(new Event("visibilitychange"));
        }"""
    )

    time.sleep(5)  # past the timeout with the console tab hidden

    assert presence_sweep(now=timezone.now())["offline"] == 0
    assert AgentPresence.objects.get(pk=desk["agent"].pk).state == "available"
    context.close()
