"""The ticket page's Tags card through HTTP: the team sees the tags, adds some
(comma-separated) and removes one, without script; refusals are the page again with the
message and their status, nothing changed; the applicant and a watcher see no card."""

import re
from html import unescape

import pytest

from tests.toolbox.tagging import make_cast
from ticketing.models import Tag, Ticket, TicketRecord
from ticketing.tags import tags_add

pytestmark = pytest.mark.django_db


@pytest.fixture
def cast(applicant, approver):
    return make_cast(applicant, approver)


@pytest.fixture
def as_user(client):
    def _as_user(user):
        client.force_login(user)
        return client

    return _as_user


def detail(ticket):
    return f"/console/tickets/{ticket.pk}/"


def card(html: str) -> str:
    found = re.search(r'<section class="card tags-card".*?</section>', html, re.S)
    return found.group(0) if found else ""


def shown(html: str) -> list[str]:
    return [unescape(t) for t in re.findall(r'data-testid="tag" data-tag="([^"]*)"', card(html))]


def state(ticket):
    return (
        Ticket.objects.get(pk=ticket.pk).tags,
        list(TicketRecord.objects.filter(ticket=ticket, action="tags").values_list("id")),
        dict(Tag.objects.values_list("name", "ticket_count")),
    )


def test_the_team_sees_the_tags_and_the_suggestions(as_user, cast):
    ticket = cast["ticket"]()
    other = cast["ticket"]()
    tags_add(ticket_id=ticket.pk, tags=["printer", "vip"], actor_id=None)
    tags_add(ticket_id=other.pk, tags=["network"], actor_id=None)
    html = as_user(cast["handlers"][1]).get(detail(ticket)).content.decode()
    assert shown(html) == ["printer", "vip"]
    assert 'data-testid="tag-form"' in card(html)
    assert '<option value="network">' in card(html)


def test_the_team_adds_tags_comma_separated(as_user, cast):
    ticket = cast["ticket"]()
    client = as_user(cast["handlers"][0])
    response = client.post(f"/console/tickets/{ticket.pk}/tags/", {"tags": "Printer, VPN  access,"})
    assert response.status_code == 302
    assert response["Location"].endswith(f"/console/tickets/{ticket.pk}/#tags")
    assert Ticket.objects.get(pk=ticket.pk).tags == ["printer", "vpn access"]
    page = client.get(detail(ticket)).content.decode()
    assert shown(page) == ["printer", "vpn access"]
    assert "Tags of" in page and "saved" in page


def test_the_team_removes_a_tag(as_user, cast):
    ticket = cast["ticket"]()
    tags_add(ticket_id=ticket.pk, tags=["printer", "vip"], actor_id=None)
    client = as_user(cast["leader"])
    response = client.post(f"/console/tickets/{ticket.pk}/tags/remove/", {"tag": "vip"})
    assert response.status_code == 302
    assert Ticket.objects.get(pk=ticket.pk).tags == ["printer"]
    assert TicketRecord.objects.filter(ticket=ticket, action="tags").last().detail == {
        "removed": ["vip"]
    }


def test_a_bad_tag_is_the_page_again_with_its_error_and_a_400(as_user, cast):
    ticket = cast["ticket"]()
    tags_add(ticket_id=ticket.pk, tags=["kept"], actor_id=None)
    before = state(ticket)
    client = as_user(cast["handlers"][0])
    for typed in ("x" * 51, " , ,"):
        response = client.post(f"/console/tickets/{ticket.pk}/tags/", {"tags": typed})
        assert response.status_code == 400, typed
        assert 'class="field-error"' in card(response.content.decode())
    assert state(ticket) == before


def test_removing_a_tag_already_gone_is_a_409(as_user, cast):
    ticket = cast["ticket"]()
    tags_add(ticket_id=ticket.pk, tags=["kept"], actor_id=None)
    before = state(ticket)
    response = as_user(cast["handlers"][0]).post(
        f"/console/tickets/{ticket.pk}/tags/remove/", {"tag": "gone"}
    )
    assert response.status_code == 409
    assert "no longer carries this tag" in response.content.decode()
    assert state(ticket) == before


def test_the_applicant_and_a_watcher_see_no_card_and_may_not_post(as_user, cast):
    ticket = cast["ticket"]()
    cast["watch"](ticket)
    tags_add(ticket_id=ticket.pk, tags=["difficult"], actor_id=None)
    before = state(ticket)
    for person in (cast["applicant"], cast["watcher"]):
        client = as_user(person)
        page = client.get(detail(ticket))
        assert page.status_code == 200
        assert 'data-testid="tags-card"' not in page.content.decode()
        assert "difficult" not in page.content.decode()
        added = client.post(f"/console/tickets/{ticket.pk}/tags/", {"tags": "mine"})
        assert added.status_code == 403, person
        removed = client.post(f"/console/tickets/{ticket.pk}/tags/remove/", {"tag": "difficult"})
        assert removed.status_code == 403, person
    assert state(ticket) == before


def test_a_ticket_the_user_may_not_see_is_a_404(as_user, cast):
    ticket = cast["ticket"]()
    client = as_user(cast["outsider"])
    assert client.post(f"/console/tickets/{ticket.pk}/tags/", {"tags": "x"}).status_code == 404
    assert Ticket.objects.get(pk=ticket.pk).tags == []
