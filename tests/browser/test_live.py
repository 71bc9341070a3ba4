"""Live pages in a real browser against the real ASGI server (config/asgi.py under uvicorn;
live_server is WSGI and cannot stream), with three people in three browser contexts: two
agents of the ticket's group and its applicant, at 1366x900 and 390x844, in English and in
Chinese. Each change shows on the others' open pages within 3 s, without a reload and without
losing what is typed or ticked; an internal note reaches the team only; the team sees who else
is viewing or replying; the approvals queue follows new submissions."""

import pytest
from django.utils import translation
from playwright.sync_api import expect

from accounts.models import Profile
from tests.browser.session import PASSWORD, TIMEOUT_MS, log_in
from tests.factories import ApproverFactory, HandlerGroupFactory, UserFactory
from tests.live.server import asgi_server, live_stream  # noqa: F401
from workflow import services

pytestmark = [pytest.mark.browser]

VIEWPORTS = {"desktop": {"width": 1366, "height": 900}, "phone": {"width": 390, "height": 844}}
LANGUAGES = ["en", "zh-hans"]
LIVE_MS = 3_000  # the promise: within 3 s
BOX = "form.composer textarea"
SEND = "form.composer .composer-send"


@pytest.fixture(params=LANGUAGES)
def lang(request):
    return request.param


def said(lang: str, message: str, **values) -> str:
    """What the page says in `lang` (from the compiled catalogue)."""
    with translation.override(lang):
        return translation.gettext(message) % values


def selected(lang: str, count: int) -> str:
    """The approvals' "N selected" ({% translate %} keeps its %% escaped in the catalogue)."""
    with translation.override(lang):
        template = translation.gettext("%%(count)s selected").replace("%%", "%")
    return template % {"count": count}


@pytest.fixture
def people(transactional_db, lang):
    bob = UserFactory(username="it_bob", password=PASSWORD)
    carol = UserFactory(username="it_carol", password=PASSWORD)
    alice = UserFactory(username="alice", password=PASSWORD)
    approver = ApproverFactory(username="avery", password=PASSWORD)
    for user in (bob, carol, alice, approver):
        Profile.objects.update_or_create(user=user, defaults={"time_zone": "UTC", "language": lang})
    return {
        "bob": bob,
        "carol": carol,
        "alice": alice,
        "approver": approver,
        "desk": HandlerGroupFactory(name="Service desk", members=[bob, carol], assign_strategy=0),
    }


def submit(people, title: str, content: str, priority: int = 3):
    """The applicant's ticket for the service desk (awaiting approval)."""
    return services.ticket_submit(
        creator=people["alice"],
        title=title,
        content=content,
        priority=priority,
        handler_group_id=people["desk"].pk,
    )


@pytest.fixture
def ticket(people):
    ticket = submit(people, "VPN drops", "VPN drops every hour.", priority=2)
    services.ticket_approve(ticket_id=ticket.pk, approver=people["approver"])
    services.ticket_accept(ticket_id=ticket.pk, handler=people["bob"])
    return ticket


def new_page(browser, base, size, username, lang):
    context = browser.new_context(viewport=VIEWPORTS[size], is_mobile=size == "phone")
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    log_in(page, base, username)
    return context, page


def open_ticket(browser, base, ticket, size, username, lang):
    context, page = new_page(browser, base, size, username, lang)
    page.goto(f"{base}/console/tickets/{ticket.pk}/")
    expect(page.locator("html")).to_have_attribute("lang", lang)
    expect(page.locator("html")).to_have_attribute("data-live", "open")
    return context, page


