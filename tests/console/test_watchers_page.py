"""The ticket page's Watchers card through HTTP: who watches and how each came to, in the
reader's zone; the team adds a person by username and the applicant copies a colleague in,
Watch / Stop watching, Remove where allowed — all plain POST forms that redirect with a
message; refusals are the page again with the message and their status (400, 403, 409),
nothing changed. The history words each change; a watcher outside the team never sees an
internal note on the page; the card renders in Chinese."""

import re
from datetime import UTC, datetime
from html import unescape

import pytest

from accounts.models import Profile
from collaboration.models import Watcher
from collaboration.services.watchers import watcher_add, watcher_remove
from tests.collaboration.watching import make_cast, reply
from tests.factories import UserFactory
from ticketing.models import TicketRecord

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)  # 17:00 in Shanghai


@pytest.fixture
def cast(applicant, approver):
    return make_cast(applicant, approver)


def detail(ticket):
    return f"/console/tickets/{ticket.pk}/"


def card(html: str) -> str:
    found = re.search(r'<section class="card watchers-card".*?</section>', html, re.S)
    return found.group(0) if found else ""


def watcher_rows(html: str) -> list[tuple[str, str]]:
    """(user id, source) of each listed watcher."""
    return re.findall(r'data-testid="watcher" data-user-id="(\d+)" data-source="(\w+)"', card(html))


def history(html: str) -> list[str]:
    return [
        unescape(re.sub(r"\s+", " ", text)).strip()
        for text in re.findall(r'<span class="record-text">(.*?)</span>', html, re.S)
    ]


def page(client, user, ticket, **headers):
    client.force_login(user)
    return client.get(detail(ticket), **headers)


def state(ticket):
    return (
        list(Watcher.objects.filter(ticket=ticket).order_by("id").values()),
        list(TicketRecord.objects.filter(ticket=ticket).values_list("id", flat=True)),
    )


def test_the_card_lists_each_watcher_with_how_and_when_in_the_readers_zone(client, cast):
    ticket = cast["ticket"]()
    handler = cast["handlers"][0]
    Profile.objects.create(user=handler, time_zone="Asia/Shanghai")
    watcher_add(ticket_id=ticket.pk, user_id=cast["colleague"].pk, actor=cast["applicant"], now=T0)
    watcher_add(ticket_id=ticket.pk, user_id=cast["stranger"].pk, actor=handler, now=T0)
    html = page(client, handler, ticket).content.decode()
    section = card(html)
    assert watcher_rows(html) == [
        (str(cast["colleague"].pk), "cc"),
        (str(cast["stranger"].pk), "team"),
    ]
    assert "Cora Lind" in section and "copied in by the applicant" in section
    assert "added by the team" in section
    assert "2026-03-02 17:00 CST" in section
    # The team adds anyone and removes anyone.
    assert 'data-testid="watcher-form"' in section and "Add a watcher" in section
    assert section.count('data-testid="watcher-remove"') == 2


def test_the_team_adds_a_person_by_username(client, cast):
    ticket = cast["ticket"]()
    client.force_login(cast["handlers"][1])
    response = client.post(
        f"/console/tickets/{ticket.pk}/watchers/", {"username": "@stranger"}, follow=True
    )
    assert response.redirect_chain[-1] == (detail(ticket) + "#watchers", 302)
    html = response.content.decode()
    assert f"stranger now watches {ticket.bill_code}." in unescape(html)
    assert watcher_rows(html) == [(str(cast["stranger"].pk), "team")]
    assert "stranger was added as a watcher by handler1" in history(html)


def test_the_applicant_copies_a_colleague_in_and_may_remove_only_them(client, cast):
    ticket = cast["ticket"]()
    watcher_add(ticket_id=ticket.pk, user_id=cast["stranger"].pk, actor=cast["handlers"][0])
    client.force_login(cast["applicant"])
    html = client.get(detail(ticket)).content.decode()
    assert "Copy in a colleague" in card(html)
    response = client.post(
        f"/console/tickets/{ticket.pk}/watchers/", {"username": "colleague"}, follow=True
    )
    html = response.content.decode()
    assert watcher_rows(html) == [
        (str(cast["stranger"].pk), "team"),
        (str(cast["colleague"].pk), "cc"),
    ]
    assert "colleague was copied in by applicant" in history(html)
    section = card(html)
    removals = re.findall(r"/watchers/(\d+)/remove/", section)
    assert removals == [str(cast["colleague"].pk)]
    # The applicant follows their own ticket already: no Watch button.
    assert 'data-testid="watch"' not in section


def test_an_unknown_username_is_the_page_again_with_a_400_and_the_form_kept(client, cast):
    ticket = cast["ticket"]()
    UserFactory(username="gone", is_active=False)
    before = state(ticket)
    client.force_login(cast["handlers"][0])
    for name in ("nobody-here", "gone", ""):
        response = client.post(f"/console/tickets/{ticket.pk}/watchers/", {"username": name})
        assert response.status_code == 400, name
        section = card(response.content.decode())
        assert 'class="field-error"' in section
        if name:
            assert f'value="{name}"' in section
    assert state(ticket) == before


def test_adding_the_applicant_is_a_400(client, cast):
    ticket = cast["ticket"]()
    before = state(ticket)
    client.force_login(cast["handlers"][0])
    response = client.post(f"/console/tickets/{ticket.pk}/watchers/", {"username": "applicant"})
    assert response.status_code == 400
    assert "The applicant is told of their own ticket already." in unescape(
        response.content.decode()
    )
    assert state(ticket) == before


