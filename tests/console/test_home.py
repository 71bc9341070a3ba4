"""Home by role (issue 14, point 1), through HTTP: `/console/` is My work for agents (offered
first, then in progress, then paused), a redirect to Approvals for approvers and to My
tickets for everyone else; a person with several roles switches with `?home=` and the choice
is kept. The agent's tabs carry counts (one query); search and sort are in the query string."""

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from sla import services as sla_services
from tests.factories import ApproverFactory, HandlerGroupFactory, UserFactory
from ticketing.models import Ticket, TicketStatus
from workflow import services

pytestmark = pytest.mark.django_db

HOME = "/console/"


def text(response) -> str:
    return response.content.decode()


def row_order(body: str) -> list[int]:
    return [int(pk) for pk in re.findall(r'<tr data-ticket-id="(\d+)"', body)]


def tab_count(body: str, view: str) -> int:
    match = re.search(rf'data-count="{view}">(\d+)<', body)
    assert match, f"no count on the {view} tab"
    return int(match.group(1))


@pytest.fixture
def agent(handlers, group):
    return handlers[0]


@pytest.fixture
def approved(submit, group, approver):
    """`approved(title, **kwargs)`: a ticket approved into the support group's pool."""

    def _approved(title, **kwargs):
        kwargs.setdefault("handler_group_id", group.pk)
        ticket = submit(title=title, **kwargs)
        return services.ticket_approve(ticket_id=ticket.pk, approver=approver)

    return _approved


@pytest.fixture
def work(approved, agent, leader):
    """The agent's day: one ticket offered to them (not accepted), one in progress, one paused
    (waiting on the applicant), and one waiting in the pool."""
    paused = approved("Paused printer")
    services.ticket_accept(ticket_id=paused.pk, handler=agent)
    sla_services.sla_pause(ticket_id=paused.pk, user=agent)
    in_progress = approved("Working on VPN")
    services.ticket_accept(ticket_id=in_progress.pk, handler=agent)
    offered = approved("Offered mailbox")
    services.ticket_transfer(ticket_id=offered.pk, user=leader, handler_id=agent.pk)
    pool = approved("Waiting in the pool")
    tickets = {"offered": offered, "in_progress": in_progress, "paused": paused, "pool": pool}
    return {name: Ticket.objects.get(pk=t.pk) for name, t in tickets.items()}


# --- the agent's My work ---------------------------------------------------------------------


def test_agent_lands_on_my_work_with_the_offered_ticket_first(as_user, agent, work):
    assert work["offered"].ticket_status == TicketStatus.PENDING_PROCESS
    response = as_user(agent).get(HOME)
    assert response.status_code == 200
    body = text(response)
    assert row_order(body) == [work["offered"].pk, work["in_progress"].pk, work["paused"].pk]
    headings = [
        body.index("Waiting for you to accept"),
        body.index("In progress"),
        body.index("Paused — waiting on the applicant"),
    ]
    assert headings == sorted(headings)
    offered_row = re.search(rf'<tr data-ticket-id="{work["offered"].pk}".*?</tr>', body, re.S)
    assert "sla-badge" in offered_row.group(0)
    assert f'action="/console/tickets/{work["offered"].pk}/accept/"' in offered_row.group(0)
    assert 'aria-current="page" data-view="mine"' in body
    assert "No tickets waiting" not in body


def test_every_tab_shows_its_count(as_user, agent, work):
    body = text(as_user(agent).get(HOME))
    assert tab_count(body, "mine") == 3
    assert tab_count(body, "pending") == 1
    assert tab_count(body, "all") == 4
    # The same counts on the other tabs.
    body = text(as_user(agent).get(HOME, {"view": "pending"}))
    assert (tab_count(body, "mine"), tab_count(body, "pending"), tab_count(body, "all")) == (
        3,
        1,
        4,
    )
    assert row_order(body) == [work["pool"].pk]


