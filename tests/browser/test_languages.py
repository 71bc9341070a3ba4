"""The console in Simplified Chinese, in a real browser: a whole journey — the applicant
switches language on the login page and submits, the approver (zh-hans in the profile)
approves from the queue, the agent (a Chinese browser, nothing chosen) accepts, replies and
completes, the applicant closes — with no English string of the catalogue left on any page
visited (checked against locale/zh_Hans/LC_MESSAGES/django.mo, not by eye), and no other
English words but the data the test typed. Then j/k in a list, and a time zone chosen on the
profile page. Screenshots at desktop width and on a phone."""

import gettext
import re
import zoneinfo
from pathlib import Path

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from accounts.models import Profile
from notifications.models import Notification
from sla.models import SlaRule
from tests.browser.session import PASSWORD, TIMEOUT_MS, log_in
from tests.factories import ApproverFactory, HandlerGroupFactory, UserFactory
from ticketing.models import Ticket, TicketStatus
from workflow import services

pytestmark = [pytest.mark.browser]

CATALOGUE = Path(__file__).resolve().parents[2] / "locale/zh_Hans/LC_MESSAGES/django.mo"
VIEWPORTS = {
    "desktop": {"viewport": {"width": 1280, "height": 800}},
    "phone": {"viewport": {"width": 390, "height": 844}, "is_mobile": True},
}

# Every text on the page: text nodes (hidden ones too: screen readers read them), the
# attributes people read (labels, tooltips, placeholders, confirmations) and the title.
PAGE_TEXTS = """() => {
  const out = [document.title];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const parent = walker.currentNode.parentElement;
    if (!parent || parent.closest("script, style, noscript")) continue;
    const text = walker.currentNode.textContent.replace(/\\s+/g, " ").trim();
    if (text) out.push(text);
  }
  const names = ["aria-label", "title", "placeholder", "data-confirm"];
  for (const el of document.querySelectorAll(names.map((n) => `[${n}]`).join(", "))) {
    for (const name of names) {
      const value = el.getAttribute(name);
      if (value && value.trim()) out.push(value.replace(/\\s+/g, " ").trim());
    }
  }
  return out;
}"""

PLACEHOLDER = re.compile(r"%\(\w+\)[sd]|%[sd]")
ZONES = zoneinfo.available_timezones()


def english_patterns() -> list[tuple[str, re.Pattern]]:
    """The catalogue's English msgids whose Chinese differs, as patterns matching the English
    as it would appear on a page (placeholders filled with anything)."""
    catalogue = gettext.GNUTranslations(CATALOGUE.open("rb"))._catalog
    patterns = []
    for key, chinese in catalogue.items():
        msgid = key[0] if isinstance(key, tuple) else key
        msgid = msgid.split("\x04", 1)[-1]  # context
        words = PLACEHOLDER.sub("", re.sub(r"<[^>]+>", "", msgid))
        if not msgid or chinese == msgid or not re.search(r"[A-Za-z]{2}", words):
            continue
        text = re.sub(r"<[^>]+>", " ", msgid)  # markup inside blocktranslate
        parts = [re.sub(r"(\\\s)+", r"\\s+", re.escape(p)) for p in PLACEHOLDER.split(text)]
        body = r".+?".join(parts).strip()
        if len(text.split()) >= 2:
            patterns.append((msgid, re.compile(body)))  # a phrase: anywhere in a text
        else:
            patterns.append((msgid, re.compile(rf"(?:^|\W){body}(?:\W|$)")))
    return patterns


class Untranslated:
    """Collects, page by page, English left on a Chinese page."""

    def __init__(self, allowed_words: set[str], data: set[str]):
        self.patterns = english_patterns()
        self.data = data
        self.allowed = {w.lower() for w in allowed_words}
        self.found: dict[str, set[str]] = {}

    def check(self, page, name: str) -> None:
        texts = page.evaluate(PAGE_TEXTS)
        assert any(re.search(r"[\u4e00-\u9fff]", t) for t in texts), f"{name}: no Chinese at all"
        for text in texts:
            if text in ZONES or text in self.data:
                continue  # the time zone list, names operators gave: data
            for msgid, pattern in self.patterns:
                if pattern.search(text):
                    self.found.setdefault(name, set()).add(f"catalogue: {msgid!r} in {text!r}")
            words = [w for w in re.findall(r"[A-Za-z][A-Za-z'’-]+", text) if len(w) > 1]
            stray = [w for w in words if w.strip("-'’").lower() not in self.allowed]
            if stray:
                self.found.setdefault(name, set()).add(f"english: {text!r}")

    def assert_none(self) -> None:
        assert not self.found, "\n".join(
            f"{page}: {line}" for page, lines in self.found.items() for line in sorted(lines)
        )


@pytest.fixture
def cast(transactional_db):
    agent = UserFactory(username="hana", password=PASSWORD)
    applicant = UserFactory(username="mei", password=PASSWORD)
    approver = ApproverFactory(username="avery", password=PASSWORD)
    Profile.objects.create(user=approver, language="zh-hans", time_zone="Asia/Shanghai")
    group = HandlerGroupFactory(name="网络组", members=[agent], assign_strategy=1)
    return {"agent": agent, "applicant": applicant, "approver": approver, "group": group}


