"""The console's search: the header's box on every page, the results page with its snippets
(their <mark> shown, everything else escaped), its filters and pages, and the caller's role."""

import re

import pytest
from django.urls import reverse

from ticketing.models import ReplyType
from workflow import services

pytestmark = pytest.mark.django_db

URL = reverse("console:search")


@pytest.fixture
def pooled_ticket(submit, group, approver):
    def _ticket(**kwargs):
        made = submit(handler_group_id=group.pk, **kwargs)
        return services.ticket_approve(ticket_id=made.pk, approver=approver)

    return _ticket


def found(response) -> list[int]:
    return [int(pk) for pk in re.findall(r'data-ticket="(\d+)"', response.content.decode())]


@pytest.mark.parametrize(
    "page", ["console:pool", "console:my-tickets", "console:submit", "console:profile"]
)
def test_every_console_page_has_the_search_box_in_its_header(as_user, handlers, page):
    html = as_user(handlers[0]).get(reverse(page), follow=True).content.decode()
    header = html.split("</header>")[0]
    assert f'action="{URL}"' in header
    assert re.search(
        r'<input type="search" id="header-search-q" name="q"[^>]*data-search-box', header
    )
    assert 'aria-keyshortcuts="/"' in header


def test_the_shortcuts_list_names_the_search_key(as_user, handlers):
    html = as_user(handlers[0]).get(reverse("console:pool"), follow=True).content.decode()
    assert 'data-key="/"' in html.split("<dialog")[1]


def test_results_show_the_tickets_with_their_marked_snippets(as_user, handlers, pooled_ticket):
    ticket = pooled_ticket(title="打印机卡纸了 <b>now</b>", content="Tray 2 is empty.")
    pooled_ticket(title="Network down", content="x")
    response = as_user(handlers[0]).get(URL, {"q": "打印"})
    assert response.status_code == 200
    assert found(response) == [ticket.pk]
    html = response.content.decode()
    assert "<mark>打印</mark>机卡纸了 &lt;b&gt;now&lt;/b&gt;" in html
    # The header's box keeps the query.
    assert 'value="打印"' in html.split("</header>")[0]


def test_an_applicant_finds_only_their_own_tickets_and_no_notes(
    as_user, submit, applicant, handlers, pooled_ticket, outsider
):
    mine = pooled_ticket(title="Printer jammed", content="x")
    services.ticket_reply(
        ticket_id=mine.pk,
        author=handlers[0],
        reply_type=ReplyType.INTERNAL,
        content="printer roller worn, bill the department",
    )
    others = submit(title="Printer broken", content="x", creator=outsider)
    response = as_user(applicant).get(URL, {"q": "printer"})
    assert found(response) == [mine.pk]
    assert "roller" not in response.content.decode()
    assert found(as_user(applicant).get(URL, {"q": "roller"})) == []
    team = as_user(handlers[0]).get(URL, {"q": "roller"})
    assert found(team) == [mine.pk]
    assert 'data-field="note"' in team.content.decode()
    assert others.pk not in found(as_user(handlers[0]).get(URL, {"q": "printer"}))


def test_filters_and_pages(as_user, handlers, pooled_ticket, group):
    for i in range(23):
        pooled_ticket(title=f"Printer {i}", content="x", priority=1 + i % 2)
    client = as_user(handlers[0])
    first = client.get(URL, {"q": "printer"})
    assert len(found(first)) == 20
    assert "23" in first.content.decode()
    second = client.get(URL, {"q": "printer", "page": 2})
    assert len(found(second)) == 3 and not set(found(first)) & set(found(second))
    low = client.get(URL, {"q": "printer", "priority": 1, "handler_group": group.pk})
    assert len(found(low)) == 12
    assert 'value="1" selected' in low.content.decode()


def test_bad_input_is_a_400_naming_the_field(as_user, handlers):
    response = as_user(handlers[0]).get(URL, {"q": "printer", "from": "soon"})
    assert response.status_code == 400
    assert 'data-field="from"' in response.content.decode()
    assert as_user(handlers[0]).get(URL, {"q": "!!!"}).status_code == 400


def test_without_a_query_the_page_explains_itself(as_user, handlers):
    response = as_user(handlers[0]).get(URL)
    assert response.status_code == 200 and found(response) == []


def test_search_needs_a_login(client):
    response = client.get(URL, {"q": "printer"})
    assert response.status_code == 302 and "login" in response["Location"]


def test_the_pool_pages_own_search_still_works(as_user, handlers, pooled_ticket):
    ticket = pooled_ticket(title="Printer jammed", content="x")
    response = as_user(handlers[0]).get(reverse("console:pool"), {"view": "all", "q": "Printer"})
    assert response.status_code == 200
    assert f"/console/tickets/{ticket.pk}/" in response.content.decode()
