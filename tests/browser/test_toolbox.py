"""The agent's toolbox in a real browser: it_bob inserts a canned response by typing `::` in
the composer (filled in for the ticket by the server), applies a macro from the ticket page,
then ticks ten tickets on the pool's list and tags them all with the bulk bar; a saved view
shows as a tab with its count and lists them."""

import pytest
from playwright.sync_api import expect

from tests.browser.session import PASSWORD, TIMEOUT_MS, log_in
from tests.factories import ApproverFactory, HandlerGroupFactory, UserFactory
from ticketing.models import Ticket
from toolbox.models import CannedResponse, Macro, SavedView
from workflow import services

pytestmark = [pytest.mark.browser]


@pytest.fixture
def desk(transactional_db):
    agent = UserFactory(username="it_bob", password=PASSWORD, first_name="Bob")
    applicant = UserFactory(username="alice", password=PASSWORD, first_name="Alice")
    approver = ApproverFactory(username="avery")
    group = HandlerGroupFactory(name="Service desk", members=[agent], assign_strategy=0)

    def ticket(title: str) -> Ticket:
        made = services.ticket_submit(
            creator=applicant,
            title=title,
            content="Details.",
            priority=2,
            handler_group_id=group.pk,
        )
        return services.ticket_approve(ticket_id=made.pk, approver=approver)

    mine = ticket("Printer jammed")
    services.ticket_accept(ticket_id=mine.pk, handler=agent)
    pooled = [ticket(f"Scanner {n}") for n in range(10)]
    CannedResponse.objects.create(
        name="awaiting-part",
        owner=agent,
        body="Hello {{ applicant.name }}, {{ ticket.bill_code }} waits for a part.",
    )
    macro = Macro.objects.create(
        name="Printer: urgent",
        owner=agent,
        actions=[{"action": "set_priority", "priority": 4}],
    )
    return {"agent": agent, "mine": mine, "pooled": pooled, "macro": macro}


def test_canned_response_macro_and_bulk_tags(desk, live_server, browser, screenshots_dir):
    base = live_server.url
    context = browser.new_context(viewport={"width": 1366, "height": 900}, locale="en-US")
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    page.on("dialog", lambda dialog: dialog.accept())  # the macro button asks first
    log_in(page, base, "it_bob")
    mine = desk["mine"]

    # 1. `::` in the composer lists the canned response; Enter inserts it, filled in.
    page.goto(f"{base}/console/tickets/{mine.pk}/")
    box = page.locator("form.composer textarea[name=content]")
    box.click()
    box.press_sequentially("Hi. ::await")
    item = page.get_by_test_id("canned-item").first
    expect(item).to_be_visible()
    expect(item).to_contain_text("awaiting-part")
    box.press("Enter")
    expect(box).to_have_value(f"Hi. Hello Alice, {mine.bill_code} waits for a part.")

    # 2. The macro's button runs it on the ticket.
    card = page.get_by_test_id("macros-card")
    card.get_by_test_id("macro-apply").filter(has_text="Printer: urgent").click()
    page.wait_for_load_state()
    expect(page.get_by_test_id("macros-card")).to_be_visible()
    assert Ticket.objects.get(pk=mine.pk).priority == 4

    # 3. Ten tickets ticked on the list, tagged at once with the bulk bar.
    page.goto(f"{base}/console/?view=all")
    bar = page.get_by_test_id("bulk-bar")
    expect(bar).to_be_visible()
    for ticket in desk["pooled"]:
        page.locator(f'tr[data-ticket-id="{ticket.pk}"] [data-testid=bulk-select]').check()
    expect(page.get_by_test_id("bulk-count")).to_have_text("10 selected")
    page.get_by_test_id("bulk-action").select_option("add_tags")
    expect(page.get_by_test_id("bulk-priority")).to_be_hidden()
    page.get_by_test_id("bulk-tags").fill("Scanner, floor 2")
    page.get_by_test_id("bulk-apply").click()
    expect(page.locator("body")).to_contain_text("Done on 10 tickets.")
    page.screenshot(path=str(screenshots_dir / "toolbox-bulk-tags.png"))
    for ticket in desk["pooled"]:
        assert Ticket.objects.get(pk=ticket.pk).tags == ["scanner", "floor 2"]
    assert Ticket.objects.get(pk=mine.pk).tags == []

    # 4. A saved view of that tag is a tab with its count, listing the ten.
    view = SavedView.objects.create(
        name="Scanners", owner=desk["agent"], filters={"tag": "scanner"}
    )
    page.goto(f"{base}/console/?view=all")
    tab = page.locator(f'[data-saved-view="{view.pk}"]')
    expect(tab.get_by_test_id("saved-view-count")).to_have_text("10")
    tab.click()
    expect(page.locator("[data-testid=bulk-select]")).to_have_count(10)
    expect(page.get_by_test_id("saved-view-summary")).to_contain_text("Scanners")
    page.screenshot(path=str(screenshots_dir / "toolbox-saved-view.png"))
    context.close()
