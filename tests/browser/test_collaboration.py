"""Working together in a real browser, in English at 1366x900 and in Chinese on a phone: the
group's leader copies a colleague in as a watcher, tells a teammate in an internal note by
picking them from the composer's @ list, merges a duplicate into the ticket (its reply arrives
marked "from TK…"), completes it, and the applicant rates the help on the ticket page; the
team then reads the rating there."""

import pytest
from django.utils import translation
from playwright.sync_api import expect

from accounts.models import Profile
from collaboration.models import Watcher
from notifications.models import Notification
from satisfaction.models import Survey
from tests.browser.session import PASSWORD, TIMEOUT_MS, log_in
from tests.factories import ApproverFactory, HandlerGroupFactory, UserFactory
from ticketing.models import Ticket, TicketReply
from workflow import services

pytestmark = pytest.mark.browser

VIEWPORTS = {"desktop": {"width": 1366, "height": 900}, "phone": {"width": 390, "height": 844}}
CASES = [("desktop", "en"), ("phone", "zh-hans")]


@pytest.fixture
def people(transactional_db):
    leader = UserFactory(username="it_bob", password=PASSWORD, first_name="Bob")
    teammate = UserFactory(username="dave", password=PASSWORD, first_name="Dave")
    desk = HandlerGroupFactory(name="Service desk", members=[leader, teammate], assign_strategy=0)
    desk.leader = leader
    desk.save()
    return {
        "leader": leader,
        "teammate": teammate,
        "colleague": UserFactory(username="carol", password=PASSWORD, first_name="Carol"),
        "applicant": UserFactory(username="alice", password=PASSWORD),
        "reporter": UserFactory(username="erin", password=PASSWORD),
        "approver": ApproverFactory(username="avery"),
        "desk": desk,
    }


def accepted(people, creator, title: str) -> Ticket:
    ticket = services.ticket_submit(
        creator=creator,
        title=title,
        content=f"{title}: since this morning.",
        priority=2,
        handler_group_id=people["desk"].pk,
    )
    services.ticket_approve(ticket_id=ticket.pk, approver=people["approver"])
    return services.ticket_accept(ticket_id=ticket.pk, handler=people["leader"])


def open_as(browser, base, user, size, lang):
    Profile.objects.update_or_create(user=user, defaults={"language": lang, "time_zone": "UTC"})
    context = browser.new_context(
        viewport=VIEWPORTS[size],
        is_mobile=size == "phone",
        locale="zh-CN" if lang == "zh-hans" else "en-US",
    )
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    log_in(page, base, user.get_username())
    return context, page


@pytest.mark.parametrize(("size", "lang"), CASES)
def test_watch_mention_merge_and_rate(people, live_server, browser, screenshots_dir, size, lang):
    base = live_server.url
    ticket = accepted(people, people["applicant"], "Printer jams")
    duplicate = accepted(people, people["reporter"], "Printer on floor 3 jams too")
    context, page = open_as(browser, base, people["leader"], size, lang)
    page.goto(f"{base}/console/tickets/{ticket.pk}/")
    expect(page.locator("html")).to_have_attribute("lang", lang)

    # The leader copies in a colleague from outside the team.
    card = page.get_by_test_id("watchers-card")
    card.locator("input[name=username]").fill("carol")
    card.get_by_test_id("watcher-add").click()
    watcher = page.get_by_test_id("watcher").filter(has_text="Carol")
    expect(watcher).to_have_count(1)
    assert Watcher.objects.filter(ticket=ticket, user=people["colleague"]).exists()

    # An internal note that tells a teammate, picked from the @ list with the keyboard.
    page.locator("label[for=reply-type-internal]").click()
    box = page.locator("form.composer textarea")
    box.click()
    box.press_sequentially("Parts ordered, @da")
    option = page.get_by_test_id("mention-list").locator("[role=option]")
    expect(option.filter(has_text="dave")).to_have_count(1)
    box.press("Enter")
    expect(box).to_have_value("Parts ordered, @dave ")
    box.press_sequentially("please check the tray.")
    with page.expect_response(lambda r: r.request.method == "POST" and "/reply/" in r.url):
        page.locator("form.composer .composer-send").click()
    expect(page.locator("#conversation")).to_contain_text("please check the tray.")
    told = Notification.objects.filter(template_code="ticket-mentioned")
    assert list(told.values_list("recipient_id", flat=True)) == [people["teammate"].pk]
    assert not Notification.objects.filter(
        template_code="ticket-mentioned", recipient=people["colleague"]
    ).exists()

    # The duplicate is merged into the ticket, after a confirm naming it.
    page.goto(f"{base}/console/tickets/{duplicate.pk}/")
    merge = page.get_by_test_id("merge-card")
    merge.locator("input[name=into]").fill(ticket.bill_code)
    merge.get_by_test_id("merge-button").click()
    expect(page.get_by_test_id("merge-confirm")).to_contain_text(ticket.bill_code)
    page.get_by_test_id("merge-confirm-button").click()
    page.wait_for_url(f"{base}/console/tickets/{ticket.pk}/**")
    conversation = page.locator("#conversation")
    expect(conversation).to_contain_text(duplicate.bill_code)
    expect(conversation).to_contain_text("Printer on floor 3 jams too: since this morning.")
    duplicate.refresh_from_db()
    assert duplicate.merged_into_id == ticket.pk
    # The duplicate's reporter now watches the ticket kept.
    expect(page.get_by_test_id("watcher").filter(has_text="erin")).to_have_count(1)
    assert TicketReply.objects.filter(ticket=duplicate).count() == 0
    marker = page.get_by_test_id("reply-merged-from")
    expect(marker).to_have_count(1)
    expect(marker).to_contain_text(duplicate.bill_code)
    marker.scroll_into_view_if_needed()
    page.screenshot(path=str(screenshots_dir / f"collaboration-merged-{size}-{lang}.png"))

    services.ticket_complete(ticket_id=ticket.pk, handler=people["leader"])
    context.close()

    # The applicant rates the help on the ticket page.
    context, page = open_as(browser, base, people["applicant"], size, lang)
    page.goto(f"{base}/console/tickets/{ticket.pk}/")
    form = page.get_by_test_id("rating-form")
    form.locator("input[name=rating][value='5']").check()
    form.locator("textarea[name=comment]").fill("Quick and kind.")
    form.locator("button[type=submit]").click()
    rating = page.get_by_test_id("satisfaction-rating")
    with translation.override(lang):
        expect(rating).to_contain_text(translation.gettext("%(rating)s of 5") % {"rating": 5})
    survey = Survey.objects.get(ticket=ticket)
    assert (survey.rating, survey.comment) == (5, "Quick and kind.")
    context.close()

    # The team reads it on the ticket.
    context, page = open_as(browser, base, people["leader"], size, lang)
    page.goto(f"{base}/console/tickets/{ticket.pk}/")
    expect(page.get_by_test_id("satisfaction-comment")).to_have_text("Quick and kind.")
    page.get_by_test_id("satisfaction-card").scroll_into_view_if_needed()
    page.screenshot(path=str(screenshots_dir / f"collaboration-rated-{size}-{lang}.png"))
    context.close()
