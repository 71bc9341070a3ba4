"""Watchers and CC through the API: who may list, add and remove whom (every refusal changing
nothing), the history record and the notice of each change, two adds at once making one
watcher, what a watcher outside the team may read (never an internal note), and what they
are told (public replies and the status changes the applicant sees, in their language)."""

import pytest
from django.utils import timezone

from collaboration.models import Watcher
from collaboration.services.watchers import watcher_add
from tests.collaboration.watching import inbox, make_cast, reply, speaks_chinese
from tests.concurrency import run_in_parallel
from tests.factories import UserFactory
from ticketing.models import Ticket, TicketRecord
from workflow import services

pytestmark = pytest.mark.django_db

WATCHER_ACTIONS = ("watcher_added", "watcher_removed")


@pytest.fixture
def cast(applicant, approver):
    return make_cast(applicant, approver)


def url(ticket, user_id=None):
    base = f"/api/tickets/{ticket.pk}/watchers/"
    return base if user_id is None else f"{base}{user_id}/"


def add(api, actor, ticket, person):
    return api.as_user(actor).post(url(ticket), {"user_id": person.pk}, format="json")


def watcher_records(ticket):
    return list(
        TicketRecord.objects.filter(ticket=ticket, action__in=WATCHER_ACTIONS)
        .order_by("id")
        .values_list("action", "actor_id", "detail")
    )


def state(ticket):
    """Everything a refused request must leave as it was."""
    return (
        list(Watcher.objects.filter(ticket=ticket).order_by("id").values()),
        watcher_records(ticket),
        list(inbox_all().values_list("id", flat=True)),
    )


def inbox_all():
    from notifications.models import Notification

    return Notification.objects.order_by("id")


# Listing


def test_anyone_who_may_see_the_ticket_lists_its_watchers(api, cast):
    ticket = cast["ticket"]()
    watcher_add(ticket_id=ticket.pk, user_id=cast["colleague"].pk, actor=cast["applicant"])
    for viewer in (cast["applicant"], cast["handlers"][1], cast["colleague"], cast["staff"]):
        response = api.as_user(viewer).get(url(ticket))
        assert response.status_code == 200, viewer
        (row,) = response.json()
        assert row["user_id"] == cast["colleague"].pk
        assert row["username"] == "colleague" and row["name"] == "Cora Lind"
        assert row["source"] == "cc" and row["added_by_id"] == cast["applicant"].pk
        assert row["added"]


def test_a_ticket_the_caller_may_not_see_is_a_404_for_every_method(api, cast):
    ticket = cast["ticket"]()
    watcher_add(ticket_id=ticket.pk, user_id=cast["colleague"].pk, actor=cast["applicant"])
    before = state(ticket)
    for stranger in (cast["stranger"], cast["outsider"]):
        client = api.as_user(stranger)
        assert client.get(url(ticket)).status_code == 404
        assert client.post(url(ticket), {"user_id": stranger.pk}, format="json").status_code == 404
        assert client.delete(url(ticket, cast["colleague"].pk)).status_code == 404
    assert state(ticket) == before


def test_anonymous_callers_are_refused(api, cast):
    ticket = cast["ticket"]()
    assert api.get(url(ticket)).status_code == 401


# Adding


def test_the_team_adds_anyone_and_they_are_told_and_may_see_the_ticket(api, cast):
    ticket = cast["ticket"]()
    handler, stranger = cast["handlers"][0], cast["stranger"]
    assert api.as_user(stranger).get(f"/api/tickets/{ticket.pk}/").status_code == 404
    response = add(api, handler, ticket, stranger)
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["user_id"] == stranger.pk and body["source"] == "team"
    assert body["added_by_id"] == handler.pk
    assert watcher_records(ticket) == [
        ("watcher_added", handler.pk, {"user_id": stranger.pk, "source": "team"})
    ]
    (notice,) = inbox(stranger, "ticket-watching")
    assert notice.title == f"You are now watching {ticket.bill_code}"
    assert notice.content.startswith(f"handler0 added you to ticket {ticket.bill_code}")
    assert notice.ticket_id == ticket.pk
    # Now they see the ticket (its public story).
    assert api.as_user(stranger).get(f"/api/tickets/{ticket.pk}/").status_code == 200


def test_the_groups_leader_and_staff_are_the_team_too(api, cast):
    ticket = cast["ticket"]()
    assert add(api, cast["leader"], ticket, cast["stranger"]).json()["source"] == "team"
    assert add(api, cast["staff"], ticket, cast["colleague"]).json()["source"] == "team"


