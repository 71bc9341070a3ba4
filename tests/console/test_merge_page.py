"""The ticket page's merging card through HTTP: "Merge into…" by bill code or id for the
group's leader and staff only, a confirm step naming the target, then the merge and a
redirect to the target; refusals are the page again with their status, nothing changed.
A merged duplicate's page shows its target (a redirect with a message) to those who may see
it, else the duplicate with a banner; moved replies say where they came from."""

import re
from html import unescape

import pytest

from collaboration.models import Watcher
from tests.factories import HandlerGroupFactory, UserFactory
from ticketing.models import Ticket, TicketRecord, TicketReply
from workflow import services

pytestmark = pytest.mark.django_db


@pytest.fixture
def work(applicant, approver, group, handlers):
    """`work(title, creator=, group=)`: an approved ticket handlers[0] is processing."""

    def _work(title="Printer", *, creator=None, in_group=None):
        ticket = services.ticket_submit(
            creator=creator or applicant,
            title=title,
            content="It jams.",
            priority=2,
            handler_group_id=(in_group or group).pk,
        )
        services.ticket_approve(ticket_id=ticket.pk, approver=approver)
        return Ticket.objects.get(pk=ticket.pk)

    return _work


def detail(ticket) -> str:
    return f"/console/tickets/{ticket.pk}/"


def merge_url(ticket) -> str:
    return f"/console/tickets/{ticket.pk}/merge/"


def card(html: str) -> str:
    found = re.search(r'<section class="card merge-card".*?</section>', html, re.S)
    return unescape(found.group(0)) if found else ""


def text(response) -> str:
    return unescape(response.content.decode())


def unchanged(*tickets) -> list:
    return [
        (
            Ticket.objects.filter(pk=t.pk).values_list("ticket_status", "merged_into_id").get(),
            TicketReply.objects.filter(ticket=t).count(),
            TicketRecord.objects.filter(ticket=t).count(),
            Watcher.objects.filter(ticket=t).count(),
        )
        for t in tickets
    ]


def test_the_leader_merges_by_bill_code_after_a_confirm_naming_the_target(as_user, leader, work):
    target = work("Printer on floor 2")
    source = work("Printer jammed")
    services.ticket_reply(ticket_id=source.pk, author=leader, reply_type=1, content="On it.")
    client = as_user(leader)
    page = client.get(detail(source))
    assert "Merge into…" in card(text(page))

    before = unchanged(source, target)
    asked = client.post(merge_url(source), {"into": target.bill_code.lower()})
    assert asked.status_code == 200
    confirm = card(text(asked))
    words = " ".join(re.sub(r"<[^>]+>", "", confirm).split())
    assert f"Merge {source.bill_code} into {target.bill_code} “Printer on floor 2”?" in words
    assert f'name="into" value="{target.pk}"' in confirm
    assert unchanged(source, target) == before  # asking merges nothing

    done = client.post(merge_url(source), {"into": str(target.pk), "confirm": "on"}, follow=True)
    assert done.redirect_chain[0] == (detail(target), 302)
    html = text(done)
    assert f"{source.bill_code} was merged into {target.bill_code}." in html
    assert Ticket.objects.get(pk=source.pk).merged_into_id == target.pk
    # The moved replies say where they came from.
    assert html.count(f"from {source.bill_code}") == 2  # its description and the reply


def test_opening_a_merged_source_shows_the_target(as_user, leader, applicant, work):
    target = work("Printer on floor 2")
    source = work("Printer jammed")
    as_user(leader).post(merge_url(source), {"into": str(target.pk), "confirm": "on"})

    for user in (leader, applicant):
        response = as_user(user).get(detail(source), follow=True)
        assert response.redirect_chain == [(detail(target), 302)], user
        assert f"{source.bill_code} was merged into {target.bill_code}." in text(response)
    stay = as_user(leader).get(detail(source) + "?show=merged")
    assert stay.status_code == 200
    assert 'data-testid="merged-banner"' in stay.content.decode()
    # Its clocks are neither met nor breached (the chip, and the timeline the team sees).
    assert "SLA: merged" in stay.content.decode()
    assert "sla-timeline" in stay.content.decode()


def test_a_merged_source_whose_target_is_hidden_shows_a_banner(
    as_user, leader, applicant, work, staff
):
    other_group = HandlerGroupFactory(name="elsewhere", leader=UserFactory(username="el"))
    target = work("Elsewhere", creator=UserFactory(username="zed"), in_group=other_group)
    source = work("Printer jammed")
    as_user(staff).post(merge_url(source), {"into": str(target.pk), "confirm": "on"})
    # The source's applicant watches the target now: take that away to hide it from them.
    Watcher.objects.filter(ticket=target, user=applicant).delete()

    response = as_user(applicant).get(detail(source))
    assert response.status_code == 200
    html = text(response)
    assert 'data-testid="merged-banner"' in html
    assert f"{source.bill_code} was merged into {target.bill_code}" in html
    assert f'href="/console/tickets/{target.pk}/"' not in html


def test_the_card_is_for_the_leader_and_staff_on_a_mergeable_ticket(
    as_user, leader, handlers, applicant, staff, work
):
    ticket = work()
    assert "merge-card" in as_user(staff).get(detail(ticket)).content.decode()
    for user in (handlers[0], applicant):
        assert "merge-card" not in as_user(user).get(detail(ticket)).content.decode(), user
    services.ticket_close(ticket_id=ticket.pk, user=applicant)
    assert "merge-card" not in as_user(leader).get(detail(ticket)).content.decode()


def test_refusals_are_the_page_again_with_their_status_nothing_changed(
    as_user, leader, handlers, applicant, work
):
    target = work("Target")
    source = work("Source")
    before = unchanged(source, target)
    client = as_user(handlers[0])
    assert (
        client.post(merge_url(source), {"into": str(target.pk), "confirm": "on"}).status_code == 403
    )
    client = as_user(leader)
    missing = client.post(merge_url(source), {"into": "TK-NOPE"})
    assert missing.status_code == 400
    assert "No ticket TK-NOPE" in card(text(missing))
    itself = client.post(merge_url(source), {"into": source.bill_code})
    assert itself.status_code == 409
    assert "itself" in text(itself)
    assert unchanged(source, target) == before
    services.ticket_close(ticket_id=target.pk, user=applicant)
    before = unchanged(source, target)
    closed = client.post(merge_url(source), {"into": target.bill_code})
    assert closed.status_code == 409
    assert "closed" in text(closed)
    # A stale confirm (the target closed since it was asked) is refused by the service too.
    stale = client.post(merge_url(source), {"into": str(target.pk), "confirm": "on"})
    assert stale.status_code == 409
    assert unchanged(source, target) == before