@pytest.mark.parametrize("size", list(VIEWPORTS))
def test_three_people_see_each_others_changes_live(
    people,
    ticket,
    asgi_server,  # noqa: F811
    browser,
    screenshots_dir,
    size,  # noqa: F811
    lang,
):
    base = asgi_server
    bob_context, bob = open_ticket(browser, base, ticket, size, "it_bob", lang)
    carol_context, carol = open_ticket(browser, base, ticket, size, "it_carol", lang)
    alice_context, alice = open_ticket(browser, base, ticket, size, "alice", lang)

    # Who else is here: the team sees each other, by name; the applicant sees no one.
    expect(bob.get_by_test_id("viewers")).to_contain_text(
        said(lang, "%(name)s is viewing", name="it_carol"), timeout=LIVE_MS
    )
    expect(carol.get_by_test_id("viewers")).to_contain_text(
        said(lang, "%(name)s is viewing", name="it_bob"), timeout=LIVE_MS
    )
    expect(alice.get_by_test_id("viewers")).to_have_count(0)

    # Bob is half-way through a reply when the applicant answers.
    bob.locator(BOX).fill("Half-typed: could you try")
    expect(carol.get_by_test_id("viewers")).to_contain_text(
        said(lang, "%(name)s is replying…", name="it_bob"), timeout=LIVE_MS
    )
    alice.locator(BOX).fill("It dropped again at 10:05.")
    alice.locator(SEND).click()
    expect(bob.get_by_test_id("conversation")).to_contain_text(
        "It dropped again at 10:05.", timeout=LIVE_MS
    )
    expect(carol.get_by_test_id("conversation")).to_contain_text(
        "It dropped again at 10:05.", timeout=LIVE_MS
    )
    expect(bob.locator(BOX)).to_have_value("Half-typed: could you try")

    # Carol's internal note: Bob sees it, the applicant never does (nor any trace of it).
    carol.locator("label[for=reply-type-internal]").click()
    carol.locator(BOX).fill("NOTE: gateway 3 is flapping.")
    carol.locator(SEND).click()
    expect(bob.get_by_test_id("conversation")).to_contain_text(
        "gateway 3 is flapping", timeout=LIVE_MS
    )
    expect(bob.locator(BOX)).to_have_value("Half-typed: could you try")
    # A public reply after the note: once the applicant has it, the note would have come first.
    services.ticket_reply(
        ticket_id=ticket.pk, author=people["carol"], reply_type=1, content="We are on it."
    )
    expect(alice.get_by_test_id("conversation")).to_contain_text("We are on it.", timeout=LIVE_MS)
    expect(alice.locator("body")).not_to_contain_text("gateway 3")

    # A status change (Bob completes it) shows on every open page.
    head_before = {
        name: page.locator(".ticket-head").inner_text()
        for name, page in (("alice", alice), ("carol", carol))
    }
    services.ticket_complete(ticket_id=ticket.pk, handler=people["bob"])
    for name, page in (("alice", alice), ("carol", carol)):
        expect(page.locator(".ticket-head")).not_to_have_text(head_before[name], timeout=LIVE_MS)
    bob.screenshot(path=screenshots_dir / f"live-ticket-agent-{lang}-{size}.png", full_page=True)

    # Carol leaves: Bob's page stops showing her.
    carol_context.close()
    expect(bob.get_by_test_id("viewers")).to_have_count(0, timeout=LIVE_MS)
    bob_context.close()
    alice_context.close()


@pytest.mark.parametrize("size", list(VIEWPORTS))
def test_the_pool_list_and_its_counts_follow_new_tickets(
    people,
    ticket,
    asgi_server,  # noqa: F811
    browser,
    size,
    lang,
):
    context, page = new_page(browser, asgi_server, size, "it_carol", lang)
    page.goto(f"{asgi_server}/console/?view=pending")
    expect(page.locator("html")).to_have_attribute("lang", lang)
    expect(page.locator("html")).to_have_attribute("data-live", "open")
    count = page.locator(".tabs [data-count=pending]")
    before = count.inner_text()
    fresh = submit(people, "Monitor flickers", "It flickers.")
    services.ticket_approve(ticket_id=fresh.pk, approver=people["approver"])
    expect(count).not_to_have_text(before, timeout=LIVE_MS)
    expect(page.locator("main")).to_contain_text("Monitor flickers", timeout=LIVE_MS)
    context.close()