def new_page(browser, device: str, **extra):
    context = browser.new_context(**VIEWPORTS[device], **extra)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    page.on("dialog", lambda dialog: dialog.accept())  # "Complete this ticket?" and the like
    return context, page


@pytest.mark.parametrize("device", list(VIEWPORTS))
def test_a_whole_journey_in_chinese_leaves_no_english_on_any_page(
    device, cast, live_server, browser, screenshots_dir
):
    base = live_server.url
    title, details, answer = "无法连接 VPN", "从今天早上开始连不上。", "请更新 VPN 配置后再试。"
    check = Untranslated(
        # Data, not interface: names, the product, codes, time zones, the language's name.
        {"hana", "mei", "avery", "Ticketdesk", "SLA", "VPN", "English", "UTC", "CST", "Asia"}
        | {"Shanghai", "TK", "vpn", "printer", "API", "ISO", "ID"}
        # Key caps as printed on keyboards, and names of things (the composer's hint).
        | {"Ctrl", "Enter", "Esc", "Shift", "Markdown", "Mac", "https"}
        # Units as Chinese interfaces write them (Django's own catalogue keeps them).
        | {"KB", "MB", "GB"},
        # What operators named in admin (the shipped catch-all SLA rule among them).
        data=set(SlaRule.objects.values_list("name", flat=True)),
    )

    # The agent has used the console before from their Chinese browser (nothing chosen):
    # notifications written to them from now on speak Chinese.
    context, page = new_page(browser, device, locale="zh-CN")
    log_in(page, base, "hana")
    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    context.close()

    def shot(page, name):
        page.screenshot(path=screenshots_dir / f"zh-{name}-{device}.png", full_page=True)

    # The applicant: the login page in English, switched to Chinese with the header switch.
    context, page = new_page(browser, device)
    page.goto(f"{base}/accounts/login/")
    expect(page.locator("html")).to_have_attribute("lang", "en")
    page.locator("#language-switch").select_option("zh-hans")
    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    check.check(page, "login")
    shot(page, "login")
    log_in(page, base, "mei")
    expect(page).to_have_url(f"{base}/console/my-tickets/")
    check.check(page, "my-tickets-empty")
    page.locator(".page-head a.button.primary").click()  # New ticket
    expect(page).to_have_url(f"{base}/console/submit/")
    check.check(page, "submit")
    shot(page, "submit")
    page.locator("#id_title").fill(title)
    page.locator("#id_content").fill(details)
    page.locator("#id_handler_group").select_option(str(cast["group"].pk))
    page.locator("form.card button[type=submit]").click()
    expect(page.locator(".message-success")).to_be_visible()
    ticket = Ticket.objects.get(title=title)
    check.check(page, "applicant-ticket-submitted")
    shot(page, "applicant-ticket-submitted")
    context.close()

    # The approver (zh-hans in the profile, an English browser): the queue, approve in the row.
    context, page = new_page(browser, device, locale="en-US")
    log_in(page, base, "avery")
    expect(page).to_have_url(f"{base}/console/approvals/")
    row = page.locator(f'tr[data-ticket-id="{ticket.pk}"]')
    expect(row).to_be_visible()
    check.check(page, "approvals")
    shot(page, "approvals")
    row.locator(f'form[action="/console/tickets/{ticket.pk}/approve/"] button').click()
    expect(page.locator(".message-success")).to_be_visible()
    check.check(page, "approvals-after")
    context.close()
    ticket.refresh_from_db()
    assert (
        ticket.handler_id == cast["agent"].pk
        and ticket.ticket_status == TicketStatus.PENDING_PROCESS
    )

    # The agent: a Chinese browser, nothing chosen. My work, the ticket, accept, reply, complete.
    context, page = new_page(browser, device, locale="zh-CN")
    log_in(page, base, "hana")
    expect(page).to_have_url(f"{base}/console/")
    expect(page.locator(f'tr[data-ticket-id="{ticket.pk}"]')).to_be_visible()
    check.check(page, "my-work")
    shot(page, "my-work")
    page.locator(f'tr[data-ticket-id="{ticket.pk}"] a[data-row-link]').click()
    check.check(page, "agent-ticket-offered")
    page.locator(f'form[action="/console/tickets/{ticket.pk}/accept/"] button').first.click()
    expect(page.locator(".message-success")).to_be_visible()
    check.check(page, "agent-ticket-processing")
    page.locator(".reply-form textarea").fill(answer)
    page.locator(".reply-form button[type=submit]").first.click()
    expect(page.locator(".message-success")).to_be_visible()
    check.check(page, "agent-ticket-replied")
    shot(page, "agent-ticket")
    page.locator(f'form[action="/console/tickets/{ticket.pk}/complete/"] button').first.click()
    expect(page.locator(".message-success")).to_be_visible()
    check.check(page, "agent-ticket-completed")
    page.locator("a.inbox-link").click()
    check.check(page, "agent-inbox")
    shot(page, "agent-inbox")
    context.close()
    # The agent chose nothing: what their browser asked for was remembered for notifications.
    assert Profile.objects.get(user=cast["agent"]).browser_language == "zh-hans"
    notice = Notification.objects.get(recipient=cast["agent"], template_code="ticket-assigned")
    assert notice.title == f"工单 {ticket.bill_code} 已分配给你"
    # The applicant switched to Chinese before logging in (the cookie): their notices speak it.
    notices = Notification.objects.filter(recipient=cast["applicant"])
    titles = dict(notices.values_list("template_code", "title"))
    assert titles["ticket-replied"] == f"{ticket.bill_code} 有新回复"
    assert titles["ticket-completed"] == f"工单 {ticket.bill_code} 已处理完成"

    # The applicant again, from an English browser: English until they choose Chinese in the
    # header, which their profile keeps; then they close the ticket.
    context, page = new_page(browser, device, locale="en-US")
    log_in(page, base, "mei")
    expect(page.locator("html")).to_have_attribute("lang", "en")
    page.locator("#language-switch").select_option("zh-hans")
    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    assert Profile.objects.get(user=cast["applicant"]).language == "zh-hans"
    page.goto(f"{base}/console/tickets/{ticket.pk}/")
    expect(page.locator(".reply")).to_contain_text(answer)
    check.check(page, "applicant-ticket-resolved")
    shot(page, "applicant-ticket")
    page.locator(f'form[action="/console/tickets/{ticket.pk}/close/"] button').first.click()
    expect(page.locator(".message-success")).to_be_visible()
    check.check(page, "applicant-ticket-closed")
    page.goto(f"{base}/console/profile/")
    check.check(page, "profile")
    context.close()
    ticket.refresh_from_db()
    assert ticket.ticket_status == TicketStatus.CLOSED

    check.assert_none()


