"""`?tag=` on the pool, search and the SLA report; search's `?field.<key>=`; the SLA report
grouped by tag (a ticket with two tags in both rows, one without under the null key)."""

from datetime import timedelta

import pytest

from tests.factories import UserFactory
from tests.sla.conftest import T0, approved, people, rule  # noqa: F401 (fixtures)
from tests.toolbox.tagging import make_cast
from ticketing.models import FieldType, Ticket, TicketField
from ticketing.tags import tags_add
from workflow import services

pytestmark = pytest.mark.django_db

WINDOW = {"from": "2026-03-01T00:00:00Z", "to": "2026-03-31T00:00:00Z"}


@pytest.fixture
def cast(applicant, approver):
    return make_cast(applicant, approver)


def ids(body) -> set[int]:
    rows = body["results"] if isinstance(body, dict) else body
    return {row["id"] for row in rows}


# The pool (the lead's pool_for calls ticketing.tags.filter_tag)


def test_the_pool_filters_by_tag_in_any_case(api, cast):
    printer, vpn, bare = cast["ticket"](), cast["ticket"](), cast["ticket"]()
    tags_add(ticket_id=printer.pk, tags=["printer", "urgent"], actor_id=None)
    tags_add(ticket_id=vpn.pk, tags=["vpn"], actor_id=None)
    client = api.as_user(cast["handlers"][0])
    body = client.get("/api/tickets/pool/", {"view": "all", "tag": "Printer"}).json()
    assert ids(body) == {printer.pk}
    body = client.get("/api/tickets/pool/", {"view": "all"}).json()
    assert {printer.pk, vpn.pk, bare.pk} <= ids(body)


# Search


def test_search_filters_by_tag(api, cast):
    printer, other = cast["ticket"](), cast["ticket"]()
    tags_add(ticket_id=printer.pk, tags=["hardware"], actor_id=None)
    client = api.as_user(cast["handlers"][1])
    everything = client.get("/api/search/", {"q": "printer"}).json()
    assert ids(everything) == {printer.pk, other.pk}
    tagged = client.get("/api/search/", {"q": "printer", "tag": "HARDWARE"})
    assert tagged.status_code == 200, tagged.json()
    assert ids(tagged.json()) == {printer.pk}
    assert ids(client.get("/api/search/", {"q": "printer", "tag": "nope"}).json()) == set()


def test_an_applicants_search_by_tag_tells_nothing_of_their_tickets_tags(api, cast):
    ticket = cast["ticket"]()
    tags_add(ticket_id=ticket.pk, tags=["difficult customer"], actor_id=None)
    client = api.as_user(cast["applicant"])
    assert ids(client.get("/api/search/", {"q": "printer"}).json()) == {ticket.pk}
    found = client.get("/api/search/", {"q": "printer", "tag": "difficult customer"}).json()
    assert ids(found) == set()


def test_search_filters_by_a_custom_field_read_by_its_type(api, cast):
    TicketField.objects.create(key="floor", label="Floor", type=FieldType.NUMBER)
    third, fourth = cast["ticket"](), cast["ticket"]()
    Ticket.objects.filter(pk=third.pk).update(fields={"floor": 3})
    Ticket.objects.filter(pk=fourth.pk).update(fields={"floor": 4})
    client = api.as_user(cast["handlers"][0])
    body = client.get("/api/search/", {"q": "printer", "field.floor": "3"}).json()
    assert ids(body) == {third.pk}
    both = client.get("/api/search/", {"q": "printer", "field.floor": "3", "tag": "x"}).json()
    assert ids(both) == set()
    bad = client.get("/api/search/", {"q": "printer", "field.floor": "third"})
    assert bad.status_code == 400
    assert "field.floor" in bad.json()["errors"]
    unknown = client.get("/api/search/", {"q": "printer", "field.nope": "1"})
    assert unknown.status_code == 400
    assert "field.nope" in unknown.json()["errors"]


def test_a_tag_too_long_for_search_is_a_400_naming_it(api, cast):
    response = api.as_user(cast["staff"]).get("/api/search/", {"q": "printer", "tag": "x" * 51})
    assert response.status_code == 400
    assert "tag" in response.json()["errors"]


# The SLA report


@pytest.fixture
def history(approved, people, rule):  # noqa: F811 (the fixtures imported above)
    """Three completed tickets: tagged [printer, urgent], [printer], none; accepted after 30,
    90 and 20 min (one response breach: the second)."""
    handler = people["handler"]
    made = []
    for accept_after, complete_after, tags in (
        (30, 120, ["printer", "urgent"]),
        (90, 300, ["Printer"]),
        (20, 60, []),
    ):
        ticket = approved()
        if tags:
            tags_add(ticket_id=ticket.pk, tags=tags, actor_id=None, now=T0)
        services.ticket_accept(
            ticket_id=ticket.pk, handler=handler, now=T0 + timedelta(minutes=accept_after)
        )
        services.ticket_complete(
            ticket_id=ticket.pk, handler=handler, now=T0 + timedelta(minutes=complete_after)
        )
        made.append(ticket)
    return people


def test_the_sla_report_filters_by_tag(api, history):
    staff = UserFactory(username="boss", is_staff=True)
    client = api.as_user(staff)
    body = client.get("/api/sla/report/", {**WINDOW, "tag": "PRINTER"}).json()
    (row,) = body["rows"]
    assert row["count"] == 2
    assert row["response_breaches"] == 1
    assert client.get("/api/sla/report/", {**WINDOW, "tag": "nope"}).json()["rows"] == []
    too_long = client.get("/api/sla/report/", {**WINDOW, "tag": "x" * 51})
    assert too_long.status_code == 400
    assert "tag" in too_long.json()["errors"]


def test_the_sla_report_groups_by_tag_a_ticket_in_each_of_its_tags(api, history):
    client = api.as_user(history["leader"])
    body = client.get("/api/sla/report/", {**WINDOW, "group_by": "tag"}).json()
    assert body["group_by"] == "tag"
    rows = {row["key"]: row for row in body["rows"]}
    assert list(rows) == ["printer", "urgent", None]
    assert rows["printer"]["tag"] == "printer"
    assert rows["printer"]["count"] == 2 and rows["printer"]["response_breaches"] == 1
    assert rows["urgent"]["count"] == 1 and rows["urgent"]["response_breaches"] == 0
    assert rows[None]["count"] == 1
    filtered = client.get("/api/sla/report/", {**WINDOW, "group_by": "tag", "tag": "urgent"})
    assert [(r["key"], r["count"]) for r in filtered.json()["rows"]] == [
        ("printer", 1),
        ("urgent", 1),
    ]


def test_the_sla_report_by_tag_as_csv(api, history):
    client = api.as_user(history["leader"])
    response = client.get("/api/sla/report/", {**WINDOW, "group_by": "tag", "format": "csv"})
    assert response.status_code == 200
    lines = response.content.decode().splitlines()
    assert lines[0].startswith("tag,key,count")
    assert lines[1].startswith("printer,printer,2")
