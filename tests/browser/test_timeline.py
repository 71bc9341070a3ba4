"""Issue 24, points 6 and 7, in a real browser at 1366×900 and 390×844, in English and
Chinese (the Chinese run checks structure and behaviour: the zh catalogue is filled in later):
the SLA timeline's level labels never overlap (bounding boxes of the drawn labels, on a ticket
whose levels fall due minutes apart on a three-day axis), on a phone the clocks are a readable
list and the chart is hidden, tapping a mark shows its time, Decline and Transfer ask first
(Transfer naming its target) and a dismissed question changes nothing, and the supervisor
starts a simulation with the page's button and sees its result."""

from decimal import Decimal
from unittest import mock

import pytest
from playwright.sync_api import expect

from accounts.models import Profile
from insight import services as insight_services
from insight.models import Simulation
from sla.models import SlaRule
from tests.browser.session import PASSWORD, TIMEOUT_MS, log_in
from tests.factories import ApproverFactory, HandlerGroupFactory, StaffFactory, UserFactory
from ticketing.models import Ticket, TicketStatus
from workflow import services

pytestmark = [pytest.mark.browser]

VIEWPORTS = {"desktop": {"width": 1366, "height": 900}, "phone": {"width": 390, "height": 844}}
CASES = [(size, lang) for size in VIEWPORTS for lang in ("en", "zh-hans")]


@pytest.fixture
def cast(transactional_db):
    lead = StaffFactory(username="lead", password=PASSWORD)
    bob = UserFactory(username="it_bob", password=PASSWORD)
    desk = HandlerGroupFactory(name="Service desk", members=[lead, bob], assign_strategy=0)
    tier2 = HandlerGroupFactory(name="Tier 2", members=[bob], assign_strategy=0)
    # Respond in 1 h, resolve in 72 h: on a three-day axis the response levels (15 min before
    # and at the deadline) fall two pixels apart: "L1L2" before labels were laid out.
    SlaRule.objects.create(
        name="slow", priority=2, response_hours=Decimal("1"), resolve_hours=Decimal("72"),
        warn_before_minutes=15, sort=10,
    )  # fmt: skip
    applicant = UserFactory(username="alice", password=PASSWORD)
    ticket = services.ticket_submit(
        creator=applicant, title="Printer jam", content="Tray 2 jams.", priority=2,
        handler_group_id=desk.pk,
    )  # fmt: skip
    services.ticket_approve(ticket_id=ticket.pk, approver=ApproverFactory(username="avery"))
    # Offered to the lead (as a routing strategy would): Decline and Transfer are both on.
    Ticket.objects.filter(pk=ticket.pk).update(
        ticket_status=TicketStatus.PENDING_PROCESS, handler=lead
    )
    ticket.refresh_from_db()
    return {"lead": lead, "desk": desk, "tier2": tier2, "bob": bob, "ticket": ticket}


def open_as(browser, base, user, size, lang):
    Profile.objects.update_or_create(user=user, defaults={"language": lang})
    context = browser.new_context(
        viewport=VIEWPORTS[size],
        is_mobile=size == "phone",
        locale="zh-CN" if lang != "en" else "en-US",
    )
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    log_in(page, base, user.get_username())
    return context, page


def overlaps(a, b) -> bool:
    return not (
        a["x"] + a["width"] <= b["x"]
        or b["x"] + b["width"] <= a["x"]
        or a["y"] + a["height"] <= b["y"]
        or b["y"] + b["height"] <= a["y"]
    )


