"""The console in a real browser (Playwright + Debian's chromium) against a live server: a
handler logs in (to My work), accepts a ticket from the pending tab, sees it in My work, gets
a ticket assigned and watches the inbox badge change without reloading, then reads the message. An
applicant sees their ticket with the public reply only. A screenshot of each page goes to
$TEST_ARTIFACTS_DIR/screenshots."""

import re

import pytest
from playwright.sync_api import expect

from tests.browser.session import PASSWORD, TIMEOUT_MS, log_in
from tests.factories import ApproverFactory, HandlerGroupFactory, UserFactory
from ticketing.models import Category, ReplyType, Ticket, TicketStatus
from workflow import services

pytestmark = [pytest.mark.browser]


def submit_ticket(creator, group, title, priority=2, category=""):
    return services.ticket_submit(
        creator=creator,
        title=title,
        content=f"{title}: details from the applicant.",
        priority=priority,
        category=category,
        handler_group_id=group.pk,
    )


@pytest.fixture
def people(transactional_db):
    handler = UserFactory(username="hana", password=PASSWORD)
    return {
        "handler": handler,
        "applicant": UserFactory(username="alice", password=PASSWORD),
        "approver": ApproverFactory(username="avery"),
        # Tickets of the service desk wait in the pool; the network group assigns round robin.
        "desk": HandlerGroupFactory(name="Service desk", members=[handler], assign_strategy=0),
        "network": HandlerGroupFactory(name="Network", members=[handler], assign_strategy=1),
    }