def test_the_tab_counts_read_a_bounded_number_of_rows(as_user, agent, work):
    """Each tab's count reads at most EXACT_COUNT_LIMIT + 1 tickets (then estimates): a
    LIMITed subquery, never a count of a group's whole history."""
    client = as_user(agent)
    with CaptureQueriesContext(connection) as queries:
        assert client.get(HOME).status_code == 200
    counting = [
        q["sql"]
        for q in queries.captured_queries
        if q["sql"].startswith("SELECT COUNT(*)") and "oa_ticket_bill" in q["sql"]
    ]
    assert len(counting) >= 3, counting
    assert all(" LIMIT 1001" in sql for sql in counting), counting


def test_empty_tabs_say_something_meaningful(as_user, agent):
    client = as_user(agent)
    assert "Nothing assigned to you right now." in text(client.get(HOME))
    pending = text(client.get(HOME, {"view": "pending"}))
    assert "No tickets waiting in your groups&#x27; pools." in pending
    assert "No tickets match your search." in text(client.get(HOME, {"view": "all", "q": "zz"}))


def test_search_by_title_bill_code_and_applicant(as_user, agent, approved):
    zoe = UserFactory(username="zoe.mueller")
    vpn = approved("VPN drops hourly")
    printer = approved("Printer jams", creator=zoe)
    client = as_user(agent)

    def found(q):
        return set(row_order(text(client.get(HOME, {"view": "all", "q": q}))))

    assert found("vpn") == {vpn.pk}
    assert found(printer.bill_code.lower()) == {printer.pk}
    assert found("MUELLER") == {printer.pk}
    assert found("nothing like this") == set()
    # The search box keeps what was asked.
    assert 'value="vpn"' in text(client.get(HOME, {"view": "all", "q": "vpn"}))


def test_sort_by_sla_priority_and_age(as_user, agent, approved):
    now = timezone.now()
    old_low = approved("Old low", priority=1)
    mid_urgent = approved("Mid urgent", priority=4)
    new_high = approved("New high", priority=3)
    for i, (ticket, deadline) in enumerate(
        [(old_low, now + timedelta(minutes=5)), (mid_urgent, None), (new_high, now)]
    ):
        Ticket.objects.filter(pk=ticket.pk).update(
            submitted_time=now - timedelta(hours=3 - i), response_deadline=deadline
        )
    client = as_user(agent)

    def order(sort):
        response = client.get(HOME, {"view": "all", "sort": sort})
        assert response.status_code == 200
        return row_order(text(response))

    # Most urgent deadline first, no running clock last.
    assert order("sla") == [new_high.pk, old_low.pk, mid_urgent.pk]
    assert order("priority") == [mid_urgent.pk, new_high.pk, old_low.pk]
    assert order("age") == [old_low.pk, mid_urgent.pk, new_high.pk]
    assert order("-age") == [new_high.pk, mid_urgent.pk, old_low.pk]
    assert '<option value="priority" selected>' in text(
        client.get(HOME, {"view": "all", "sort": "priority"})
    )


def test_my_work_sorts_within_its_sections(as_user, agent, approved):
    low = approved("Low", priority=1)
    urgent = approved("Urgent", priority=4)
    for ticket in (low, urgent):
        services.ticket_accept(ticket_id=ticket.pk, handler=agent)
    client = as_user(agent)
    assert row_order(text(client.get(HOME, {"sort": "priority"}))) == [urgent.pk, low.pk]
    assert row_order(text(client.get(HOME, {"sort": "age"}))) == [low.pk, urgent.pk]


def test_a_bad_sort_is_a_400_naming_sort(as_user, agent, work):
    response = as_user(agent).get(HOME, {"view": "all", "sort": "bogus"})
    assert response.status_code == 400
    body = text(response)
    assert "sort: choose one of sla, priority, age or -age" in body
    assert "Some filters are not valid (sort)" in body
    assert row_order(body) == []


def test_an_overlong_search_is_a_400(as_user, agent):
    response = as_user(agent).get(HOME, {"q": "x" * 101})
    assert response.status_code == 400
    assert "(q)" in text(response)


def test_the_filters_fold_in_a_details_element(as_user, agent):
    body = text(as_user(agent).get(HOME))
    assert re.search(r"<details class=\"filters-fold\" data-open-wide>\s*<summary>Filters", body)
    body = text(as_user(agent).get(HOME, {"view": "all", "priority": 4, "category": "vpn"}))
    assert re.search(r'<summary>Filters <span class="tab-count">2</span>', body)