def test_the_applicant_copies_a_colleague_in(api, cast):
    ticket = cast["ticket"](approve=False)  # even while it awaits approval
    response = add(api, cast["applicant"], ticket, cast["colleague"])
    assert response.status_code == 201
    assert response.json()["source"] == "cc"
    assert watcher_records(ticket) == [
        ("watcher_added", cast["applicant"].pk, {"user_id": cast["colleague"].pk, "source": "cc"})
    ]
    assert inbox(cast["colleague"], "ticket-watching").count() == 1


def test_anyone_who_may_see_the_ticket_follows_it_themselves_untold(api, cast):
    ticket = cast["ticket"]()
    for person in (cast["approver"], cast["handlers"][1]):
        response = add(api, person, ticket, person)
        assert response.status_code == 201
        assert response.json()["source"] == "self"
        assert inbox(person, "ticket-watching").count() == 0  # they know
    assert [detail["source"] for _, _, detail in watcher_records(ticket)] == ["self", "self"]


def test_a_watcher_or_an_approver_may_not_add_someone_else(api, cast):
    ticket = cast["ticket"]()
    watcher_add(ticket_id=ticket.pk, user_id=cast["colleague"].pk, actor=cast["applicant"])
    before = state(ticket)
    for actor in (cast["colleague"], cast["approver"]):
        response = add(api, actor, ticket, cast["stranger"])
        assert response.status_code == 403, actor
        assert response.json()["code"] == "permission_denied"
    assert state(ticket) == before


@pytest.mark.parametrize("who", ["unknown", "inactive", "applicant"])
def test_an_unknown_or_inactive_person_or_the_applicant_is_a_400_naming_user_id(api, cast, who):
    ticket = cast["ticket"]()
    if who == "unknown":
        user_id = 987654321
    elif who == "inactive":
        user_id = UserFactory(username="gone", is_active=False).pk
    else:
        user_id = cast["applicant"].pk
    before = state(ticket)
    response = api.as_user(cast["handlers"][0]).post(
        url(ticket), {"user_id": user_id}, format="json"
    )
    assert response.status_code == 400
    assert list(response.json()["errors"]) == ["user_id"]
    assert state(ticket) == before


@pytest.mark.parametrize("body", [{}, {"user_id": "x"}, {"user_id": 0}])
def test_a_missing_or_malformed_user_id_is_a_400_naming_it(api, cast, body):
    ticket = cast["ticket"]()
    response = api.as_user(cast["handlers"][0]).post(url(ticket), body, format="json")
    assert response.status_code == 400
    assert "user_id" in response.json()["errors"]
    assert not Watcher.objects.exists()


def test_adding_someone_already_watching_is_a_200_changing_nothing(api, cast):
    ticket = cast["ticket"]()
    first = add(api, cast["applicant"], ticket, cast["colleague"]).json()
    before = state(ticket)
    again = add(api, cast["handlers"][0], ticket, cast["colleague"])
    assert again.status_code == 200
    assert again.json() == first  # still copied in by the applicant, at the same instant
    assert state(ticket) == before


@pytest.mark.django_db(transaction=True)
def test_two_adds_of_the_same_person_at_once_make_one_watcher_one_record_one_notice(
    applicant, approver
):
    cast = make_cast(applicant, approver)
    ticket = cast["ticket"]()
    person = cast["colleague"]
    actors = [cast["handlers"][0], cast["handlers"][1], cast["leader"], cast["applicant"]]
    results = run_in_parallel(
        [
            (lambda actor=actor: watcher_add(ticket_id=ticket.pk, user_id=person.pk, actor=actor))
            for actor in actors
        ]
    )
    assert not [r for r in results if isinstance(r, BaseException)], results
    assert sorted(created for _, created in results) == [False, False, False, True]
    assert Watcher.objects.filter(ticket=ticket, user=person).count() == 1
    assert [a for a, _, _ in watcher_records(ticket)] == ["watcher_added"]
    assert inbox(person, "ticket-watching").count() == 1


# Removing


def test_anyone_removes_themselves(api, cast):
    ticket = cast["ticket"]()
    watcher_add(ticket_id=ticket.pk, user_id=cast["colleague"].pk, actor=cast["handlers"][0])
    response = api.as_user(cast["colleague"]).delete(url(ticket, cast["colleague"].pk))
    assert response.status_code == 204
    assert not Watcher.objects.filter(ticket=ticket).exists()
    assert watcher_records(ticket)[-1] == (
        "watcher_removed",
        cast["colleague"].pk,
        {"user_id": cast["colleague"].pk},
    )
    # Without the watcher row the ticket is out of their sight again.
    assert api.as_user(cast["colleague"]).get(url(ticket)).status_code == 404


def test_the_team_removes_anyone(api, cast):
    ticket = cast["ticket"]()
    watcher_add(ticket_id=ticket.pk, user_id=cast["colleague"].pk, actor=cast["applicant"])
    response = api.as_user(cast["handlers"][1]).delete(url(ticket, cast["colleague"].pk))
    assert response.status_code == 204
    assert watcher_records(ticket)[-1] == (
        "watcher_removed",
        cast["handlers"][1].pk,
        {"user_id": cast["colleague"].pk},
    )


