"""The admin fits a 1366 px laptop screen: no page of the main models scrolls sideways, in
English and in Chinese."""

from datetime import timedelta
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.utils import timezone

from demo import history as demo_history
from tests.browser.session import PASSWORD, TIMEOUT_MS

pytestmark = [pytest.mark.browser]

WIDTH = 1366
# How far the page reaches sideways: the document, and any box that scrolls sideways inside
# it (the admin puts its result tables in one, which would hide a too-wide list). A list box
# scrolling its own long option names (a user's permissions) is the control, not the page.
REACH = """() => {
  let widest = document.documentElement.scrollWidth;
  for (const el of document.querySelectorAll("body *:not(select)")) {
    const overflow = getComputedStyle(el).overflowX;
    if ((overflow === "auto" || overflow === "scroll") && el.scrollWidth > el.clientWidth + 1) {
      widest = Math.max(widest, WIDTH + el.scrollWidth - el.clientWidth);
    }
  }
  return widest;
}""".replace("WIDTH", str(WIDTH))
# What sticks out, to say which element to fix when the test fails.
OFFENDERS = """() => [...document.querySelectorAll("body *")]
  .filter((el) => el.getBoundingClientRect().right > WIDTH + 1)
  .slice(-3)
  .map((el) => `${el.tagName.toLowerCase()}#${el.id}.${el.className}`)""".replace(
    "WIDTH", str(WIDTH)
)
MODELS = [
    "ticketing/ticket",
    "ticketing/ticketreply",
    "handler_groups/handlergroup",
    "sla/slarule",
    "sla/calendar",
    "sla/slaoutcome",
    "sla/clocksegment",
    "notifications/notifytemplate",
    "notifications/notification",
    "notifications/outboxdelivery",
    "notifications/webhook",
    "accounts/profile",
    "auth/user",
]


@pytest.fixture
def demo(db):
    call_command("seed_demo", stdout=StringIO())
    users = {u.username: u for u in get_user_model().objects.all()}
    demo_history.generate(days=2, users=users, now=timezone.now() - timedelta(minutes=1))
    from accounts.models import Profile
    from notifications.models import Notification, OutboxDelivery, Webhook
    from sla.models import Calendar

    Calendar.objects.create(name="Berlin office", timezone="Europe/Berlin")
    Profile.objects.get_or_create(user=users["it_alice"])
    hook = Webhook.objects.create(
        name="chat", url="https://chat.example.test/" + "very-long-path/" * 12, secret="s"
    )
    note = Notification.objects.create(
        recipient=users["it_alice"],
        template_code="ticket-assigned",
        title="A ticket was assigned to you: " + "Laptop will not boot " * 6,
        content="x",
        dedupe_key="k1",
        created=timezone.now(),
    )
    OutboxDelivery.objects.create(
        notification=note,
        channel="webhook",
        target=str(hook.pk),
        next_attempt_at=timezone.now(),
        last_error="ConnectionRefusedError: " + "connection refused by the peer " * 8,
        idempotency_key="k1",
        created=timezone.now(),
    )
    admin = users["admin"]
    admin.set_password(PASSWORD)
    admin.save(update_fields=["password"])
    return users


def _log_in_to_admin(page, base):
    page.goto(f"{base}/admin/login/")
    page.locator("#id_username").fill("admin")
    page.locator("#id_password").fill(PASSWORD)
    page.locator("input[type=submit]").click()
    page.wait_for_url(f"{base}/admin/")


@pytest.mark.parametrize("lang", ["en", "zh-hans"])
def test_admin_pages_fit_1366_px(demo, live_server, browser, screenshots_dir, lang):
    context = browser.new_context(
        viewport={"width": WIDTH, "height": 900}, locale="zh-CN" if lang != "en" else "en-GB"
    )
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    base = live_server.url
    _log_in_to_admin(page, base)
    assert page.locator("html").get_attribute("lang") == lang
    too_wide = {}
    for model in MODELS:
        page.goto(f"{base}/admin/{model}/")
        urls = [page.url]
        first = page.locator("#result_list tbody tr th a").first
        if first.count():
            urls.append(f"{base}{first.get_attribute('href')}")
        for url in urls:
            page.goto(url)
            assert page.locator("#content").count() == 1, url
            width = page.evaluate(REACH)
            if width > WIDTH:
                too_wide[url.removeprefix(base)] = (width, page.evaluate(OFFENDERS))
                name = url.removeprefix(base).strip("/").replace("/", "-")
                page.screenshot(path=str(screenshots_dir / f"too-wide-{name}-{lang}.png"))
        assert len(urls) == 2, f"{model}: no row to open"
    page.goto(f"{base}/admin/ticketing/ticket/")
    page.screenshot(path=str(screenshots_dir / f"admin-tickets-{lang}.png"))
    page.goto(f"{base}/admin/sla/slarule/")
    page.locator("#result_list tbody tr th a").first.click()
    page.locator("#levels-group").scroll_into_view_if_needed()
    page.screenshot(path=str(screenshots_dir / f"admin-sla-rule-{lang}.png"))
    context.close()
    assert not too_wide, sorted(too_wide.items())
