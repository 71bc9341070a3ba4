"""Home by role in a real browser, at desktop width and on a phone (390×844): the agent lands
on My work with the ticket offered to them first, the tabs carry counts, the filters fold
away on the phone and the header stays within two lines without sideways scrolling."""

import re

import pytest
from playwright.sync_api import expect

from tests.browser.session import PASSWORD, TIMEOUT_MS, log_in
from tests.factories import ApproverFactory, HandlerGroupFactory, UserFactory
from workflow import services

pytestmark = [pytest.mark.browser]

VIEWPORTS = {
    "desktop": {"viewport": {"width": 1280, "height": 800}},
    "phone": {"viewport": {"width": 390, "height": 844}, "is_mobile": True},
}


@pytest.fixture
def offered(transactional_db):
    """Hana is a member of a manual group and of a round-robin one; a ticket of the
    round-robin group is assigned to her and waits to be accepted, one waits in the pool."""
    hana = UserFactory(username="hana", password=PASSWORD)
    alice = UserFactory(username="alice", password=PASSWORD)
    approver = ApproverFactory(username="avery")
    desk = HandlerGroupFactory(name="Service desk", members=[hana], assign_strategy=0)
    network = HandlerGroupFactory(name="Network", members=[hana], assign_strategy=1)

    def approved(group, title, priority):
        ticket = services.ticket_submit(
            creator=alice,
            title=title,
            content=f"{title}: details.",
            priority=priority,
            category="",
            handler_group_id=group.pk,
        )
        return services.ticket_approve(ticket_id=ticket.pk, approver=approver)

    pooled = approved(desk, "Printer jams on floor 2", 2)
    assigned = approved(network, "Wi-Fi outage in building B", 4)
    assert assigned.handler_id == hana.pk
    return {"assigned": assigned, "pooled": pooled}


@pytest.mark.parametrize("device", list(VIEWPORTS))
def test_the_agent_lands_on_my_work_with_the_ticket_assigned_to_them(
    device, offered, live_server, browser, screenshots_dir
):
    context = browser.new_context(**VIEWPORTS[device])
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    log_in(page, live_server.url, "hana")
    expect(page).to_have_url(f"{live_server.url}/console/")

    assigned = offered["assigned"]
    expect(page.get_by_role("heading", level=1)).to_have_text("My work")
    row = page.locator(f'tr[data-ticket-id="{assigned.pk}"]')
    expect(row).to_be_visible()
    expect(row).to_contain_text("Wi-Fi outage in building B")
    expect(row.locator(".sla-badge")).to_contain_text("left")
    expect(row.get_by_role("button", name=f"Accept {assigned.bill_code}")).to_be_visible()
    expect(page.locator(".section-title").first).to_have_text("Waiting for you to accept")
    expect(page.locator('[data-count="mine"]')).to_have_text("1")
    expect(page.locator('[data-count="pending"]')).to_have_text("1")
    expect(page.locator('[data-count="all"]')).to_have_text("2")
    expect(page.locator('.nav [data-home="work"]')).to_have_attribute("aria-current", "page")

    fold = page.locator("details.filters-fold")
    scroll_width = page.evaluate("() => document.documentElement.scrollWidth")
    if device == "phone":
        # Filters fold away; the header is two lines at most and nothing scrolls sideways.
        expect(fold).not_to_have_attribute("open", re.compile(".*"))
        expect(page.get_by_label("Priority", exact=True)).to_be_hidden()
        header = page.locator("header.topbar").bounding_box()
        assert header is not None and header["height"] < 100, header
        nav = page.locator("nav.nav").bounding_box()
        line = page.evaluate(
            "() => parseFloat(getComputedStyle(document.querySelector('nav.nav a')).lineHeight)"
        )
        assert nav is not None and nav["height"] < 2 * line, (nav, line)
        assert scroll_width <= 390
        page.screenshot(path=screenshots_dir / "home-agent-phone.png", full_page=True)
        fold.locator("summary").click()
        expect(page.get_by_label("Priority", exact=True)).to_be_visible()
        page.screenshot(path=screenshots_dir / "home-agent-phone-filters.png", full_page=True)
    else:
        expect(fold).to_have_attribute("open", "")
        expect(page.get_by_label("Priority", exact=True)).to_be_visible()
        assert scroll_width <= 1280
        page.screenshot(path=screenshots_dir / "home-agent-desktop.png", full_page=True)

    # Search and sort from the page: the pool ticket is found in All by its applicant.
    page.locator('.tabs a[data-view="all"]').click()
    page.get_by_label("Sort").select_option("priority")
    expect(page).to_have_url(re.compile(r"sort=priority"))
    rows = page.locator("tr[data-ticket-id]")
    expect(rows.first).to_have_attribute("data-ticket-id", str(assigned.pk))
    page.get_by_placeholder("Title, bill code or applicant").fill("printer")
    page.get_by_role("button", name="Search", exact=True).click()
    expect(rows).to_have_count(1)
    expect(rows.first).to_have_attribute("data-ticket-id", str(offered["pooled"].pk))
    context.close()
    assert (screenshots_dir / f"home-agent-{device}.png").stat().st_size > 0


def test_the_applicant_lands_on_my_tickets_on_a_phone(
    offered, live_server, browser, screenshots_dir
):
    context = browser.new_context(**VIEWPORTS["phone"])
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    log_in(page, live_server.url, "alice")
    expect(page).to_have_url(f"{live_server.url}/console/my-tickets/")
    expect(page.get_by_role("heading", level=1)).to_have_text("My tickets")
    expect(page.locator(f'tr[data-ticket-id="{offered["assigned"].pk}"]')).to_be_visible()
    expect(page.get_by_text("No tickets waiting")).to_have_count(0)
    header = page.locator("header.topbar").bounding_box()
    assert header is not None and header["height"] < 100, header
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    page.screenshot(path=screenshots_dir / "home-applicant-phone.png", full_page=True)
    context.close()
