"""The ticket page's "Linked tickets" card through HTTP: parent, children (how many are done)
and related tickets with their statuses; the team adds links by bill code or id and removes
them, without script; refusals are the page again with the message and their status,
nothing changed; the applicant sees only links to tickets they may see, and no forms; and
the Complete button on a parent with an open child says why it did not complete."""

import re
from html import unescape

import pytest

from collaboration.models import TicketLink
from collaboration.services.links import link_add
from tests.factories import HandlerGroupFactory, UserFactory
from ticketing.models import Ticket, TicketRecord, TicketStatus
from workflow import services

pytestmark = pytest.mark.django_db


@pytest.fixture
def work(applicant, approver, group, handlers):
    """`work(title)`: an applicant's ticket handlers[0] is processing in the support group."""

    def _work(title="Part", *, creator=None, accept=True):
        ticket = services.ticket_submit(
            creator=creator or applicant,
            title=title,
            content="c",
            priority=2,
            handler_group_id=group.pk,
        )
        services.ticket_approve(ticket_id=ticket.pk, approver=approver)
        if accept:
            services.ticket_accept(ticket_id=ticket.pk, handler=handlers[0])
        return Ticket.objects.get(pk=ticket.pk)

    return _work


def detail(ticket):
    return f"/console/tickets/{ticket.pk}/"


def card(html: str) -> str:
    found = re.search(r'<section class="card links-card".*?</section>', html, re.S)
    return found.group(0) if found else ""


def rows(html: str) -> list[tuple[str, str, str]]:
    """(kind, bill code, status) of each link the card lists."""
    return [
        (kind, code, unescape(status))
        for kind, code, status in re.findall(
            r'data-testid="link" data-kind="([a-z_]+)".*?class="code"[^>]*>([^<]+)</a>'
            r'.*?data-testid="link-status">([^<]*)<',
            card(html),
            re.S,
        )
    ]


def messages(html: str) -> list[str]:
    return [unescape(m) for m in re.findall(r'<li class="message[^"]*">([^<]*)</li>', html)]


def links_state():
    links = sorted(TicketLink.objects.values_list("source_id", "target_id", "kind"))
    return links, TicketRecord.objects.filter(action__startswith="link_").count()


def test_the_team_sees_parent_children_and_related_with_their_statuses(as_user, handlers, work):
    ticket, parent, related = work("Outage"), work("Whole"), work("Also")
    done, still_open, waiting = (
        work("Done part"),
        work("Open part"),
        work("Pool part", accept=False),
    )
    for other, kind in (
        (parent, "parent"),
        (done, "child"),
        (still_open, "child"),
        (waiting, "child"),
        (related, "related"),
    ):
        link_add(ticket_id=ticket.pk, other_id=other.pk, kind=kind, user=handlers[0])
    services.ticket_complete(ticket_id=done.pk, handler=handlers[0])

    html = as_user(handlers[0]).get(detail(ticket)).content.decode()
    assert "Linked tickets" in card(html)
    assert rows(html) == [
        ("parent", parent.bill_code, "processing"),
        ("child", done.bill_code, "completed"),
        ("child", still_open.bill_code, "processing"),
        ("child", waiting.bill_code, "pending assign"),
        ("related", related.bill_code, "processing"),
    ]
    assert re.search(r'data-testid="children-done">\s*1 of 3 children done', card(html))
    assert card(html).count('data-testid="link-remove"') == 5
    assert 'data-testid="link-form"' in card(html)
    assert f'href="/console/tickets/{parent.pk}/"' in card(html)


def test_a_ticket_with_no_links_shows_the_team_only_the_form(as_user, handlers, applicant, work):
    ticket = work()
    team = card(as_user(handlers[0]).get(detail(ticket)).content.decode())
    assert "No linked tickets." in team and 'data-testid="link-form"' in team
    assert card(as_user(applicant).get(detail(ticket)).content.decode()) == ""


@pytest.mark.parametrize("reference", ["code", "lower", "id", "hash"])
def test_the_team_adds_a_link_by_bill_code_or_id(as_user, handlers, work, reference):
    ticket, other = work(), work("Other")
    text = {
        "code": other.bill_code,
        "lower": f"  {other.bill_code.lower()} ",
        "id": str(other.pk),
        "hash": f"#{other.pk}",
    }[reference]
    response = as_user(handlers[0]).post(
        f"{detail(ticket)}links/", {"ticket": text, "kind": "child"}
    )
    assert response.status_code == 302
    assert response["Location"] == f"{detail(ticket)}#links"
    link = TicketLink.objects.get()
    assert (link.source_id, link.target_id, link.kind) == (other.pk, ticket.pk, "parent")
    html = as_user(handlers[0]).get(detail(ticket)).content.decode()
    assert f"{other.bill_code} is linked." in messages(html)
    assert rows(html) == [("child", other.bill_code, "processing")]


