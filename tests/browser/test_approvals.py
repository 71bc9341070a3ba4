"""The approver's day in a real browser: the queue shows a preview of each ticket, two rows
are selected and approved at once, and the approver is back on the queue with the message and
the next ticket ready; one more is rejected in its row with a reason. At desktop width and on
a 390 px phone (nothing wider than the screen). Screenshots to $TEST_ARTIFACTS_DIR/screenshots."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from tests.browser.session import PASSWORD, TIMEOUT_MS, log_in
from tests.factories import ApproverFactory, HandlerGroupFactory, UserFactory
from ticketing.models import Category, ProcessStatus, Ticket
from workflow import services

pytestmark = [pytest.mark.browser]


@pytest.fixture
def queue(transactional_db):
    applicant = UserFactory(username="alice", password=PASSWORD)
    ApproverFactory(username="avery", password=PASSWORD)
    group = HandlerGroupFactory(
        name="Service desk", members=[UserFactory(username="hana")], assign_strategy=0
    )
    Category.objects.create(name="it")
    start = timezone.now() - timedelta(hours=2)
    subjects = [
        ("VPN drops every hour", "Since Monday the VPN client disconnects every hour. " * 5),
        ("New laptop for Sam", "Sam starts on the 3rd and needs a laptop with <b>16 GB</b>."),
        ("Printer on floor 2", "Paper jam again; the tray is broken."),
        ("Access to the finance share", "Please add me to the finance share, read only."),
    ]
    return [
        services.ticket_submit(
            creator=applicant,
            title=title,
            content=content,
            priority=2 + i % 2,
            category="it",
            handler_group_id=group.pk,
            now=start + timedelta(minutes=i),
        )
        for i, (title, content) in enumerate(subjects)
    ]


def test_an_approver_previews_and_bulk_approves_from_the_queue(
    queue, live_server, browser, screenshots_dir
):
    base = live_server.url
    vpn, laptop, printer, finance = queue
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    log_in(page, base, "avery")
    page.goto(f"{base}/console/approvals/")

    # Every row previews its content (escaped, cut with an ellipsis): no need to open it.
    vpn_row = page.locator(f'tr[data-ticket-id="{vpn.pk}"]')
    laptop_row = page.locator(f'tr[data-ticket-id="{laptop.pk}"]')
    expect(vpn_row.locator(".preview")).to_contain_text("Since Monday the VPN client")
    expect(vpn_row.locator(".preview")).to_contain_text("…")
    expect(laptop_row.locator(".preview")).to_contain_text("<b>16 GB</b>")
    expect(page.get_by_role("columnheader", name="Handler")).to_have_count(0)
    expect(page.get_by_role("columnheader", name="SLA")).to_have_count(0)
    expect(vpn_row.get_by_role("button", name=f"Approve {vpn.bill_code}")).to_be_visible()
    page.screenshot(path=screenshots_dir / "approvals-desktop.png", full_page=True)

    # Select two rows (by their labels) and approve them at once.
    page.get_by_label(f"Select {vpn.bill_code} {vpn.title}").check()
    page.get_by_label(f"Select {printer.bill_code} {printer.title}").check()
    expect(page.locator("[data-selected-count]")).to_have_text("2 selected")
    page.get_by_role("button", name="Approve selected").click()

    expect(page).to_have_url(re.compile(r"/console/approvals/\?focus=\d+"))
    expect(page.locator(".message-success")).to_have_text("Approved 2.")
    expect(page.locator(f'tr[data-ticket-id="{vpn.pk}"]')).to_have_count(0)
    expect(page.locator(f'tr[data-ticket-id="{printer.pk}"]')).to_have_count(0)
    expect(laptop_row).to_have_class(re.compile(r"\bis-next\b"))
    page.screenshot(path=screenshots_dir / "approvals-after-bulk.png", full_page=True)
    assert [Ticket.objects.get(pk=t.pk).process_status for t in queue] == [
        ProcessStatus.APPROVED,
        ProcessStatus.APPROVING,
        ProcessStatus.APPROVED,
        ProcessStatus.APPROVING,
    ]

    # Reject in the row: the reason field opens in place and is required.
    # (by keyboard: the summary is focusable and Enter opens it)
    opener = laptop_row.locator("summary")
    expect(opener).to_have_attribute("aria-label", f"Reject {laptop.bill_code}…")
    opener.focus()
    page.keyboard.press("Enter")
    reason = laptop_row.get_by_label(f"Reason for rejecting {laptop.bill_code}")
    expect(reason).to_be_visible()
    reason.fill("Hardware requests go through the HR portal.")
    laptop_row.get_by_role("button", name=f"Reject {laptop.bill_code}", exact=True).click()
    expect(page.locator(".message-success")).to_contain_text(f"{laptop.bill_code} is rejected")
    expect(page.locator(".message-success")).to_contain_text(f"Next: {finance.bill_code}")
    assert Ticket.objects.get(pk=laptop.pk).process_status == ProcessStatus.REJECTED
    context.close()

    # A phone: the queue as cards, nothing wider than the screen, the actions at hand.
    phone = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    phone.set_default_timeout(TIMEOUT_MS)
    phone_page = phone.new_page()
    log_in(phone_page, base, "avery")
    phone_page.goto(f"{base}/console/approvals/")
    row = phone_page.locator(f'tr[data-ticket-id="{finance.pk}"]')
    expect(row.locator(".preview")).to_contain_text("finance share")
    row.locator("summary", has_text="Reject").click()
    expect(row.get_by_label(f"Reason for rejecting {finance.bill_code}")).to_be_visible()
    width = phone_page.evaluate("document.scrollingElement.scrollWidth")
    assert width <= 390, f"the page is {width} px wide on a 390 px screen"
    phone_page.screenshot(path=screenshots_dir / "approvals-phone.png", full_page=True)
    phone.close()

    for name in ("approvals-desktop", "approvals-after-bulk", "approvals-phone"):
        assert (screenshots_dir / f"{name}.png").stat().st_size > 0