@pytest.mark.parametrize("size", list(VIEWPORTS))
def test_the_approvals_queue_follows_submissions_and_keeps_the_ticks(
    people,
    ticket,
    asgi_server,  # noqa: F811
    browser,
    size,
    lang,
):
    waiting = submit(people, "Laptop for the new hire", "Starts Monday.")
    context, page = new_page(browser, asgi_server, size, "avery", lang)
    page.goto(f"{asgi_server}/console/approvals/")
    expect(page.locator("html")).to_have_attribute("lang", lang)
    expect(page.locator("html")).to_have_attribute("data-live", "open")
    page.locator(f"#ticket-{waiting.pk} [data-select-row]").check()
    count = page.locator("[data-selected-count]")
    expect(count).to_have_text(selected(lang, 1))

    # A new submission arrives while the approver has a row ticked: it appears, the tick stays.
    fresh = submit(people, "Second monitor", "For the new hire.")
    expect(page.locator(f"#ticket-{fresh.pk}")).to_be_visible(timeout=LIVE_MS)
    expect(page.locator(f"#ticket-{waiting.pk} [data-select-row]")).to_be_checked()
    expect(count).to_have_text(selected(lang, 1))

    # Another approver decides the ticked one elsewhere: its row (and its tick) leave.
    other = ApproverFactory(username="avery2")
    services.ticket_approve(ticket_id=waiting.pk, approver=other)
    expect(page.locator(f"#ticket-{waiting.pk}")).to_have_count(0, timeout=LIVE_MS)
    expect(page.locator(f"#ticket-{fresh.pk}")).to_be_visible()
    page.locator(f"#ticket-{fresh.pk} [data-select-row]").check()  # the delegated handler
    expect(count).to_have_text(selected(lang, 1))
    context.close()


def test_on_the_split_view_the_list_and_the_ticket_beside_it_both_follow(
    people,
    ticket,
    asgi_server,  # noqa: F811
    browser,
    lang,
):
    context = browser.new_context(viewport={"width": 1920, "height": 1080})
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    log_in(page, asgi_server, "it_bob")
    page.goto(f"{asgi_server}/console/?view=all")
    expect(page.locator("html")).to_have_attribute("data-live", "open")
    pane = page.locator("[data-split-pane]")
    page.locator(f"tr[data-ticket-id='{ticket.pk}'] [data-row-link]").click()
    expect(pane.locator("[data-ticket-page]")).to_be_visible()
    expect(pane).to_have_attribute("data-live", "open")

    # The applicant answers: the ticket beside the list shows it, the draft in its box stays.
    pane.locator(BOX).fill("Half-typed in the pane")
    services.ticket_reply(
        ticket_id=ticket.pk, author=people["alice"], reply_type=1, content="Still dropping."
    )
    expect(pane.get_by_test_id("conversation")).to_contain_text("Still dropping.", timeout=LIVE_MS)
    expect(pane.locator(BOX)).to_have_value("Half-typed in the pane")

    # The list beside it follows too, though the address bar now names the ticket.
    fresh = submit(people, "Headset crackles", "It crackles.")
    services.ticket_approve(ticket_id=fresh.pk, approver=people["approver"])
    expect(page.locator(".split-list")).to_contain_text("Headset crackles", timeout=LIVE_MS)
    expect(pane.locator(BOX)).to_have_value("Half-typed in the pane")

    # Closing the pane ends its stream.
    pane.locator("[data-split-close]").click()
    expect(pane).to_be_hidden()
    expect(pane).not_to_have_attribute("data-live", "open")
    context.close()


def test_the_pools_bulk_bar_keeps_what_is_typed_and_ticked_when_the_list_follows(
    people,
    ticket,
    asgi_server,  # noqa: F811
    browser,
    lang,
):
    """The bar is inside the region live.js swaps: a tag half-typed, the action chosen and the
    rows ticked survive a new ticket arriving (focus on a checkbox is no typing: the swap
    does not wait)."""
    context, page = new_page(browser, asgi_server, "desktop", "it_bob", lang)
    page.goto(f"{asgi_server}/console/?view=all")
    expect(page.locator("html")).to_have_attribute("data-live", "open")
    page.get_by_test_id("bulk-action").select_option("remove_tags")
    page.get_by_test_id("bulk-tags").fill("vpn, floor 2")
    box = page.locator(f"tr[data-ticket-id='{ticket.pk}'] [data-bulk-row]")
    box.check()

    fresh = submit(people, "Headset crackles", "It crackles.")
    services.ticket_approve(ticket_id=fresh.pk, approver=people["approver"])
    expect(page.locator(f"tr[data-ticket-id='{fresh.pk}']")).to_be_visible(timeout=LIVE_MS)
    expect(page.get_by_test_id("bulk-action")).to_have_value("remove_tags")
    expect(page.get_by_test_id("bulk-tags")).to_have_value("vpn, floor 2")
    expect(page.get_by_test_id("bulk-tags")).to_be_visible()
    expect(page.locator(f"tr[data-ticket-id='{ticket.pk}'] [data-bulk-row]")).to_be_checked()
    context.close()
