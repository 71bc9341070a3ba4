"""@username in an internal note: it tells a team member who may see the ticket (once, in
their language, with the note), and nobody else — an outsider, a watcher, an approver, an
inactive person, the author, anyone named in a public reply; the text stays as written. The
composer's candidates (GET /api/tickets/{id}/mentionable/) are the team's to ask for."""

import pytest

from collaboration.services.watchers import watcher_add
from notifications.models import Notification
from tests.collaboration.watching import inbox, make_cast, reply, speaks_chinese
from tests.factories import UserFactory
from ticketing.models import TicketRecord, TicketReply
from workflow.mentions import candidates

pytestmark = pytest.mark.django_db


@pytest.fixture
def cast(applicant, approver):
    return make_cast(applicant, approver)


def reply_record(reply_obj):
    return TicketRecord.objects.get(action="reply", detail__reply_id=reply_obj.pk)


# Parsing (pure)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("@bob can you look", ["bob"]),
        ("ask @bob.", ["bob.", "bob"]),
        ("(@bob) and @carol, thanks", ["bob", "carol"]),
        ("mail a@b.com or bob@example.com", []),
        ("@first.last+tag@corp", ["first.last+tag@corp"]),
        ("@李雷 请看", ["李雷"]),
        ("@ nobody", []),
        ("x@bob", []),
        ("@bob @bob", ["bob"]),
    ],
)
def test_candidates_are_at_words_not_inside_words_or_addresses(text, expected):
    assert candidates(text) == expected


# Who is told


def test_a_mentioned_team_member_is_told_once_in_their_language_with_the_note(cast):
    ticket = cast["ticket"]()
    handler, mate = cast["handlers"]
    speaks_chinese(mate)
    text = "@handler1 can you check the fuser? cc @handler1."
    note = reply(ticket, handler, text, internal=True)
    (notice,) = inbox(mate, "ticket-mentioned")
    assert notice.title == f"handler0 在 {ticket.bill_code} 中提到了你"
    assert text in notice.content
    assert notice.dedupe_key == f"ticket:{ticket.pk}:mention:{note.pk}"
    assert reply_record(note).detail["mentioned"] == [mate.pk]
    # The text is kept as written.
    assert TicketReply.objects.get(pk=note.pk).content == text


def test_an_english_reader_gets_the_english_wording(cast):
    ticket = cast["ticket"]()
    note = reply(ticket, cast["handlers"][0], "@leader please approve the spend", internal=True)
    (notice,) = inbox(cast["leader"], "ticket-mentioned")
    assert notice.title == f"handler0 mentioned you on {ticket.bill_code}"
    assert notice.content.startswith(
        f"handler0 mentioned you in an internal note on ticket {ticket.bill_code} "
        "(Printer on fire):"
    )
    assert notice.content.endswith("@leader please approve the spend")
    assert reply_record(note).detail["mentioned"] == [cast["leader"].pk]


def test_staff_may_be_mentioned(cast):
    ticket = cast["ticket"]()
    reply(ticket, cast["handlers"][0], "@boss FYI", internal=True)
    assert inbox(cast["staff"], "ticket-mentioned").count() == 1


def test_a_mention_of_someone_outside_the_team_tells_nobody(cast):
    ticket = cast["ticket"]()
    watcher_add(ticket_id=ticket.pk, user_id=cast["colleague"].pk, actor=cast["applicant"])
    UserFactory(username="retired", is_active=False)
    before = Notification.objects.count()
    text = (
        "@outsider @colleague @approver @applicant @stranger @retired @nosuchuser "
        "mail handler0@example.com"
    )
    note = reply(ticket, cast["handlers"][1], text, internal=True)
    # Only the ticket's handler hears of a note someone else wrote (as before): no mention.
    assert Notification.objects.count() == before + 1
    assert not Notification.objects.filter(template_code="ticket-mentioned").exists()
    assert "mentioned" not in reply_record(note).detail
    assert TicketReply.objects.get(pk=note.pk).content == text


def test_a_handler_of_another_group_watching_the_ticket_is_not_told(cast):
    ticket = cast["ticket"]()
    # A handler of another group who watches the ticket: sees it, but not on its team.
    watcher_add(ticket_id=ticket.pk, user_id=cast["outsider"].pk, actor=cast["handlers"][0])
    reply(ticket, cast["handlers"][0], "@outsider your side?", internal=True)
    assert not inbox(cast["outsider"], "ticket-mentioned").exists()