def test_handler_accepts_from_the_pool_and_the_inbox_badge_follows_assignments(
    people, live_server, browser, settings, screenshots_dir
):
    settings.CONSOLE_BADGE_POLL_MS = 500
    base = live_server.url
    handler, applicant, approver = people["handler"], people["applicant"], people["approver"]
    Category.objects.bulk_create([Category(name="vpn"), Category(name="printer")])
    vpn = submit_ticket(applicant, people["desk"], "VPN drops every hour", 3, "vpn")
    printer = submit_ticket(applicant, people["desk"], "Printer jams on floor 2", 1, "printer")
    for ticket in (printer, vpn):
        services.ticket_approve(ticket_id=ticket.pk, approver=approver)

    context = browser.new_context(viewport={"width": 1280, "height": 800})
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()

    # Logging in: the console sends anonymous visitors to the login page.
    page.goto(f"{base}/console/")
    expect(page).to_have_url(re.compile(r"/accounts/login/\?next=/console/"))
    page.screenshot(path=screenshots_dir / "01-login.png")
    page.get_by_label("Username").fill("hana")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(f"{base}/console/")

    # The agent lands on My work (nothing of theirs yet); the pending tab lists both pool
    # tickets; accept one.
    expect(page.locator(".empty-title")).to_have_text("Nothing assigned to you right now.")
    page.locator('.tabs a[data-view="pending"]').click()
    expect(page).to_have_url(re.compile(r"view=pending"))
    vpn_row = page.locator(f'tr[data-ticket-id="{vpn.pk}"]')
    expect(vpn_row).to_be_visible()
    expect(page.locator(f'tr[data-ticket-id="{printer.pk}"]')).to_be_visible()
    expect(vpn_row.locator(".sla-badge")).to_contain_text("left")
    page.screenshot(path=screenshots_dir / "02-pool-pending.png", full_page=True)
    vpn_row.get_by_role("button", name=f"Accept {vpn.bill_code}").click()
    expect(page.locator(".message-success")).to_contain_text("it is now in My work")
    expect(vpn_row).to_have_count(0)
    assert Ticket.objects.get(pk=vpn.pk).ticket_status == TicketStatus.PROCESSING

    # ... and it has moved to My work.
    page.locator('.tabs a[data-view="mine"]').click()
    expect(page).to_have_url(re.compile(r"view=mine"))
    expect(vpn_row).to_be_visible()
    expect(vpn_row).to_contain_text("processing")
    # Taking it from the pool put its assignment notice in the inbox: the badge says so.
    badge = page.locator("#unread-badge")
    expect(badge).to_have_text("1")
    page.screenshot(path=screenshots_dir / "03-pool-my-handling.png", full_page=True)

    # A ticket is approved into the round-robin group: assigned to the handler, who is told.
    # The badge changes by polling; a marker set in the page proves there was no reload.
    page.evaluate("() => { window.journeyMarker = 'still here'; }")
    outage = submit_ticket(applicant, people["network"], "Wi-Fi outage in building B", 4)
    services.ticket_approve(ticket_id=outage.pk, approver=approver)
    assert Ticket.objects.get(pk=outage.pk).handler_id == handler.pk
    expect(badge).to_have_text("2")
    expect(badge).to_have_class(re.compile(r"\bbadge-unread\b"))
    assert page.evaluate("() => window.journeyMarker") == "still here"

    # The ticket page: reply publicly from the browser; an internal note comes from a colleague.
    vpn_row.get_by_role("link").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("VPN drops every hour")
    page.get_by_label("Your message").fill("Please try the new VPN profile.")
    page.get_by_role("button", name="Send to customer").click()
    expect(page.locator(".message-success")).to_have_text("Reply sent.")
    services.ticket_reply(
        ticket_id=vpn.pk,
        author=handler,
        reply_type=ReplyType.INTERNAL,
        content="Internal: gateway 3 is flapping.",
    )
    page.reload()
    expect(page.locator(".reply-internal")).to_contain_text("gateway 3 is flapping")
    expect(page.get_by_role("button", name="Complete")).to_be_visible()
    expect(page.get_by_role("button", name="Waiting on applicant")).to_be_visible()
    page.screenshot(path=screenshots_dir / "04-ticket-detail.png", full_page=True)

    # The inbox shows the assignment; marking it read brings the badge back to 0.
    page.get_by_role("link", name=re.compile(r"^Inbox")).click()
    message = page.locator(".notification", has_text=outage.bill_code)
    expect(message).to_contain_text("assigned to you")
    expect(message).to_have_class(re.compile(r"\bis-unread\b"))
    page.screenshot(path=screenshots_dir / "05-inbox.png", full_page=True)
    message.get_by_role("button", name=re.compile(r"^Mark .* read$")).click()
    expect(badge).to_have_text("1")
    taken = page.locator(".notification", has_text=vpn.bill_code)
    expect(taken).to_contain_text("assigned to you")
    taken.get_by_role("button", name=re.compile(r"^Mark .* read$")).click()
    expect(badge).to_have_text("0")
    expect(page.locator(".notification", has_text=outage.bill_code)).to_have_class(
        re.compile(r"\bis-read\b")
    )
    context.close()

    # The applicant: their tickets, and the public reply without the internal note.
    applicant_context = browser.new_context(viewport={"width": 1280, "height": 800})
    applicant_context.set_default_timeout(TIMEOUT_MS)
    applicant_page = applicant_context.new_page()
    log_in(applicant_page, base, "alice", lands_on="/console/my-tickets/")
    applicant_page.get_by_role("link", name="My tickets").click()
    for ticket in (vpn, printer, outage):
        expect(applicant_page.locator(f'tr[data-ticket-id="{ticket.pk}"]')).to_be_visible()
    applicant_page.screenshot(path=screenshots_dir / "06-applicant-my-tickets.png", full_page=True)
    applicant_page.locator(f'tr[data-ticket-id="{vpn.pk}"]').get_by_role("link").click()
    expect(applicant_page.locator(".reply")).to_have_count(1)
    expect(applicant_page.locator(".reply")).to_contain_text("Please try the new VPN profile.")
    expect(applicant_page.get_by_text("gateway 3 is flapping")).to_have_count(0)
    applicant_page.screenshot(path=screenshots_dir / "07-applicant-ticket.png", full_page=True)
    applicant_page.get_by_role("link", name="New ticket").first.click()
    applicant_page.get_by_label("Title").fill("Monitor flickers")
    applicant_page.get_by_label("Describe the problem").fill("Since this morning.")
    applicant_page.screenshot(path=screenshots_dir / "08-applicant-submit.png", full_page=True)
    applicant_page.get_by_role("button", name="Submit ticket").click()
    expect(applicant_page.locator(".message-success")).to_contain_text("submitted")
    assert Ticket.objects.filter(creator=applicant, title="Monitor flickers").exists()
    applicant_context.close()

    # A phone: the pool is usable at 390 px wide (cards, no sideways scrolling).
    phone = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    phone.set_default_timeout(TIMEOUT_MS)
    phone_page = phone.new_page()
    log_in(phone_page, base, "hana", lands_on="/console/")
    expect(phone_page.locator(f'tr[data-ticket-id="{outage.pk}"]')).to_be_visible()
    phone_page.locator('.tabs a[data-view="pending"]').click()
    expect(phone_page.locator(f'tr[data-ticket-id="{printer.pk}"]')).to_be_visible()
    scroll_width = phone_page.evaluate("() => document.documentElement.scrollWidth")
    assert scroll_width <= 390
    phone_page.screenshot(path=screenshots_dir / "09-phone-pool.png", full_page=True)
    phone.close()

    for name in (
        "01-login",
        "02-pool-pending",
        "03-pool-my-handling",
        "04-ticket-detail",
        "05-inbox",
        "06-applicant-my-tickets",
        "09-phone-pool",
    ):
        assert (screenshots_dir / f"{name}.png").stat().st_size > 0