def test_query_count_stays_flat_with_more_rows(as_user, agent, approved, leader):
    client = as_user(agent)

    def queries_for_my_work(new_tickets: int) -> int:
        for i in range(new_tickets):
            offered = approved(f"Offer {i}")
            services.ticket_transfer(ticket_id=offered.pk, user=leader, handler_id=agent.pk)
            accepted = approved(f"Accepted {i}")
            services.ticket_accept(ticket_id=accepted.pk, handler=agent)
        with CaptureQueriesContext(connection) as queries:
            assert client.get(HOME).status_code == 200
        return len(queries.captured_queries)

    few = queries_for_my_work(1)
    assert queries_for_my_work(6) == few


# --- the other roles' homes ------------------------------------------------------------------


def test_applicant_lands_on_my_tickets(as_user, applicant, submit, group):
    ticket = submit(handler_group_id=group.pk, title="My laptop")
    client = as_user(applicant)
    response = client.get(HOME)
    assert response.status_code == 302 and response["Location"] == "/console/my-tickets/"
    body = text(client.get(HOME, follow=True))
    assert f'data-ticket-id="{ticket.pk}"' in body
    assert "No tickets waiting" not in body and "Ticket pool" not in body
    # One role: a plain My tickets link, no switch to pages they do not have.
    assert '<a href="/console/my-tickets/" class="home-link" data-home="tickets"' in body
    assert 'data-home="work"' not in body and 'data-home="approvals"' not in body


def test_approver_lands_on_approvals(as_user, approver):
    client = as_user(approver)
    response = client.get(HOME)
    assert response.status_code == 302 and response["Location"] == "/console/approvals/"
    body = text(client.get(HOME, follow=True))
    assert 'data-home="approvals" aria-current="page"' in body
    assert 'data-home="work"' not in body


def test_a_person_with_two_roles_switches_and_the_choice_persists(as_user, approved):
    both = ApproverFactory(username="lead_and_approver")
    HandlerGroupFactory(name="desk", members=[both], assign_strategy=0)
    client = as_user(both)
    # Agent first: My work, with the switch in the header.
    body = text(client.get(HOME))
    assert 'data-view="mine"' in body
    for home in ("work", "approvals", "tickets"):
        assert f'href="/console/?home={home}"' in body
    assert re.search(r'class="home-link is-home" data-home="work" aria-current="page"', body)

    response = client.get(HOME, {"home": "approvals"})
    assert response.status_code == 302 and response["Location"] == "/console/approvals/"
    # Remembered: the home page (and the next login in this session) is Approvals now.
    assert client.get(HOME)["Location"] == "/console/approvals/"
    body = text(client.get("/console/approvals/"))
    assert re.search(r'class="home-link is-home" data-home="approvals" aria-current="page"', body)
    # The agent's tabs are still one click away.
    assert client.get(HOME, {"view": "pending"}).status_code == 200

    assert client.get(HOME, {"home": "tickets"})["Location"] == "/console/my-tickets/"
    assert client.get(HOME)["Location"] == "/console/my-tickets/"
    assert client.get(HOME, {"home": "work"})["Location"] == "/console/"
    assert client.get(HOME).status_code == 200


def test_a_home_one_does_not_have_is_a_400(as_user, applicant, agent):
    response = as_user(applicant).get(HOME, {"home": "approvals"})
    assert response.status_code == 400
    assert "home must be one of yours" in text(response)
    assert as_user(agent).get(HOME, {"home": "nowhere"}).status_code == 400
    # Nothing was remembered.
    assert as_user(agent).get(HOME).status_code == 200


def test_a_chosen_home_lapses_when_the_role_does(as_user, agent, group):
    client = as_user(agent)
    assert client.get(HOME, {"home": "tickets"}).status_code == 302
    assert client.get(HOME)["Location"] == "/console/my-tickets/"
    assert client.get(HOME, {"home": "work"})["Location"] == "/console/"
    group.member_ids = []
    group.save(update_fields=["member_user_ids"])
    # No longer an agent: My work is not theirs, whatever the session says.
    assert client.get(HOME)["Location"] == "/console/my-tickets/"