def test_the_author_mentioning_themselves_tells_nobody(cast):
    ticket = cast["ticket"]()
    before = Notification.objects.count()
    note = reply(ticket, cast["handlers"][0], "note to self @handler0", internal=True)
    assert Notification.objects.count() == before
    assert "mentioned" not in reply_record(note).detail


def test_a_public_reply_mentions_nobody(cast):
    ticket = cast["ticket"]()
    public = reply(ticket, cast["handlers"][0], "@handler1 will call you")
    assert not inbox(cast["handlers"][1], "ticket-mentioned").exists()
    assert "mentioned" not in reply_record(public).detail


def test_the_mentioned_handler_gets_the_mention_not_also_the_note_notice(cast):
    ticket = cast["ticket"]()  # handled by handler0
    reply(ticket, cast["handlers"][1], "@handler0 look at this", internal=True)
    assert inbox(cast["handlers"][0], "ticket-mentioned").count() == 1
    assert not inbox(cast["handlers"][0], "ticket-replied").exists()


def test_the_applicant_never_reads_who_was_mentioned(api, cast):
    ticket = cast["ticket"]()
    reply(ticket, cast["handlers"][0], "@handler1 secret", internal=True)
    records = api.as_user(cast["applicant"]).get(f"/api/tickets/{ticket.pk}/records/").json()
    assert "mentioned" not in str(records)
    team = api.as_user(cast["handlers"][1]).get(f"/api/tickets/{ticket.pk}/records/").json()
    (note,) = [r for r in team if r["action"] == "reply"]
    assert note["detail"]["mentioned"] == [cast["handlers"][1].pk]


def test_a_mention_through_the_api_tells_them(api, cast):
    ticket = cast["ticket"]()
    response = api.as_user(cast["handlers"][0]).post(
        f"/api/tickets/{ticket.pk}/replies/",
        {"content": "@leader ok?", "reply_type": "internal"},
        format="json",
    )
    assert response.status_code == 201
    assert inbox(cast["leader"], "ticket-mentioned").count() == 1


# The composer's candidates


def mentionable(api, user, ticket, q=None):
    params = {} if q is None else {"q": q}
    return api.as_user(user).get(f"/api/tickets/{ticket.pk}/mentionable/", params)


def test_the_team_gets_staff_group_and_handler_by_prefix_of_any_name(api, cast):
    ticket = cast["ticket"]()
    UserFactory(username="hanna_elsewhere")  # not on the team
    UserFactory(username="handler9", is_active=False)  # would match, but inactive
    everyone = mentionable(api, cast["handlers"][1], ticket).json()
    assert [p["username"] for p in everyone] == ["boss", "handler0", "handler1", "leader"]
    assert everyone[1] == {"username": "handler0", "name": "Hana Ohara"}
    assert [p["username"] for p in mentionable(api, cast["leader"], ticket, "HAN").json()] == [
        "handler0",
        "handler1",
    ]
    by_first = mentionable(api, cast["leader"], ticket, "iv").json()
    assert [p["username"] for p in by_first] == ["handler1"]
    by_last = mentionable(api, cast["leader"], ticket, "@sto").json()
    assert [p["username"] for p in by_last] == ["leader"]
    assert mentionable(api, cast["leader"], ticket, "zzz").json() == []


def test_at_most_ten_candidates(api, cast):
    ticket = cast["ticket"]()
    group = cast["group"]
    extra = [UserFactory(username=f"member{i:02d}") for i in range(12)]
    group.member_ids = [*group.member_ids, *[u.pk for u in extra]]
    group.save(update_fields=["member_user_ids"])
    found = mentionable(api, cast["handlers"][0], ticket, "member").json()
    assert [p["username"] for p in found] == [f"member{i:02d}" for i in range(10)]


def test_candidates_are_the_teams_only(api, cast):
    ticket = cast["ticket"]()
    watcher_add(ticket_id=ticket.pk, user_id=cast["colleague"].pk, actor=cast["applicant"])
    for visible_but_not_team in (cast["applicant"], cast["colleague"], cast["approver"]):
        assert mentionable(api, visible_but_not_team, ticket).status_code == 403
    for invisible in (cast["stranger"], cast["outsider"]):
        assert mentionable(api, invisible, ticket).status_code == 404


def test_a_too_long_query_is_a_400_naming_q(api, cast):
    ticket = cast["ticket"]()
    response = mentionable(api, cast["handlers"][0], ticket, "x" * 151)
    assert response.status_code == 400
    assert "q" in response.json()["errors"]
