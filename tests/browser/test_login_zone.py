"""The first page after login is already in the browser's zone: a browser in Shanghai logs
in (its zone goes with the login form) and the very first page names Asia/Shanghai and
shows its times at +08:00, at desktop and phone sizes, in English and Chinese."""

import pytest
from playwright.sync_api import expect

from accounts.models import Profile
from tests.browser.session import PASSWORD, log_in
from tests.factories import HandlerGroupFactory, UserFactory
from workflow import services

pytestmark = [pytest.mark.browser]


@pytest.mark.parametrize("locale", ["en-US", "zh-CN"])
@pytest.mark.parametrize("viewport", [(1366, 900), (390, 844)])
def test_the_first_page_after_login_shows_the_browsers_zone(
    transactional_db, live_server, browser, settings, locale, viewport
):
    settings.TIME_ZONE = "UTC"
    applicant = UserFactory(username="applicant1", password=PASSWORD)
    group = HandlerGroupFactory(name="IT desk")
    services.ticket_submit(
        creator=applicant, title="VPN drops", content="Every hour.", priority=2,
        handler_group_id=group.pk,
    )  # fmt: skip
    context = browser.new_context(
        timezone_id="Asia/Shanghai",
        locale=locale,
        viewport={"width": viewport[0], "height": viewport[1]},
    )
    page = context.new_page()

    log_in(page, live_server.url, "applicant1", lands_on="/console/my-tickets/")

    expect(page.locator(".account .zone")).to_have_text("Asia/Shanghai")
    moment = page.locator("main time").first.get_attribute("datetime") or ""
    assert moment.endswith("+08:00"), moment
    assert Profile.objects.get(user=applicant).time_zone == "Asia/Shanghai"
    context.close()
