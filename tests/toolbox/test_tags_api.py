"""Tags through the API: the team adds and removes them (normalised, limited, each change one
history record, Tag counts kept), everyone else is refused with nothing changed, applicants
never read them, and the autocomplete lists the tags in use by count."""

from datetime import UTC, datetime

import pytest

from tests.concurrency import run_in_parallel
from tests.toolbox.tagging import make_cast
from ticketing.models import Tag, Ticket, TicketRecord
from ticketing.tags import TAGS_PER_TICKET, tags_add, tags_remove

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)


@pytest.fixture
def cast(applicant, approver):
    return make_cast(applicant, approver)


def url(ticket, tag=None):
    base = f"/api/tickets/{ticket.pk}/tags/"
    return base if tag is None else f"{base}{tag}/"


def tag_records(ticket):
    return list(
        TicketRecord.objects.filter(ticket=ticket, action="tags")
        .order_by("id")
        .values_list("actor_id", "detail")
    )


def counts():
    return dict(Tag.objects.values_list("name", "ticket_count"))


def state(ticket):
    """Everything a refused request must leave as it was."""
    return (Ticket.objects.get(pk=ticket.pk).tags, tag_records(ticket), counts())


# Adding


def test_the_team_adds_tags_normalised_each_once_and_recorded(api, cast):
    ticket = cast["ticket"]()
    agent = cast["handlers"][1]  # a member of the group, not the handler
    response = api.as_user(agent).post(
        url(ticket), {"tags": ["  Printer ", "VPN   Access", "printer"]}, format="json"
    )
    assert response.status_code == 200, response.json()
    assert response.json() == {"tags": ["printer", "vpn access"]}
    assert Ticket.objects.get(pk=ticket.pk).tags == ["printer", "vpn access"]
    assert tag_records(ticket) == [(agent.pk, {"added": ["printer", "vpn access"]})]
    assert counts() == {"printer": 1, "vpn access": 1}

    # Again, with one new: only the new one is added, recorded and counted.
    response = api.as_user(cast["leader"]).post(
        url(ticket), {"tags": ["PRINTER", "urgent"]}, format="json"
    )
    assert response.json() == {"tags": ["printer", "vpn access", "urgent"]}
    assert tag_records(ticket)[-1] == (cast["leader"].pk, {"added": ["urgent"]})
    assert counts() == {"printer": 1, "vpn access": 1, "urgent": 1}


def test_adding_tags_the_ticket_carries_records_nothing(api, cast):
    ticket = cast["ticket"]()
    tags_add(ticket_id=ticket.pk, tags=["printer"], actor_id=cast["staff"].pk, now=NOW)
    before = state(ticket)
    response = api.as_user(cast["staff"]).post(url(ticket), {"tags": ["Printer"]}, format="json")
    assert response.status_code == 200
    assert response.json() == {"tags": ["printer"]}
    assert state(ticket) == before


def test_staff_and_the_team_tag_a_ticket_in_the_pool_and_a_closed_one(api, cast):
    pooled = cast["ticket"](accept=False)
    response = api.as_user(cast["handlers"][0]).post(url(pooled), {"tags": ["a"]}, format="json")
    assert response.status_code == 200
    from workflow import services

    done = cast["ticket"]()
    services.ticket_close(ticket_id=done.pk, user=cast["staff"])
    response = api.as_user(cast["staff"]).post(url(done), {"tags": ["late"]}, format="json")
    assert response.status_code == 200
    assert response.json() == {"tags": ["late"]}


@pytest.mark.parametrize(
    "tags",
    [
        [""],
        ["   "],
        ["ok", "x" * 51],
        [],
        "printer",
        [None],
    ],
    ids=["empty", "blank", "too-long", "none", "not-a-list", "not-text"],
)
def test_a_bad_tag_is_a_400_naming_tags_and_changes_nothing(api, cast, tags):
    ticket = cast["ticket"]()
    tags_add(ticket_id=ticket.pk, tags=["kept"], actor_id=cast["staff"].pk, now=NOW)
    before = state(ticket)
    response = api.as_user(cast["handlers"][0]).post(url(ticket), {"tags": tags}, format="json")
    assert response.status_code == 400, response.json()
    assert "tags" in response.json()["errors"]
    assert state(ticket) == before


def test_fifty_characters_is_a_tag_and_spaces_around_do_not_count(api, cast):
    ticket = cast["ticket"]()
    name = "x" * 50
    response = api.as_user(cast["handlers"][0]).post(
        url(ticket), {"tags": [f"  {name.upper()}  "]}, format="json"
    )
    assert response.status_code == 200
    assert response.json() == {"tags": [name]}