def test_refused_links_show_the_page_again_with_the_message_and_change_nothing(
    as_user, handlers, work
):
    ticket, parent, other = work(), work("Parent"), work("Other")
    link_add(ticket_id=ticket.pk, other_id=parent.pk, kind="parent", user=handlers[0])
    before = links_state()
    client = as_user(handlers[0])
    cases = [
        (
            {"ticket": "TK-NOPE", "kind": "related"},
            400,
            "No ticket TK-NOPE, or you may not see it.",
        ),
        ({"ticket": ticket.bill_code, "kind": "related"}, 400, "cannot be linked to itself"),
        ({"ticket": other.bill_code, "kind": "parent"}, 400, "at most one parent"),
        ({"ticket": parent.bill_code, "kind": "child"}, 400, "cycle"),
        ({"ticket": parent.bill_code, "kind": "related"}, 409, "already linked"),
        ({"ticket": "", "kind": "related"}, 400, "see the form"),
        ({"ticket": other.bill_code, "kind": "sibling"}, 400, "see the form"),
    ]
    for data, status, words in cases:
        response = client.post(f"{detail(ticket)}links/", data)
        assert response.status_code == status, data
        html = response.content.decode()
        assert any(words in m for m in messages(html)), (data, messages(html))
        # The form comes back with what was typed.
        if data["ticket"]:
            assert f'value="{data["ticket"]}"' in card(html), data
    assert links_state() == before


def test_the_applicant_is_refused_with_a_403_and_an_outsider_with_a_404(
    as_user, handlers, applicant, work, outsider
):
    ticket, other, third = work(), work("Other"), work("Third")
    link = link_add(ticket_id=ticket.pk, other_id=other.pk, kind="related", user=handlers[0])
    before = links_state()
    mine = as_user(applicant)
    add = mine.post(f"{detail(ticket)}links/", {"ticket": third.bill_code, "kind": "child"})
    assert add.status_code == 403
    assert any("team of both" in m for m in messages(add.content.decode()))
    remove = mine.post(f"{detail(ticket)}links/{link.pk}/remove/")
    assert remove.status_code == 403
    stranger = as_user(outsider)
    assert stranger.post(f"{detail(ticket)}links/{link.pk}/remove/").status_code == 404
    assert (
        stranger.post(f"{detail(ticket)}links/", {"ticket": third.pk, "kind": "child"}).status_code
        == 404
    )
    assert links_state() == before


def test_the_team_removes_a_link(as_user, handlers, work):
    ticket, other, third = work(), work("Other"), work("Third")
    link = link_add(ticket_id=ticket.pk, other_id=other.pk, kind="child", user=handlers[0])
    client = as_user(handlers[1])
    # A link of another ticket is not this ticket's: 404, nothing removed.
    assert client.post(f"{detail(third)}links/{link.pk}/remove/").status_code == 404
    assert TicketLink.objects.count() == 1
    response = client.post(f"{detail(ticket)}links/{link.pk}/remove/")
    assert response.status_code == 302
    assert not TicketLink.objects.exists()
    html = client.get(detail(ticket)).content.decode()
    assert "The link was removed." in messages(html)
    assert rows(html) == []


def test_the_applicant_sees_only_links_to_tickets_they_may_see_and_no_forms(
    as_user, handlers, applicant, work
):
    someone = UserFactory(username="someone")
    ticket, mine, theirs = work("Mine"), work("Also mine"), work("Theirs", creator=someone)
    link_add(ticket_id=ticket.pk, other_id=mine.pk, kind="child", user=handlers[0])
    link_add(ticket_id=ticket.pk, other_id=theirs.pk, kind="child", user=handlers[0])
    html = as_user(applicant).get(detail(ticket)).content.decode()
    assert rows(html) == [("child", mine.bill_code, "processing")]
    assert theirs.bill_code not in html
    assert 'data-testid="link-form"' not in html and 'data-testid="link-remove"' not in html
    assert len(rows(as_user(handlers[0]).get(detail(ticket)).content.decode())) == 2


def test_the_complete_button_on_a_parent_with_an_open_child_says_why(as_user, handlers, work):
    parent, child = work("Whole"), work("Part")
    link_add(ticket_id=parent.pk, other_id=child.pk, kind="child", user=handlers[0])
    client = as_user(handlers[0])
    response = client.post(f"{detail(parent)}complete/")
    assert response.status_code == 409
    assert any(
        child.bill_code in m and "still open" in m for m in messages(response.content.decode())
    )
    parent.refresh_from_db()
    assert parent.ticket_status == TicketStatus.PROCESSING

    services.ticket_complete(ticket_id=child.pk, handler=handlers[0])
    assert client.post(f"{detail(parent)}complete/").status_code == 302
    parent.refresh_from_db()
    assert parent.ticket_status == TicketStatus.COMPLETED


def test_a_remove_button_shows_only_where_the_viewer_works_on_both(as_user, handlers, work):
    ticket = work()
    theirs_group = HandlerGroupFactory(name="elsewhere", members=[UserFactory()], assign_strategy=0)
    elsewhere = services.ticket_submit(
        creator=ticket.creator, title="x", content="c", priority=2, handler_group_id=theirs_group.pk
    )
    staff = UserFactory(username="root", is_staff=True)
    services.ticket_approve(ticket_id=elsewhere.pk, approver=staff)
    link_add(ticket_id=ticket.pk, other_id=elsewhere.pk, kind="related", user=staff)
    team = card(as_user(handlers[0]).get(detail(ticket)).content.decode())
    assert elsewhere.bill_code in team and 'data-testid="link-remove"' not in team
    assert 'data-testid="link-remove"' in card(as_user(staff).get(detail(ticket)).content.decode())
