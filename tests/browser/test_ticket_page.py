"""The ticket page in a real browser, at desktop and phone width: an internal note written in
the composer's note tab never reaches the applicant, the "r" key puts the cursor in the reply
box, the actions come first on a phone, and the applicant cancels a ticket awaiting approval.
Screenshots go to $TEST_ARTIFACTS_DIR/screenshots."""

import pytest
from playwright.sync_api import expect

from tests.browser.session import PASSWORD, TIMEOUT_MS, log_in
from tests.factories import ApproverFactory, HandlerGroupFactory, UserFactory
from ticketing.models import ProcessStatus, ReplyType, Ticket, TicketReply
from workflow import services

pytestmark = [pytest.mark.browser]

VIEWPORTS = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}


@pytest.fixture
def people(transactional_db):
    agent = UserFactory(username="it_bob", password=PASSWORD)
    return {
        "agent": agent,
        "applicant": UserFactory(username="alice", password=PASSWORD),
        "approver": ApproverFactory(username="avery"),
        "desk": HandlerGroupFactory(name="Service desk", members=[agent], assign_strategy=0),
    }


def open_as(browser, base, username, size):
    context = browser.new_context(viewport=VIEWPORTS[size], is_mobile=size == "phone")
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    log_in(page, base, username)
    page.wait_for_url(f"{base}/console/**")
    return context, page


def submit(people, title):
    return services.ticket_submit(
        creator=people["applicant"],
        title=title,
        content=f"{title}: details.",
        priority=2,
        handler_group_id=people["desk"].pk,
    )


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_the_composers_internal_note_never_reaches_the_applicant(
    people, live_server, browser, screenshots_dir, size
):
    base = live_server.url
    ticket = submit(people, "VPN drops")
    services.ticket_approve(ticket_id=ticket.pk, approver=people["approver"])
    services.ticket_accept(ticket_id=ticket.pk, handler=people["agent"])

    context, page = open_as(browser, base, "it_bob", size)
    page.goto(f"{base}/console/tickets/{ticket.pk}/")
    if size == "phone":  # the actions come first on a phone, above the conversation
        actions = page.get_by_test_id("actions-card").bounding_box()
        replies = page.locator("#replies").bounding_box()
        assert actions["y"] < replies["y"]
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    # "r" puts the cursor in the reply box.
    page.locator("body").press("r")
    expect(page.get_by_label("Your message")).to_be_focused()
    expect(page.get_by_label("Your message")).to_have_value("")
    # The note tab: the box turns amber and the button says what it does.
    send = page.locator(".composer-send")
    expect(send).to_have_text("Send to customer", use_inner_text=True)
    page.locator("label[for=reply-type-internal]").click()
    expect(send).to_have_text("Add internal note", use_inner_text=True)
    page.get_by_label("Your message").fill("NOTE: gateway 3 is flapping.")
    page.screenshot(path=screenshots_dir / f"ticket-composer-note-{size}.png", full_page=True)
    page.get_by_role("button", name="Add internal note").click()
    expect(page.locator(".message-success")).to_have_text("Internal note added.")
    expect(page.locator(".reply-internal")).to_contain_text("gateway 3 is flapping")
    page.locator("label[for=reply-type-public]").click()
    page.get_by_label("Your message").fill("Please try the new profile.")
    page.get_by_role("button", name="Send to customer").click()
    expect(page.locator(".message-success")).to_have_text("Reply sent.")
    assert list(
        TicketReply.objects.filter(ticket=ticket)
        .order_by("id")
        .values_list("reply_type", flat=True)
    ) == [ReplyType.INTERNAL, ReplyType.PUBLIC]
    context.close()

    context, page = open_as(browser, base, "alice", size)
    page.goto(f"{base}/console/tickets/{ticket.pk}/")
    expect(page.get_by_test_id("ticket-status")).to_have_text("We're on it")
    expect(page.locator(".reply")).to_have_count(1)
    expect(page.locator(".reply")).to_contain_text("Please try the new profile.")
    expect(page.get_by_text("gateway 3")).to_have_count(0)
    expect(page.locator(".composer-tab")).to_have_count(0)
    expect(page.get_by_role("link", name="← My tickets")).to_be_visible()
    page.screenshot(path=screenshots_dir / f"ticket-applicant-view-{size}.png", full_page=True)
    context.close()


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_the_applicant_cancels_before_approval(people, live_server, browser, screenshots_dir, size):
    base = live_server.url
    ticket = submit(people, "Monitor flickers")
    context, page = open_as(browser, base, "alice", size)
    page.goto(f"{base}/console/tickets/{ticket.pk}/")
    expect(page.get_by_test_id("ticket-status")).to_have_text("Waiting for approval")
    page.screenshot(path=screenshots_dir / f"ticket-applicant-cancel-{size}.png", full_page=True)
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Cancel ticket").click()
    expect(page.locator(".message-success")).to_contain_text("is cancelled.")
    expect(page.get_by_test_id("ticket-status")).to_have_text("Cancelled")
    expect(page.get_by_test_id("actions-card")).to_have_count(0)
    expect(page.locator(".record-text").last).to_have_text("Cancelled by alice")
    page.screenshot(path=screenshots_dir / f"ticket-applicant-cancelled-{size}.png", full_page=True)
    assert Ticket.objects.get(pk=ticket.pk).process_status == ProcessStatus.CANCELLED
    context.close()