@pytest.mark.parametrize(("size", "lang"), CASES)
def test_the_timeline_for_people(cast, live_server, browser, screenshots_dir, size, lang):
    base = live_server.url
    ticket = cast["ticket"]
    context, page = open_as(browser, base, cast["lead"], size, lang)
    page.goto(f"{base}/console/tickets/{ticket.pk}/")
    expect(page.locator("html")).to_have_attribute("lang", lang)
    svg = page.locator("svg.sla-timeline")
    clock_list = page.get_by_test_id("sla-clock-list")
    if size == "desktop":
        expect(svg).to_be_visible()
        expect(clock_list).to_be_hidden()
        labels = page.locator("svg.sla-timeline .sla-level-label")
        boxes = [labels.nth(i).bounding_box() for i in range(labels.count())]
        assert len(boxes) >= 2  # one per lane at least: response's L1+L2, resolve's L3+L4
        for i, a in enumerate(boxes):
            for b in boxes[i + 1 :]:
                assert not overlaps(a, b), (a, b)
        # Tapping (clicking) a level shows its time in a visible tip, not only in <title>.
        tip = page.locator("#sla-tip")
        expect(tip).to_be_hidden()
        level = page.locator("svg.sla-timeline .sla-level").last  # clear of the now line
        expected = level.locator("title").text_content()
        level.click()
        expect(tip).to_be_visible()
        expect(tip).to_have_text(expected)
        assert ":" in expected  # a time of day, H:i
        # And from the keyboard: focus the deadline mark.
        deadline = page.locator("svg.sla-timeline .sla-deadline").first
        deadline.focus()
        expect(tip).to_have_text(deadline.locator("title").text_content())
    else:
        expect(svg).to_be_hidden()
        expect(clock_list).to_be_visible()
        assert clock_list.locator(".sla-clock").count() == 2
        assert clock_list.locator(".sla-clock-levels li").count() == 4
        smallest = page.evaluate(
            """() => Math.min(...[...document.querySelectorAll(
                '[data-testid=sla-clock-list] dd, [data-testid=sla-clock-list] li')]
                .map(e => parseFloat(getComputedStyle(e).fontSize)))"""
        )
        assert smallest >= 12
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    page.screenshot(path=screenshots_dir / f"timeline-{lang}-{size}.png", full_page=True)
    context.close()


@pytest.mark.parametrize(("size", "lang"), CASES)
def test_decline_and_transfer_ask_first_and_transfer_names_the_target(
    cast, live_server, browser, size, lang
):
    base = live_server.url
    ticket = cast["ticket"]
    context, page = open_as(browser, base, cast["lead"], size, lang)
    page.goto(f"{base}/console/tickets/{ticket.pk}/")
    questions = []

    def dismiss(dialog):
        questions.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", dismiss)
    page.get_by_test_id("decline-form").locator("textarea, input[type=text]").first.fill("Busy")
    page.get_by_test_id("decline-button").click()
    form = page.get_by_test_id("transfer-form")
    form.locator("select[name=handler_group_id]").select_option(str(cast["tier2"].pk))
    form.locator("select[name=handler_id]").select_option(str(cast["bob"].pk))
    page.get_by_test_id("transfer-button").click()
    page.wait_for_timeout(300)
    assert len(questions) == 2, questions
    assert ticket.bill_code in questions[0]
    assert ticket.bill_code in questions[1]
    assert "Tier 2" in questions[1] and "it_bob" in questions[1]
    if lang == "en":
        assert questions[0] == f"Decline {ticket.bill_code}? It goes to someone else in the group."
        assert questions[1] == f"Transfer {ticket.bill_code} to Tier 2 / it_bob?"
    # Dismissed: nothing changed.
    after = Ticket.objects.get(pk=ticket.pk)
    assert (after.handler_id, after.handler_group_id) == (cast["lead"].pk, cast["desk"].pk)
    assert (
        after.ticket_status == ticket.ticket_status
        and after.process_status == ticket.process_status
    )
    expect(page).to_have_url(f"{base}/console/tickets/{ticket.pk}/")
    context.close()


@pytest.mark.parametrize(("size", "lang"), CASES)
def test_the_supervisor_starts_a_simulation_and_sees_its_result(
    cast, live_server, browser, screenshots_dir, size, lang
):
    base = live_server.url
    context, page = open_as(browser, base, cast["lead"], size, lang)
    page.goto(f"{base}/console/supervisor/?group={cast['desk'].pk}")
    assert not Simulation.objects.exists()
    with mock.patch("insight.services.current_app.send_task"):  # no worker in the test
        page.get_by_test_id("simulate-button").click()
        status = page.get_by_test_id("simulation-status")
        expect(status).to_have_attribute("data-status", "queued")
    simulation = Simulation.objects.get()
    assert simulation.group_id == cast["desk"].pk and simulation.created_by_id == cast["lead"].pk
    assert insight_services.run_simulation(simulation.pk) == "done"  # what the worker does
    # The page reloads itself while queued and then shows the result.
    expect(status).to_have_attribute("data-status", "done", timeout=10_000)
    expect(page.locator("#simulation-wait")).to_be_visible()
    expect(page.locator("table.simulation tbody tr").first).to_be_visible()
    page.screenshot(path=screenshots_dir / f"simulation-{lang}-{size}.png", full_page=True)
    context.close()
