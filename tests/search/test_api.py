"""GET /api/search/ through HTTP: Chinese and English matching, ranking, filters, pages, bad
input, and the highlights."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from ticketing.models import Category, Ticket

from .conftest import ids

pytestmark = pytest.mark.django_db


def test_a_two_character_chinese_word_finds_a_longer_run(ticket, search, staff):
    found = ticket(title="打印机卡纸了", content="三楼的打印机")
    ticket(title="网络很慢", content="无法连接")
    assert ids(search(staff, "打印")) == [found.pk]
    assert ids(search(staff, "卡纸")) == [found.pk]
    assert ids(search(staff, "打印机")) == [found.pk]
    # The characters must be next to each other, in that order.
    assert ids(search(staff, "印打")) == []


def test_a_chinese_word_finds_a_reply_in_mixed_text(ticket, reply, search, staff):
    found = ticket(title="Cannot connect", content="From home.")
    ticket(title="Other", content="证件 and 书本")
    reply(found, "VPN 证书过期")
    response = search(staff, "证书")
    assert ids(response) == [found.pk]
    (row,) = response.json()["results"]
    assert {"field": "reply", "reply_id": found.replies.get().pk} == {
        k: v for k, v in row["highlights"][0].items() if k != "snippet"
    }
    assert "<mark>证书</mark>过期" in row["highlights"][0]["snippet"]


def test_english_matches_word_forms(ticket, search, staff):
    found = ticket(title="The printer is jammed", content="Paper everywhere.")
    ticket(title="Printing press", content="Something else entirely.")
    response = search(staff, "printers")
    assert found.pk in ids(response)
    title = next(h for h in response.json()["results"][0]["highlights"] if h["field"] == "title")
    assert "<mark>printer</mark>" in title["snippet"]
    # "jammed" is found by "jams" and "jamming" too.
    assert ids(search(staff, "jamming")) == [found.pk]


def test_every_word_must_match(ticket, search, staff):
    both = ticket(title="Printer jammed", content="On floor three.")
    ticket(title="Printer offline", content="On floor two.")
    ticket(title="Scanner jammed", content="On floor one.")
    assert ids(search(staff, "printer jammed")) == [both.pk]
    assert sorted(ids(search(staff, "printer"))) == sorted(
        Ticket.objects.filter(title__startswith="Printer").values_list("pk", flat=True)
    )
    assert ids(search(staff, "打印 jammed")) == []


def test_a_bill_code_finds_its_ticket_exactly(ticket, search, staff):
    first = ticket(title="One", content="x")
    second = ticket(title="Two", content="x")
    assert ids(search(staff, second.bill_code)) == [second.pk]
    assert ids(search(staff, first.bill_code.lower())) == [first.pk]


def test_a_bill_code_mentioned_in_another_ticket_ranks_below_the_ticket_itself(
    ticket, reply, search, staff
):
    target = ticket(title="Original", content="x")
    mention = ticket(title="Follow-up", content=f"Same as {target.bill_code}.")
    assert ids(search(staff, target.bill_code)) == [target.pk, mention.pk]


def test_relevance_first_then_the_newest(ticket, search, staff):
    in_content_old = ticket(title="Question", content="The router is down.")
    in_title = ticket(title="Router down", content="Since this morning.")
    in_content_new = ticket(title="Another question", content="The router is down.")
    assert ids(search(staff, "router")) == [in_title.pk, in_content_new.pk, in_content_old.pk]


def test_filters_narrow_the_results(ticket, search, staff, group, approver, submit):
    Category.objects.create(name="hardware")
    urgent = ticket(title="Printer broken", content="x", priority=4)
    low = ticket(title="Printer broken", content="x", priority=1, category="hardware")
    assert ids(search(staff, "printer", priority=4)) == [urgent.pk]
    assert ids(search(staff, "printer", category="hardware")) == [low.pk]
    assert sorted(ids(search(staff, "printer", handler_group=group.pk))) == sorted(
        [urgent.pk, low.pk]
    )
    assert ids(search(staff, "printer", handler_group=group.pk + 100)) == []
    awaiting = submit(title="Printer request", content="x")
    assert ids(search(staff, "printer", ticket_status=0)) == [awaiting.pk]
    Ticket.objects.filter(pk=urgent.pk).update(submitted_time=timezone.now() - timedelta(days=10))
    day = (timezone.localdate() - timedelta(days=10)).isoformat()
    assert ids(search(staff, "printer", **{"from": day, "to": day})) == [urgent.pk]
    assert urgent.pk not in ids(
        search(staff, "printer", **{"from": (timezone.localdate() - timedelta(days=2)).isoformat()})
    )


def test_results_are_paginated_like_the_pool(ticket, search, staff):
    made = [ticket(title=f"Printer {i}", content="x") for i in range(5)]
    first = search(staff, "printer", page_size=2)
    body = first.json()
    assert body["count"] == 5 and body["count_is_estimate"] is False
    assert len(body["results"]) == 2 and body["next"] and body["previous"] is None
    second = search(staff, "printer", page_size=2, page=3).json()
    assert len(second["results"]) == 1 and second["next"] is None
    seen = (
        ids(first)
        + [r["id"] for r in search(staff, "printer", page_size=2, page=2).json()["results"]]
        + [r["id"] for r in second["results"]]
    )
    assert sorted(seen) == sorted(t.pk for t in made)
    assert search(staff, "printer", page=9).status_code == 404


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({}, "q"),
        ({"q": ""}, "q"),
        ({"q": "   "}, "q"),
        ({"q": "!!! ???"}, "q"),
        ({"q": "x" * 201}, "q"),
        ({"q": " ".join(["word"] * 13)}, "q"),
        ({"q": "printer", "priority": "9"}, "priority"),
        ({"q": "printer", "ticket_status": "x"}, "ticket_status"),
        ({"q": "printer", "handler_group": "0"}, "handler_group"),
        ({"q": "printer", "from": "yesterday"}, "from"),
        ({"q": "printer", "to": "2026-02-30"}, "to"),
        ({"q": "printer", "from": "2026-03-02", "to": "2026-03-01"}, "to"),
        ({"q": "printer", "page": "x"}, "page"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(search, staff, params, field):
    response = search(staff, **params)
    assert response.status_code == 400, response.content
    assert field in response.json()["errors"], response.json()


def test_a_query_of_stop_words_finds_nothing(ticket, search, staff):
    ticket(title="The printer", content="x")
    assert ids(search(staff, "the")) == []


def test_search_needs_a_signed_in_caller(api):
    assert api.get("/api/search/", {"q": "printer"}).status_code == 401


def test_highlights_are_escaped_with_only_mark_tags(ticket, reply, attach, search, staff):
    found = ticket(title="<script>alert(1)</script> printer", content="a & b <b>printer</b>")
    reply(found, 'printer <img src=x onerror="alert(1)">')
    attach(found, "<svg onload=x>printer.png")
    (row,) = search(staff, "printer").json()["results"]
    assert {h["field"] for h in row["highlights"]} == {"title", "content", "reply", "attachment"}
    for highlight in row["highlights"]:
        tags = re.findall(r"</?[a-zA-Z][^>]*>", highlight["snippet"])
        assert tags and set(tags) <= {"<mark>", "</mark>"}, highlight
    title = next(h for h in row["highlights"] if h["field"] == "title")
    assert title["snippet"] == "&lt;script&gt;alert(1)&lt;/script&gt; <mark>printer</mark>"


def test_a_long_text_is_cut_around_its_match(ticket, search, staff):
    words = ["filler"] * 100 + ["printer"] + ["filler"] * 100
    ticket(title="Question", content=" ".join(words))
    (row,) = search(staff, "printer").json()["results"]
    content = row["highlights"][0]["snippet"]
    assert content.startswith("…") and content.endswith("…") and "<mark>printer</mark>" in content
    assert len(content) < 220


def test_a_file_name_finds_its_ticket(ticket, attach, search, staff, applicant):
    found = ticket(title="Error on start", content="See the screenshot.")
    file = attach(found, "vpn-证书-error.png")
    for user in (staff, applicant):
        response = search(user, "证书")
        assert ids(response) == [found.pk]
        (highlight,) = response.json()["results"][0]["highlights"]
        assert highlight["field"] == "attachment" and highlight["attachment_id"] == file.pk
        assert "<mark>证书</mark>" in highlight["snippet"]


@pytest.mark.django_db(transaction=True)
def test_a_reply_is_found_as_soon_as_it_is_committed(ticket, search, staff, api, agent, group):
    """Each request commits (a transactional test): the reply's vector is written by the
    database in the reply's own INSERT, so the next request finds it."""
    found = ticket(title="Laptop", content="Slow.")
    assert ids(search(staff, "flickering")) == []
    response = api.as_user(agent).post(
        f"/api/tickets/{found.pk}/replies/",
        {"content": "The screen keeps flickering."},
        format="json",
    )
    assert response.status_code == 201, response.content
    assert ids(search(staff, "flickering")) == [found.pk]
    # An admin's edit of the title is found as soon, with no code of search's on the way.
    Ticket.objects.filter(pk=found.pk).update(title="Laptop battery swollen")
    assert ids(search(staff, "swollen")) == [found.pk]