def test_more_than_twenty_tags_on_a_ticket_is_a_400_and_none_is_added(api, cast):
    ticket = cast["ticket"]()
    tags_add(
        ticket_id=ticket.pk,
        tags=[f"t{i}" for i in range(TAGS_PER_TICKET - 1)],
        actor_id=cast["staff"].pk,
        now=NOW,
    )
    before = state(ticket)
    response = api.as_user(cast["handlers"][0]).post(
        url(ticket), {"tags": ["t0", "new1", "new2"]}, format="json"
    )
    assert response.status_code == 400
    assert "tags" in response.json()["errors"]
    assert state(ticket) == before
    # The twentieth fits.
    response = api.as_user(cast["handlers"][0]).post(
        url(ticket), {"tags": ["t0", "new1"]}, format="json"
    )
    assert response.status_code == 200
    assert len(response.json()["tags"]) == TAGS_PER_TICKET


def test_the_applicant_a_watcher_and_an_approver_may_not_tag(api, cast):
    ticket = cast["ticket"]()
    cast["watch"](ticket)
    tags_add(ticket_id=ticket.pk, tags=["kept"], actor_id=cast["staff"].pk, now=NOW)
    before = state(ticket)
    for person in (cast["applicant"], cast["watcher"], cast["approver"]):
        client = api.as_user(person)
        response = client.post(url(ticket), {"tags": ["mine"]}, format="json")
        assert response.status_code == 403, person
        assert response.json()["code"] == "permission_denied"
        assert client.delete(url(ticket, "kept")).status_code == 403, person
    assert state(ticket) == before


def test_a_ticket_the_caller_may_not_see_is_a_404(api, cast):
    ticket = cast["ticket"]()
    tags_add(ticket_id=ticket.pk, tags=["kept"], actor_id=cast["staff"].pk, now=NOW)
    before = state(ticket)
    client = api.as_user(cast["outsider"])
    assert client.post(url(ticket), {"tags": ["x"]}, format="json").status_code == 404
    assert client.delete(url(ticket, "kept")).status_code == 404
    assert state(ticket) == before
    missing = api.as_user(cast["staff"]).post("/api/tickets/999999/tags/", {"tags": ["x"]})
    assert missing.status_code == 404


def test_reading_a_ticket_applicants_and_watchers_get_tags_null(api, cast):
    ticket = cast["ticket"]()
    cast["watch"](ticket)
    tags_add(ticket_id=ticket.pk, tags=["vip"], actor_id=cast["staff"].pk, now=NOW)
    for person in (cast["applicant"], cast["watcher"]):
        body = api.as_user(person).get(f"/api/tickets/{ticket.pk}/").json()
        assert body["tags"] is None, person
    body = api.as_user(cast["handlers"][1]).get(f"/api/tickets/{ticket.pk}/").json()
    assert body["tags"] == ["vip"]


def test_an_applicants_page_of_history_shows_no_tag_record(api, cast):
    ticket = cast["ticket"]()
    tags_add(ticket_id=ticket.pk, tags=["vip"], actor_id=cast["staff"].pk, now=NOW)
    response = api.as_user(cast["applicant"]).get(f"/api/tickets/{ticket.pk}/records/")
    if response.status_code == 200:  # (the applicant may not read the trail at all: fine)
        body = response.json()
        rows = body["results"] if isinstance(body, dict) else body
        assert all(row["action"] != "tags" for row in rows)


# Removing


def test_the_team_removes_a_tag_in_any_case_recorded_and_uncounted(api, cast):
    ticket = cast["ticket"]()
    other = cast["ticket"]()
    tags_add(ticket_id=ticket.pk, tags=["printer", "vpn access"], actor_id=None, now=NOW)
    tags_add(ticket_id=other.pk, tags=["printer"], actor_id=None, now=NOW)
    agent = cast["handlers"][1]
    response = api.as_user(agent).delete(url(ticket, "VPN%20Access"))
    assert response.status_code == 200
    assert response.json() == {"tags": ["printer"]}
    assert Ticket.objects.get(pk=ticket.pk).tags == ["printer"]
    assert tag_records(ticket)[-1] == (agent.pk, {"removed": ["vpn access"]})
    assert counts() == {"printer": 2, "vpn access": 0}
    response = api.as_user(agent).delete(url(ticket, "printer"))
    assert response.json() == {"tags": []}
    assert counts() == {"printer": 1, "vpn access": 0}


def test_a_tag_with_a_slash_is_removed_by_its_url(api, cast):
    ticket = cast["ticket"]()
    tags_add(ticket_id=ticket.pk, tags=["hw/printer"], actor_id=None, now=NOW)
    response = api.as_user(cast["staff"]).delete(url(ticket, "hw/printer"))
    assert response.status_code == 200
    assert response.json() == {"tags": []}