def test_the_applicant_removes_only_those_they_copied_in(api, cast):
    ticket = cast["ticket"]()
    watcher_add(ticket_id=ticket.pk, user_id=cast["colleague"].pk, actor=cast["applicant"])
    watcher_add(ticket_id=ticket.pk, user_id=cast["stranger"].pk, actor=cast["handlers"][0])
    before = state(ticket)
    refused = api.as_user(cast["applicant"]).delete(url(ticket, cast["stranger"].pk))
    assert refused.status_code == 403
    assert state(ticket) == before
    assert (
        api.as_user(cast["applicant"]).delete(url(ticket, cast["colleague"].pk)).status_code == 204
    )
    assert list(Watcher.objects.filter(ticket=ticket).values_list("user_id", flat=True)) == [
        cast["stranger"].pk
    ]


def test_a_watcher_may_not_remove_another(api, cast):
    ticket = cast["ticket"]()
    watcher_add(ticket_id=ticket.pk, user_id=cast["colleague"].pk, actor=cast["applicant"])
    watcher_add(ticket_id=ticket.pk, user_id=cast["stranger"].pk, actor=cast["handlers"][0])
    before = state(ticket)
    response = api.as_user(cast["colleague"]).delete(url(ticket, cast["stranger"].pk))
    assert response.status_code == 403
    assert state(ticket) == before


def test_removing_someone_who_does_not_watch_is_a_404(api, cast):
    ticket = cast["ticket"]()
    before = state(ticket)
    response = api.as_user(cast["handlers"][0]).delete(url(ticket, cast["colleague"].pk))
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"
    assert state(ticket) == before


# A watcher outside the team: the public story only


@pytest.fixture
def noted(cast):
    """A ticket the colleague watches (copied in), with a public reply and an internal note
    about a secret word."""
    ticket = cast["ticket"]()
    watcher_add(ticket_id=ticket.pk, user_id=cast["colleague"].pk, actor=cast["applicant"])
    public = reply(ticket, cast["handlers"][0], "We ordered a new fuser.")
    note = reply(ticket, cast["handlers"][0], "Zanzibarian budget overrun", internal=True)
    return ticket, public, note


def test_a_watcher_outside_the_team_reads_the_ticket_but_never_an_internal_note(api, cast, noted):
    ticket, public, note = noted
    client = api.as_user(cast["colleague"])
    assert client.get(f"/api/tickets/{ticket.pk}/").status_code == 200
    replies = client.get(f"/api/tickets/{ticket.pk}/replies/").json()
    assert [r["id"] for r in replies] == [public.pk]
    records = client.get(f"/api/tickets/{ticket.pk}/records/").json()
    assert all(r["action"] != "reply" or r["detail"]["reply_id"] != note.pk for r in records)
    assert "Zanzibarian" not in str(records) and "internal" not in str(records)
    # Their watching is part of the story they read.
    assert "watcher_added" in [r["action"] for r in records]
    # The team reads both.
    team = api.as_user(cast["handlers"][1]).get(f"/api/tickets/{ticket.pk}/replies/").json()
    assert [r["id"] for r in team] == [public.pk, note.pk]


def test_search_finds_nothing_of_an_internal_note_for_a_watcher(api, cast, noted):
    ticket, _, _ = noted
    watcher = api.as_user(cast["colleague"])
    assert watcher.get("/api/search/", {"q": "Zanzibarian"}).json()["results"] == []
    found = watcher.get("/api/search/", {"q": "fuser"}).json()["results"]
    assert [r["id"] for r in found] == [ticket.pk]
    assert "Zanzibarian" not in str(found)
    team = api.as_user(cast["handlers"][1]).get("/api/search/", {"q": "Zanzibarian"}).json()
    assert [r["id"] for r in team["results"]] == [ticket.pk]


def test_a_watcher_may_not_write_on_the_ticket(api, cast, noted):
    ticket, _, _ = noted
    client = api.as_user(cast["colleague"])
    for reply_type in ("public", "internal"):
        response = client.post(
            f"/api/tickets/{ticket.pk}/replies/",
            {"content": "me too", "reply_type": reply_type},
            format="json",
        )
        assert response.status_code == 403
    assert Ticket.objects.get(pk=ticket.pk).reply_count == 2


# What watchers are told