def test_adding_someone_already_watching_says_so_and_changes_nothing(client, cast):
    ticket = cast["ticket"]()
    watcher_add(ticket_id=ticket.pk, user_id=cast["colleague"].pk, actor=cast["applicant"])
    before = state(ticket)
    client.force_login(cast["handlers"][0])
    response = client.post(
        f"/console/tickets/{ticket.pk}/watchers/", {"username": "colleague"}, follow=True
    )
    assert response.status_code == 200
    assert f"colleague already watches {ticket.bill_code}." in unescape(response.content.decode())
    assert state(ticket) == before


def test_a_watcher_has_no_form_and_a_forged_add_is_a_403(client, cast):
    ticket = cast["ticket"]()
    watcher_add(ticket_id=ticket.pk, user_id=cast["colleague"].pk, actor=cast["applicant"])
    client.force_login(cast["colleague"])
    section = card(client.get(detail(ticket)).content.decode())
    assert 'data-testid="watcher-form"' not in section
    assert 'data-testid="unwatch"' in section
    before = state(ticket)
    response = client.post(f"/console/tickets/{ticket.pk}/watchers/", {"username": "stranger"})
    assert response.status_code == 403
    assert state(ticket) == before
    # Nor may they remove the applicant's other choices.
    watcher_add(ticket_id=ticket.pk, user_id=cast["stranger"].pk, actor=cast["applicant"])
    before = state(ticket)
    response = client.post(f"/console/tickets/{ticket.pk}/watchers/{cast['stranger'].pk}/remove/")
    assert response.status_code == 403
    assert state(ticket) == before


def test_watch_and_stop_watching(client, cast):
    ticket = cast["ticket"]()
    person = cast["handlers"][1]
    client.force_login(person)
    assert 'data-testid="watch"' in card(client.get(detail(ticket)).content.decode())
    response = client.post(f"/console/tickets/{ticket.pk}/watchers/watch/", follow=True)
    html = response.content.decode()
    assert f"You are watching {ticket.bill_code}" in unescape(html)
    assert watcher_rows(html) == [(str(person.pk), "self")]
    assert 'data-testid="unwatch"' in card(html)
    assert "handler1 started watching" in history(html)
    response = client.post(
        f"/console/tickets/{ticket.pk}/watchers/{person.pk}/remove/", follow=True
    )
    html = response.content.decode()
    assert f"You no longer watch {ticket.bill_code}." in unescape(html)
    assert watcher_rows(html) == []
    assert "handler1 stopped watching" in history(html)


def test_removing_a_watcher_already_gone_is_a_409(client, cast):
    ticket = cast["ticket"]()
    watcher_add(ticket_id=ticket.pk, user_id=cast["colleague"].pk, actor=cast["applicant"])
    watcher_remove(ticket_id=ticket.pk, user_id=cast["colleague"].pk, actor=cast["colleague"])
    before = state(ticket)
    client.force_login(cast["handlers"][0])
    response = client.post(f"/console/tickets/{ticket.pk}/watchers/{cast['colleague'].pk}/remove/")
    assert response.status_code == 409
    assert "This person no longer watches this ticket." in response.content.decode()
    assert state(ticket) == before


def test_the_team_removes_a_watcher_and_the_history_says_who(client, cast):
    ticket = cast["ticket"]()
    watcher_add(ticket_id=ticket.pk, user_id=cast["colleague"].pk, actor=cast["applicant"])
    client.force_login(cast["leader"])
    response = client.post(
        f"/console/tickets/{ticket.pk}/watchers/{cast['colleague'].pk}/remove/", follow=True
    )
    html = response.content.decode()
    assert "The watcher was removed." in html
    assert "colleague no longer watches it by leader" in history(html)


def test_a_ticket_the_viewer_may_not_see_is_a_404_for_every_form(client, cast):
    ticket = cast["ticket"]()
    watcher_add(ticket_id=ticket.pk, user_id=cast["colleague"].pk, actor=cast["applicant"])
    before = state(ticket)
    client.force_login(cast["stranger"])
    base = f"/console/tickets/{ticket.pk}/watchers/"
    assert client.post(base, {"username": "stranger"}).status_code == 404
    assert client.post(base + "watch/").status_code == 404
    assert client.post(base + f"{cast['colleague'].pk}/remove/").status_code == 404
    assert state(ticket) == before


def test_a_watcher_outside_the_team_never_sees_an_internal_note_on_the_page(client, cast):
    ticket = cast["ticket"]()
    watcher_add(ticket_id=ticket.pk, user_id=cast["colleague"].pk, actor=cast["applicant"])
    reply(ticket, cast["handlers"][0], "We ordered a new fuser.")
    reply(ticket, cast["handlers"][0], "Zanzibarian budget overrun", internal=True)
    html = page(client, cast["colleague"], ticket).content.decode()
    assert "We ordered a new fuser." in html
    assert "Zanzibarian" not in html
    assert "Internal note by" not in html
    # No composer's mention list either: they are not the team.
    assert "data-mentionable-url" not in html
    team = page(client, cast["handlers"][1], ticket).content.decode()
    assert "Zanzibarian" in team
    assert f'data-mentionable-url="/api/tickets/{ticket.pk}/mentionable/"' in team


def test_the_card_and_its_history_render_in_chinese(client, cast):
    ticket = cast["ticket"]()
    watcher_add(ticket_id=ticket.pk, user_id=cast["colleague"].pk, actor=cast["applicant"])
    watcher_add(ticket_id=ticket.pk, user_id=cast["handlers"][1].pk, actor=cast["handlers"][1])
    Profile.objects.create(user=cast["handlers"][0], language="zh-hans")
    response = page(client, cast["handlers"][0], ticket)
    assert response.status_code == 200
    assert response["Content-Language"] == "zh-hans"
    assert len(watcher_rows(response.content.decode())) == 2
    assert response.context["watchers_card"]["rows"][0]["name"] == "Cora Lind"