def test_j_and_k_move_through_the_list_and_o_opens_the_ticket(
    cast, live_server, browser, screenshots_dir
):
    approver, applicant = cast["approver"], cast["applicant"]
    tickets = []
    for n in range(3):
        submitted = services.ticket_submit(
            creator=applicant,
            title=f"Ticket {n}",
            content="details",
            priority=2,
            handler_group_id=cast["group"].pk,
        )
        tickets.append(services.ticket_approve(ticket_id=submitted.pk, approver=approver))
    context, page = new_page(browser, "desktop")
    log_in(page, live_server.url, "hana")
    rows = page.locator("[data-keyboard-row]")
    expect(rows).to_have_count(3)
    page.keyboard.press("j")
    expect(rows.nth(0)).to_have_class(re.compile(r"\bis-keyboard-current\b"))
    page.keyboard.press("j")
    page.keyboard.press("j")
    page.keyboard.press("j")  # stays on the last row
    expect(rows.nth(2)).to_have_class(re.compile(r"\bis-keyboard-current\b"))
    page.keyboard.press("k")
    expect(rows.nth(1)).to_have_class(re.compile(r"\bis-keyboard-current\b"))
    expect(rows.nth(2)).not_to_have_class(re.compile(r"\bis-keyboard-current\b"))
    second = rows.nth(1).get_attribute("data-ticket-id")
    page.screenshot(path=screenshots_dir / "keyboard-list.png", full_page=True)
    # Typing in a search box (the list's, the header's) is not taken over.
    for box in (page.locator(".searchbar input[name=q]"), page.locator("#header-search-q")):
        box.press("j")
        expect(box).to_have_value("j")
        box.blur()
    page.keyboard.press("o")
    expect(page).to_have_url(f"{live_server.url}/console/tickets/{second}/")
    context.close()


def test_a_time_zone_chosen_on_the_profile_page_applies_to_every_time(
    cast, live_server, browser, screenshots_dir
):
    submitted = services.ticket_submit(
        creator=cast["applicant"],
        title="Zone check",
        content="details",
        priority=2,
        handler_group_id=cast["group"].pk,
    )
    ticket = services.ticket_approve(ticket_id=submitted.pk, approver=cast["approver"])
    context, page = new_page(browser, "desktop", timezone_id="UTC")
    log_in(page, live_server.url, "hana")
    page.goto(f"{live_server.url}/console/profile/")
    page.locator("#id_time_zone").select_option("America/New_York")
    page.locator("form.card button[type=submit]").click()
    expect(page.locator(".message-success")).to_contain_text("America/New_York")
    expect(page.locator(".topbar .zone")).to_have_text("America/New_York")
    assert Profile.objects.get(user=cast["agent"]).time_zone == "America/New_York"
    page.goto(f"{live_server.url}/console/tickets/{ticket.pk}/")
    local = timezone.localtime(ticket.submitted_time, zoneinfo.ZoneInfo("America/New_York"))
    shown = local.strftime("%Y-%m-%d %H:%M ") + local.tzname()  # EST or EDT
    expect(page.locator("main")).to_contain_text(shown)
    utc = ticket.submitted_time.strftime("%Y-%m-%d %H:%M UTC")
    expect(page.get_by_text(utc)).to_have_count(0)
    page.screenshot(path=screenshots_dir / "profile-time-zone-ticket.png", full_page=True)
    context.close()