def test_watchers_are_told_of_public_replies_never_of_notes_nor_their_own(cast):
    ticket = cast["ticket"]()
    colleague, handler, applicant = cast["colleague"], cast["handlers"][0], cast["applicant"]
    watcher_add(ticket_id=ticket.pk, user_id=colleague.pk, actor=applicant)
    watcher_add(ticket_id=ticket.pk, user_id=cast["handlers"][1].pk, actor=handler)
    public = reply(ticket, handler, "Fixed the tray.")
    reply(ticket, handler, "Secret budget", internal=True)
    answer = reply(ticket, applicant, "Thanks!")
    own = reply(ticket, cast["handlers"][1], "Checked it myself.")
    told = list(inbox(colleague, "ticket-replied").values_list("dedupe_key", flat=True))
    assert told == [
        f"ticket:{ticket.pk}:reply:{public.pk}",
        f"ticket:{ticket.pk}:reply:{answer.pk}",
        f"ticket:{ticket.pk}:reply:{own.pk}",
    ]
    # The watching handler: told of the others' public replies, not of their own.
    keys = set(inbox(cast["handlers"][1], "ticket-replied").values_list("dedupe_key", flat=True))
    assert f"ticket:{ticket.pk}:reply:{own.pk}" not in keys
    assert f"ticket:{ticket.pk}:reply:{public.pk}" in keys
    # The applicant, as before: one message per reply of the team.
    assert inbox(applicant, "ticket-replied").count() == 2


def test_watchers_are_told_of_each_status_change_the_applicant_sees_in_their_language(cast):
    colleague, handler = cast["colleague"], cast["handlers"][0]
    speaks_chinese(colleague)
    ticket = cast["ticket"](approve=False)
    watcher_add(ticket_id=ticket.pk, user_id=colleague.pk, actor=cast["applicant"])
    watcher_add(ticket_id=ticket.pk, user_id=handler.pk, actor=handler)  # the actor, later
    services.ticket_approve(ticket_id=ticket.pk, approver=cast["approver"])
    services.ticket_accept(ticket_id=ticket.pk, handler=handler)
    services.ticket_complete(ticket_id=ticket.pk, handler=handler)
    services.ticket_close(ticket_id=ticket.pk, user=cast["applicant"])
    told = list(inbox(colleague, "ticket-status-changed"))
    assert [n.dedupe_key.split(":")[3] for n in told] == ["approve", "accept", "complete", "close"]
    # The Chinese wording of the template (the status words come from the catalogue).
    assert all(n.title.startswith(f"工单 {ticket.bill_code}：") for n in told)
    assert "你关注的工单" in told[0].content
    # Never the one who made the change: the handler hears of the approval and the close.
    actions = [n.dedupe_key.split(":")[3] for n in inbox(handler, "ticket-status-changed")]
    assert actions == ["approve", "close"]
    # Nor the applicant, who has messages of their own.
    assert not inbox(cast["applicant"], "ticket-status-changed").exists()


def test_an_english_watcher_reads_the_status_in_words(cast):
    colleague = cast["colleague"]
    ticket = cast["ticket"](approve=False)
    watcher_add(ticket_id=ticket.pk, user_id=colleague.pk, actor=cast["applicant"])
    services.ticket_reject(ticket_id=ticket.pk, approver=cast["approver"], reason="dup")
    (notice,) = inbox(colleague, "ticket-status-changed")
    assert notice.title == f"{ticket.bill_code} is rejected"
    assert notice.content == (
        f"Ticket {ticket.bill_code} (Printer on fire), which you are watching, is rejected."
    )


def test_a_cancelled_ticket_tells_its_watchers(cast):
    ticket = cast["ticket"](approve=False)
    watcher_add(ticket_id=ticket.pk, user_id=cast["colleague"].pk, actor=cast["applicant"])
    services.ticket_cancel(ticket_id=ticket.pk, user=cast["applicant"])
    (notice,) = inbox(cast["colleague"], "ticket-status-changed")
    assert notice.title == f"{ticket.bill_code} is cancelled"


def test_a_replayed_status_change_tells_nobody_twice(cast):
    from ticketing import notify

    ticket = cast["ticket"]()
    watcher_add(ticket_id=ticket.pk, user_id=cast["colleague"].pk, actor=cast["applicant"])
    at = timezone.now().isoformat()
    for _ in range(2):
        notify.status_changed(ticket, "merge", None, at)
    (notice,) = inbox(cast["colleague"], "ticket-status-changed")
    assert notice.title == f"{ticket.bill_code} is merged into another ticket"


def test_the_schema_documents_the_watchers_endpoints(api, staff):
    schema = api.as_user(staff).get("/api/schema/", {"format": "json"}).json()
    watchers = schema["paths"]["/api/tickets/{id}/watchers/"]
    assert set(watchers) >= {"get", "post"}
    assert set(watchers["post"]["responses"]) >= {"200", "201", "400", "403", "404"}
    one = schema["paths"]["/api/tickets/{id}/watchers/{user_id}/"]["delete"]
    assert set(one["responses"]) >= {"204", "403", "404"}
    assert "/api/tickets/{id}/mentionable/" in schema["paths"]