def test_the_api_schema_describes_search(api, staff):
    schema = api.as_user(staff).get("/api/schema/", {"format": "json"}).json()
    operation = schema["paths"]["/api/search/"]["get"]
    names = {p["name"] for p in operation["parameters"]}
    assert {"q", "from", "to", "priority", "page"} <= names
    assert "400" in operation["responses"]


def test_a_common_word_is_ranked_among_the_newest_tickets_first(ticket, search, staff, monkeypatch):
    """The newest window of tickets that holds ENOUGH results is the one ranked; beyond it
    the count is said to be an estimate (there may be more, older)."""
    from search import selectors

    older = ticket(title="Printer in the title", content="x")
    newer = ticket(title="Question", content="The printer again.")
    monkeypatch.setattr(selectors, "FIRST_WINDOW", 1e-12)  # the newest id only
    monkeypatch.setattr(selectors, "ENOUGH", 1)
    body = search(staff, "printer").json()
    assert [r["id"] for r in body["results"]] == [newer.pk]
    assert body["count_is_estimate"] is True
    monkeypatch.setattr(selectors, "FIRST_WINDOW", 1.0)
    body = search(staff, "printer").json()
    # The whole history: both, the title's match first, and the count is exact.
    assert [r["id"] for r in body["results"]] == [older.pk, newer.pk]
    assert body["count_is_estimate"] is False