def test_removing_a_tag_the_ticket_lacks_is_a_404_and_changes_nothing(api, cast):
    ticket = cast["ticket"]()
    tags_add(ticket_id=ticket.pk, tags=["printer"], actor_id=None, now=NOW)
    before = state(ticket)
    response = api.as_user(cast["handlers"][0]).delete(url(ticket, "scanner"))
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"
    assert state(ticket) == before


def test_the_service_ignores_tags_not_carried_and_records_nothing(cast):
    """(What a macro's remove_tags step relies on.)"""
    ticket = cast["ticket"]()
    tags_add(ticket_id=ticket.pk, tags=["printer"], actor_id=None, now=NOW)
    before = state(ticket)
    assert tags_remove(ticket_id=ticket.pk, tags=["scanner"], actor_id=None, now=NOW) == ["printer"]
    assert state(ticket) == before
    assert tags_remove(ticket_id=ticket.pk, tags=["Scanner", "PRINTER"], actor_id=None) == []
    assert tag_records(ticket)[-1] == (None, {"removed": ["printer"]})


def test_the_record_carries_the_explicit_time(cast):
    ticket = cast["ticket"]()
    tags_add(ticket_id=ticket.pk, tags=["printer"], actor_id=None, now=NOW)
    assert TicketRecord.objects.get(ticket=ticket, action="tags").created == NOW


# Counting under concurrency


@pytest.mark.django_db(transaction=True)
def test_two_tickets_taking_a_new_tag_at_once_count_two(applicant, approver):
    cast = make_cast(applicant, approver)
    tickets = [cast["ticket"]() for _ in range(2)]

    def add(ticket):
        return lambda: tags_add(ticket_id=ticket.pk, tags=["outage", "b"], actor_id=None)

    results = run_in_parallel([add(t) for t in tickets])
    assert results == [["outage", "b"], ["outage", "b"]]
    assert counts() == {"outage": 2, "b": 2}
    assert Tag.objects.filter(name="outage").count() == 1


@pytest.mark.django_db(transaction=True)
def test_two_adds_to_one_ticket_at_once_apply_one_after_the_other(applicant, approver):
    cast = make_cast(applicant, approver)
    ticket = cast["ticket"]()
    calls = [
        lambda: tags_add(ticket_id=ticket.pk, tags=["a", "shared"], actor_id=None),
        lambda: tags_add(ticket_id=ticket.pk, tags=["b", "shared"], actor_id=None),
    ]
    results = run_in_parallel(calls)
    assert not any(isinstance(r, BaseException) for r in results), results
    assert sorted(Ticket.objects.get(pk=ticket.pk).tags) == ["a", "b", "shared"]
    assert counts() == {"a": 1, "b": 1, "shared": 1}
    assert len(tag_records(ticket)) == 2


# Autocomplete


def test_autocomplete_lists_tags_holding_q_prefix_first_then_by_count(api, cast):
    tickets = [cast["ticket"]() for _ in range(3)]
    tags_add(ticket_id=tickets[0].pk, tags=["network", "vpn", "printer"], actor_id=None)
    tags_add(ticket_id=tickets[1].pk, tags=["network", "home network"], actor_id=None)
    tags_add(ticket_id=tickets[2].pk, tags=["home network", "network", "unused"], actor_id=None)
    tags_remove(ticket_id=tickets[2].pk, tags=["unused"], actor_id=None)
    client = api.as_user(cast["handlers"][0])
    body = client.get("/api/tags/", {"q": "NET"}).json()
    assert body == [
        {"name": "network", "ticket_count": 3},
        {"name": "home network", "ticket_count": 2},
    ]
    everything = [row["name"] for row in client.get("/api/tags/").json()]
    assert everything == ["network", "home network", "printer", "vpn"]  # (unused: 0 tickets)


def test_autocomplete_gives_at_most_twenty(api, cast):
    ticket = cast["ticket"]()
    other = cast["ticket"]()
    tags_add(ticket_id=ticket.pk, tags=[f"t{i:02d}" for i in range(20)], actor_id=None)
    tags_add(ticket_id=other.pk, tags=[f"u{i:02d}" for i in range(5)], actor_id=None)
    body = api.as_user(cast["staff"]).get("/api/tags/").json()
    assert len(body) == 20


def test_autocomplete_is_for_the_support_team_only(api, cast):
    ticket = cast["ticket"]()
    tags_add(ticket_id=ticket.pk, tags=["vip"], actor_id=None)
    for person in (cast["applicant"], cast["watcher"], cast["approver"]):
        response = api.as_user(person).get("/api/tags/", {"q": "v"})
        assert response.status_code == 403, person
    assert api.as_user(cast["outsider"]).get("/api/tags/").status_code == 200
    api.credentials()
    assert api.get("/api/tags/").status_code == 401
