"""The header's search in a real browser: "/" puts the cursor in the box on any console page,
typing and Enter show the results page with the marked snippet."""

import pytest
from playwright.sync_api import expect

from tests.browser.session import PASSWORD, TIMEOUT_MS, log_in
from tests.factories import ApproverFactory, HandlerGroupFactory, UserFactory
from workflow import services

pytestmark = [pytest.mark.browser]


@pytest.fixture
def people(transactional_db):
    agent = UserFactory(username="it_bob", password=PASSWORD)
    applicant = UserFactory(username="alice", password=PASSWORD)
    desk = HandlerGroupFactory(name="Service desk", members=[agent], assign_strategy=0)
    ticket = services.ticket_submit(
        creator=applicant,
        title="打印机卡纸了",
        content="The printer on floor 3 jams.",
        priority=2,
        handler_group_id=desk.pk,
    )
    services.ticket_approve(ticket_id=ticket.pk, approver=ApproverFactory(username="avery"))
    return {"agent": agent, "ticket": ticket}


def test_slash_focuses_the_search_box_and_enter_shows_results(people, live_server, browser):
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    log_in(page, live_server.url, "it_bob")
    box = page.locator("[data-search-box]")
    expect(box).not_to_be_focused()
    page.keyboard.press("/")
    expect(box).to_be_focused()
    expect(box).to_have_value("")  # the "/" itself is not typed into the box
    page.keyboard.type("打印")
    page.keyboard.press("Enter")
    page.wait_for_url("**/console/search/?q=*")
    result = page.locator(f'[data-testid=search-results] [data-ticket="{people["ticket"].pk}"]')
    expect(result).to_have_count(1)
    expect(result.locator("mark").first).to_have_text("打印")
    context.close()
