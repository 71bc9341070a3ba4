"""Issue 24, point 5, in a real browser at 1366×900 and 390×844, in English and Chinese: on a
ticket with 12 replies the latest reply and the composer are on screen without scrolling, list
rows are one line (at most 44 px) with every cell as tall as its row, a rejected ticket's
Chinese status (已驳回) stays on one line, `?` lists every shortcut and Esc closes the list,
and at 1920 px a row of the work list opens its ticket beside the list.

The same tests draw the screenshots in docs/: with TICKETDESK_DOCS_SCREENSHOTS=docs/screenshots
(`make screenshots`) they are written there as well as to $TEST_ARTIFACTS_DIR/screenshots."""

import os
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from accounts.models import Profile
from tests.browser.session import PASSWORD, TIMEOUT_MS, log_in
from tests.factories import ApproverFactory, HandlerGroupFactory, UserFactory
from ticketing.models import ReplyType, TicketReply
from workflow import services

pytestmark = [pytest.mark.browser]

VIEWPORTS = {
    "desktop": {"width": 1366, "height": 900},
    "phone": {"width": 390, "height": 844},
    "wide": {"width": 1920, "height": 1080},
}
LANGS = ("en", "zh-hans")
ROW_MAX_PX = 44


def docs_screenshot(page, screenshots_dir: Path, name: str, full_page: bool = False) -> None:
    """Save to the test artifacts and, when asked for (make screenshots), into docs/."""
    page.screenshot(path=screenshots_dir / name, full_page=full_page)
    folder = os.environ.get("TICKETDESK_DOCS_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=Path(folder) / name, full_page=full_page)


@pytest.fixture
def desk(transactional_db):
    """A service desk as the demo has it: an agent with a long conversation, a pool of new
    tickets, an approver with a queue, a leader, and an applicant with a rejected ticket."""
    bob = UserFactory(username="it_bob", password=PASSWORD)
    lead = UserFactory(username="lead_it", password=PASSWORD)
    alice = UserFactory(username="alice", password=PASSWORD)
    avery = ApproverFactory(username="avery", password=PASSWORD)
    group = HandlerGroupFactory(
        name="Service desk (hardware, accounts, network)",
        members=[bob],
        leader=lead,
        assign_strategy=0,
    )

    def submit(title, priority=2):
        return services.ticket_submit(
            creator=alice,
            title=title,
            content=f"{title}. It started this morning after the update; details below.",
            priority=priority,
            handler_group_id=group.pk,
        )

    ticket = submit("VPN drops every hour on the office network", priority=3)
    services.ticket_approve(ticket_id=ticket.pk, approver=avery)
    services.ticket_accept(ticket_id=ticket.pk, handler=bob)
    start = timezone.now() - timedelta(hours=3)
    for i in range(12):
        agent_turn = i % 2 == 1
        reply = services.ticket_reply(
            ticket_id=ticket.pk,
            author=bob if agent_turn else alice,
            reply_type=ReplyType.INTERNAL if i in (5, 9) else ReplyType.PUBLIC,
            content=(
                f"Reply {i + 1}: "
                + (
                    "Could you try the new VPN profile and tell me when it drops next?"
                    if agent_turn
                    else "It dropped again at the top of the hour, right in a call."
                )
            ),
        )
        TicketReply.objects.filter(pk=reply.pk).update(created=start + timedelta(minutes=10 * i))
    TicketReply.objects.filter(ticket=ticket, content__startswith="Reply 12:").update(
        content="Reply 12: the latest one — the profile helped, no drop since."
    )
    pool = [
        submit("Printer on floor 3 prints blank pages", priority=2),
        submit("New starter needs a laptop and an account for Monday", priority=3),
        submit("Outlook asks for the password every ten minutes", priority=4),
    ]
    for t in pool:
        services.ticket_approve(ticket_id=t.pk, approver=avery)
    waiting = [submit("Monitor flickers"), submit("Access to the finance share")]
    rejected = submit("Please install a game on my work laptop")
    services.ticket_reject(ticket_id=rejected.pk, approver=avery, reason="Not for work use.")
    return {
        "bob": bob, "lead": lead, "alice": alice, "avery": avery, "group": group,
        "ticket": ticket, "pool": pool, "waiting": waiting, "rejected": rejected,
    }  # fmt: skip


def open_as(browser, base, user, size, lang="en"):
    Profile.objects.update_or_create(user=user, defaults={"language": lang})
    context = browser.new_context(
        viewport=VIEWPORTS[size],
        is_mobile=size == "phone",
        locale="zh-CN" if lang != "en" else "en-US",
        timezone_id="Europe/Berlin",
    )
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    log_in(page, base, user.get_username())
    return context, page


def in_viewport(box, viewport) -> bool:
    return (
        box is not None
        and box["y"] >= 0
        and box["y"] + box["height"] <= viewport["height"]
        and box["x"] >= 0
        and box["x"] + box["width"] <= viewport["width"]
    )


@pytest.mark.parametrize("lang", LANGS)
def test_the_latest_reply_and_the_composer_are_on_screen_without_scrolling(
    desk, live_server, browser, screenshots_dir, lang
):
    base = live_server.url
    context, page = open_as(browser, base, desk["bob"], "desktop", lang)
    page.goto(f"{base}/console/tickets/{desk['ticket'].pk}/")
    expect(page.locator(".reply")).to_have_count(12)
    assert page.evaluate("() => window.scrollY") == 0
    viewport = VIEWPORTS["desktop"]
    latest = page.locator(".reply").last
    expect(latest).to_contain_text("Reply 12: the latest one")
    assert in_viewport(latest.bounding_box(), viewport), latest.bounding_box()
    for part in (
        page.get_by_test_id("composer").locator("textarea"),
        page.locator(".composer-send"),
    ):
        assert in_viewport(part.bounding_box(), viewport), part.bounding_box()
    # The first reply is still there: the conversation scrolls within itself.
    first = page.locator(".reply").first
    assert not in_viewport(first.bounding_box(), viewport) or page.evaluate(
        "() => { const c = document.getElementById('conversation');"
        " return c.scrollHeight > c.clientHeight; }"
    )
    first.scroll_into_view_if_needed()
    expect(first).to_be_in_viewport()
    # The actions and the SLA card are beside the conversation, not under it.
    actions = page.get_by_test_id("actions-card").bounding_box()
    replies = page.locator("#replies").bounding_box()
    assert actions["x"] >= replies["x"] + replies["width"]
    assert actions["y"] < viewport["height"]
    # History and "Why this agent?" fold below; opening History shows its lines.
    history = page.locator("#fold-history")
    expect(history.get_by_test_id("history-line").first).to_be_hidden()
    history.locator("summary").click()
    expect(history.get_by_test_id("history-line").first).to_be_visible()
    history.locator("summary").click()
    page.evaluate("() => window.scrollTo(0, 0)")
    latest.scroll_into_view_if_needed()
    assert page.evaluate("() => window.scrollY") == 0
    docs_screenshot(page, screenshots_dir, f"layout-ticket-desktop-{lang}.png")
    context.close()


@pytest.mark.parametrize("lang", LANGS)
def test_the_ticket_page_on_a_phone_puts_actions_first_and_never_overflows(
    desk, live_server, browser, screenshots_dir, lang
):
    base = live_server.url
    context, page = open_as(browser, base, desk["bob"], "phone", lang)
    page.goto(f"{base}/console/tickets/{desk['ticket'].pk}/")
    actions = page.get_by_test_id("actions-card").bounding_box()
    replies = page.locator("#replies").bounding_box()
    assert actions["y"] < replies["y"]
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    page.locator("body").press("r")
    expect(page.get_by_test_id("composer").locator("textarea")).to_be_focused()
    page.evaluate("() => { document.activeElement.blur(); window.scrollTo(0, 0); }")
    docs_screenshot(page, screenshots_dir, f"layout-ticket-phone-{lang}.png")
    context.close()


def row_geometry(page):
    """Per list row: its height and its first cell's (the cell whose bottom border ended mid-
    row when it was a block)."""
    return page.evaluate(
        """() => [...document.querySelectorAll('[data-keyboard-list] tbody tr')].map(tr => {
             const row = tr.getBoundingClientRect(), first = tr.cells[0].getBoundingClientRect();
             return {row: row.height, first: first.height, top: row.top, firstTop: first.top,
                     display: getComputedStyle(tr.cells[0]).display};
           })"""
    )


LISTS = [
    ("bob", "/console/?view=mine"),
    ("bob", "/console/?view=pending"),
    ("lead", "/console/?view=all"),
    ("avery", "/console/approvals/"),
    ("alice", "/console/my-tickets/"),
]


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize(("who", "path"), LISTS)
def test_list_rows_are_one_line_and_every_cell_fills_its_row(
    desk, live_server, browser, screenshots_dir, lang, who, path
):
    base = live_server.url
    context, page = open_as(browser, base, desk[who], "desktop", lang)
    page.goto(base + path)
    rows = row_geometry(page)
    assert rows, "the list has rows"
    for row in rows:
        assert row["row"] <= ROW_MAX_PX, row
        assert row["display"] == "table-cell", row
        assert abs(row["first"] - row["row"]) <= 1, row  # the first column's border: full height
        assert abs(row["firstTop"] - row["top"]) <= 1, row
    if who == "bob" and path.endswith("pending"):
        docs_screenshot(page, screenshots_dir, f"layout-pool-desktop-{lang}.png")
    # On a phone the rows become cards: nothing runs past the screen and no text overlaps.
    page.set_viewport_size(VIEWPORTS["phone"])
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    overlaps = page.evaluate(
        """() => {
             const bad = [];
             for (const tr of document.querySelectorAll('[data-keyboard-list] tbody tr')) {
               const cells = [...tr.cells].filter(c => c.offsetParent !== null)
                 .map(c => c.getBoundingClientRect()).filter(r => r.height > 0 && r.width > 0);
               for (let i = 0; i < cells.length; i++)
                 for (let j = i + 1; j < cells.length; j++) {
                   const a = cells[i], b = cells[j];
                   if (a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1
                       && b.top < a.bottom - 1) bad.push([i, j]);
                 }
             }
             return bad;
           }"""
    )
    assert overlaps == []
    context.close()


def text_lines(page, selector):
    """How many lines the text of the element takes (distinct tops of its line boxes)."""
    return page.evaluate(
        """(sel) => { const el = document.querySelector(sel); const range = document.createRange();
             range.selectNodeContents(el);
             return new Set([...range.getClientRects()].filter(r => r.width > 0)
               .map(r => Math.round(r.top))).size; }""",
        selector,
    )


@pytest.mark.parametrize("lang", LANGS)
def test_inbox_messages_are_one_line_on_a_desktop(desk, live_server, browser, lang):
    base = live_server.url
    context, page = open_as(browser, base, desk["bob"], "desktop", lang)
    page.goto(f"{base}/inbox/")
    heights = page.locator("[data-keyboard-list] [data-keyboard-row]").evaluate_all(
        "(rows) => rows.map(r => r.getBoundingClientRect().height)"
    )
    assert heights, "bob has messages"
    assert max(heights) <= ROW_MAX_PX, heights
    # The clipped text is whole in its tooltip.
    body = page.locator(".notification-body").first
    assert body.get_attribute("title") == body.text_content()
    page.set_viewport_size(VIEWPORTS["phone"])
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    context.close()


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_a_rejected_tickets_chinese_status_stays_on_one_line(desk, live_server, browser, size):
    base = live_server.url
    context, page = open_as(browser, base, desk["alice"], size, "zh-hans")
    page.goto(f"{base}/console/my-tickets/")
    row = f"tr[data-ticket-id='{desk['rejected'].pk}'] [data-testid=status-cell]"
    expect(page.locator(row)).to_contain_text("已驳回")
    assert text_lines(page, row) == 1
    # The bounding box agrees: no taller than one line of its text (plus the cell's padding).
    height, line, padding = page.evaluate(
        """(sel) => { const el = document.querySelector(sel), cs = getComputedStyle(el);
             return [el.getBoundingClientRect().height, parseFloat(cs.lineHeight),
                     parseFloat(cs.paddingTop) + parseFloat(cs.paddingBottom)]; }""",
        row,
    )
    if size == "desktop":
        assert height <= line + padding + 2, (height, line, padding)
        # The narrowest width that still draws a table, where the columns are tightest.
        page.set_viewport_size({"width": 720, "height": 900})
        assert text_lines(page, row) == 1
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 720
    context.close()


EVERY_SHORTCUT = ["?", "/", "j", "o", "x", "r", "ctrl+enter", "escape"]


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_question_mark_lists_every_shortcut_and_escape_closes_it(
    desk, live_server, browser, screenshots_dir, size, lang
):
    base = live_server.url
    context, page = open_as(browser, base, desk["bob"], size, lang)
    page.goto(f"{base}/console/tickets/{desk['ticket'].pk}/")
    dialog = page.get_by_test_id("shortcuts-dialog")
    expect(dialog).to_be_hidden()
    # Typing "?" in a field is text, not a shortcut.
    box = page.get_by_test_id("composer").locator("textarea")
    box.fill("")
    box.press("Shift+Slash")
    expect(box).to_have_value("?")
    expect(dialog).to_be_hidden()
    box.fill("")
    page.evaluate("() => document.activeElement.blur()")
    page.keyboard.press("Shift+Slash")
    expect(dialog).to_be_visible()
    keys = dialog.locator(".shortcut").evaluate_all("(els) => els.map(e => e.dataset.key)")
    assert keys == EVERY_SHORTCUT
    for item in dialog.locator(".shortcut").all():
        expect(item.locator("kbd").first).to_be_visible()
        assert item.locator("dd").inner_text().strip()
    if size == "desktop":
        docs_screenshot(page, screenshots_dir, f"layout-shortcuts-desktop-{lang}.png")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    # The footer's link opens it too.
    page.locator("[data-shortcuts-open]").click()
    expect(dialog).to_be_visible()
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    context.close()


@pytest.mark.parametrize("lang", LANGS)
def test_on_a_wide_screen_a_row_opens_its_ticket_beside_the_list(
    desk, live_server, browser, screenshots_dir, lang
):
    base = live_server.url
    context, page = open_as(browser, base, desk["bob"], "wide", lang)
    page.goto(f"{base}/console/?view=all")
    pane = page.locator("[data-split-pane]")
    expect(pane).to_be_hidden()
    ticket = desk["ticket"]
    page.locator(f"tr[data-ticket-id='{ticket.pk}'] [data-row-link]").click()
    expect(pane.locator("[data-ticket-page]")).to_be_visible()
    expect(pane.locator("h1")).to_contain_text(ticket.title)
    expect(page).to_have_url(f"{base}/console/tickets/{ticket.pk}/")
    expect(pane.locator(".reply-internal")).to_have_count(2)  # the agent's page: notes too
    list_box = page.locator(".split-list").bounding_box()
    pane_box = pane.bounding_box()
    assert pane_box["x"] >= list_box["x"] + list_box["width"]  # beside, not under
    expect(page.locator(".split-list table.tickets")).to_be_in_viewport()
    expect(pane.locator(".reply").last).to_be_in_viewport()
    expect(pane.locator(".composer-send")).to_be_in_viewport()
    # The pane's composer is the ticket page's: its draft is kept per ticket and person.
    expect(pane.locator("form.composer[data-composer-ready]")).to_have_count(1)
    pane.locator("form.composer textarea").fill("Drafted beside the list.")
    draft_key = f"td-composer-draft:{desk['bob'].pk}:{ticket.pk}"
    page.wait_for_function(
        "(key) => (localStorage.getItem(key) || '').includes('Drafted beside the list.')",
        arg=draft_key,
    )
    pane.locator("form.composer textarea").fill("")
    docs_screenshot(page, screenshots_dir, f"layout-split-view-{lang}.png")
    # Another row replaces the pane; Back goes to the first, then to the list alone.
    other = desk["pool"][0]
    page.locator(f"tr[data-ticket-id='{other.pk}'] [data-row-link]").click()
    expect(pane.locator("h1")).to_contain_text(other.title)
    page.go_back()
    expect(pane.locator("h1")).to_contain_text(ticket.title)
    page.go_back()
    expect(pane).to_be_hidden()
    expect(page).to_have_url(f"{base}/console/?view=all")
    # Esc closes the pane too.
    page.locator(f"tr[data-ticket-id='{other.pk}'] [data-row-link]").click()
    expect(pane.locator("h1")).to_contain_text(other.title)
    page.keyboard.press("Escape")
    expect(pane).to_be_hidden()
    # At 1366 px the same link opens the ticket's own page.
    page.set_viewport_size(VIEWPORTS["desktop"])
    page.locator(f"tr[data-ticket-id='{ticket.pk}'] [data-row-link]").click()
    expect(page).to_have_url(f"{base}/console/tickets/{ticket.pk}/")
    expect(page.locator("[data-split-pane]")).to_have_count(0)
    expect(page.locator("#replies")).to_be_visible()
    context.close()


def test_the_split_view_shows_an_applicant_only_what_their_page_shows(desk, live_server, browser):
    """The pane is the ticket page itself, fetched with the viewer's session: an applicant's
    list has no pane, and their ticket page never shows the internal notes."""
    base = live_server.url
    context, page = open_as(browser, base, desk["alice"], "wide")
    page.goto(f"{base}/console/my-tickets/")
    expect(page.locator("[data-split-pane]")).to_have_count(0)
    page.locator(f"tr[data-ticket-id='{desk['ticket'].pk}'] [data-row-link]").click()
    expect(page).to_have_url(f"{base}/console/tickets/{desk['ticket'].pk}/")
    expect(page.locator(".reply")).to_have_count(10)  # 12 minus the two internal notes
    expect(page.locator(".reply-internal")).to_have_count(0)
    context.close()


def test_the_supervisor_page_screenshot(desk, live_server, browser, screenshots_dir):
    base = live_server.url
    context, page = open_as(browser, base, desk["lead"], "desktop")
    page.goto(f"{base}/console/supervisor/")
    expect(page.locator("main")).to_contain_text("Service desk")
    docs_screenshot(page, screenshots_dir, "layout-supervisor-desktop-en.png", full_page=True)
    context.close()
