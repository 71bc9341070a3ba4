"""Lists on a large table, through real requests: counts exact up to EXACT_COUNT_LIMIT and
estimated (and said to be) beyond it, keyset cursors that walk a list once without skipping or
repeating a row, pages by number that still work, and search by index (the console's and the
admin's). The plans are in test_list_plans.py."""

import re
from urllib.parse import parse_qs, urlsplit

import pytest
from django.db import connection

from tests.factories import HandlerGroupFactory, StaffFactory, TicketFactory, UserFactory
from ticketing.models import ProcessStatus, Ticket, TicketStatus

pytestmark = pytest.mark.django_db


def pooled_tickets(n: int, creator, group, *, title: str = "Ticket") -> list[int]:
    """n approved tickets in the group's pool, created in one statement and analysed (so the
    planner's estimate is right, as on a live table)."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO oa_ticket_bill (bill_code, title, content, priority, category,
                creator_id, handler_group_id, process_status, ticket_status, submitted_time)
            SELECT 'LS' || lpad(i::text, 6, '0'), %s || ' ' || i, 'c', 2, 'net', %s, %s, 2, 1,
                   now() - i * interval '1 minute'
            FROM generate_series(1, %s) AS i
            """,
            [title, creator.pk, group.pk, n],
        )
        cursor.execute("ANALYZE oa_ticket_bill")
    return list(Ticket.objects.order_by("-id").values_list("pk", flat=True))


@pytest.fixture
def world(db):
    member = UserFactory(username="member")
    group = HandlerGroupFactory(name="network", members=[member])
    creator = UserFactory(username="applicant")
    return {"member": member, "group": group, "creator": creator}


def walk(client, url: str) -> tuple[list[int], list[dict]]:
    ids, bodies = [], []
    while url:
        response = client.get(url)
        assert response.status_code == 200, response.content
        body = response.json()
        bodies.append(body)
        ids.extend(row["id"] for row in body["results"])
        url = body["next"]
    return ids, bodies


def test_a_cursor_walks_the_pool_once_newest_first(api, world, settings):
    settings.EXACT_COUNT_LIMIT = 1000
    expected = pooled_tickets(45, world["creator"], world["group"])
    client = api.as_user(world["member"])

    ids, bodies = walk(client, "/api/tickets/pool/?view=all&page_size=10")

    assert ids == expected
    assert len(bodies) == 5
    assert all("cursor=" in body["next"] for body in bodies[:-1])
    assert bodies[0]["previous"] is None
    assert all(body["count"] == 45 and body["count_is_estimate"] is False for body in bodies)

    # Back from the third page: the second, in the same order.
    third = client.get(bodies[1]["next"]).json()
    back = client.get(third["previous"]).json()
    assert [row["id"] for row in back["results"]] == expected[10:20]
    assert client.get(back["previous"]).json()["previous"] is None


def test_a_cursor_follows_the_approvers_oldest_first_order(api, world, settings):
    approver = StaffFactory(username="boss")
    TicketFactory.create_batch(25, creator=world["creator"])
    expected = list(
        Ticket.objects.filter(process_status=ProcessStatus.APPROVING)
        .order_by("submitted_time", "id")
        .values_list("pk", flat=True)
    )

    ids, _ = walk(api.as_user(approver), "/api/tickets/awaiting-approval/?page_size=7")

    assert ids == expected


def test_pages_by_number_still_work_and_link_by_number(api, world):
    expected = pooled_tickets(30, world["creator"], world["group"])
    client = api.as_user(world["member"])

    body = client.get("/api/tickets/pool/?view=all&page_size=10&page=2").json()

    assert [row["id"] for row in body["results"]] == expected[10:20]
    assert "page=3" in body["next"] and "cursor" not in body["next"]
    assert client.get("/api/tickets/pool/?view=all&page_size=10&page=9").status_code == 404


def test_a_count_past_the_limit_is_the_planners_estimate_and_says_so(api, world, settings):
    settings.EXACT_COUNT_LIMIT = 100
    pooled_tickets(600, world["creator"], world["group"])
    # Statistics of these rows, not of the large tables earlier tests built and emptied (the
    # pool's rows are read with their survey: tests/satisfaction fills that table to 50k).
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE oa_ticket_bill")
    client = api.as_user(world["member"])

    body = client.get("/api/tickets/pool/?view=all").json()

    assert body["count_is_estimate"] is True
    # The planner's figure: right in magnitude (within 10x of the 600), not exact.
    assert 60 <= body["count"] <= 6000
    # Pages by number are answered by their rows, not by the estimate: the last one has no
    # next, the one after it is a 404.
    deep = client.get("/api/tickets/pool/?view=all&page_size=200&page=3").json()
    assert len(deep["results"]) == 200 and deep["next"] is None
    assert client.get("/api/tickets/pool/?view=all&page_size=200&page=4").status_code == 404
    # Under the limit the count is exact.
    settings.EXACT_COUNT_LIMIT = 10_000
    exact = client.get("/api/tickets/pool/?view=all").json()
    assert (exact["count"], exact["count_is_estimate"]) == (600, False)


@pytest.mark.parametrize("cursor", ["garbage", "eyJwIjpbIngiXX0", "eyJwIjpbMSwyLDNdfQ"])
def test_a_bad_cursor_is_a_400_naming_it_and_changes_nothing(api, world, cursor):
    pooled_tickets(3, world["creator"], world["group"])
    before = list(Ticket.objects.values_list("pk", "ticket_status"))

    response = api.as_user(world["member"]).get(f"/api/tickets/pool/?view=all&cursor={cursor}")

    assert response.status_code == 400, response.content
    assert "cursor" in response.json()["errors"]
    assert list(Ticket.objects.values_list("pk", "ticket_status")) == before


def test_orders_a_cursor_cannot_follow_page_by_number(world):
    """My work sorts by section and a computed deadline, SLA order by an expression: no
    keyset, so their pages go by number (the API's pool is newest first, always a keyset)."""
    from config.pagination import keyset_of
    from workflow.selectors import pool_for

    assert keyset_of(pool_for(world["member"], view="mine")) is None
    assert keyset_of(pool_for(world["member"], view="all", sort="sla")) is None
    assert keyset_of(pool_for(world["member"], view="all", sort="-age")) is not None


def test_the_inbox_api_counts_and_pages_by_cursor(api, world, settings):
    from notifications.models import Notification

    settings.EXACT_COUNT_LIMIT = 5
    Notification.objects.bulk_create(
        Notification(
            recipient=world["member"],
            template_code="t",
            title=f"n{i}",
            content="c",
            params={},
            dedupe_key=f"k{i}",
            created="2026-01-01T00:00:00Z",
        )
        for i in range(12)
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE oa_notification")

    ids, bodies = walk(api.as_user(world["member"]), "/api/notifications/?page_size=5")

    assert ids == sorted(ids, reverse=True) and len(set(ids)) == 12
    assert bodies[0]["count_is_estimate"] is True


# --- the console ---------------------------------------------------------------------------


def test_the_console_says_about_when_the_count_is_estimated(client, world, settings):
    settings.EXACT_COUNT_LIMIT = 50
    pooled_tickets(300, world["creator"], world["group"])
    client.force_login(world["member"])

    page = client.get("/console/?view=all").content.decode()

    tab = re.search(r'data-count="all">([^<]*)<', page).group(1)
    assert tab.startswith("about "), tab
    assert re.search(r"Page 1 · about [\d,]+ in all", page), page
    assert 'rel="next"' in page
    # Exact below the limit: the number, and "of N" pages.
    settings.EXACT_COUNT_LIMIT = 10_000
    page = client.get("/console/?view=all").content.decode()
    assert re.search(r'data-count="all">300<', page)
    assert "Page 1 of 15 · 300 in all" in page


def test_a_deep_console_page_of_an_estimated_list_is_its_rows(client, world, settings):
    settings.EXACT_COUNT_LIMIT = 20
    newest_first = pooled_tickets(90, world["creator"], world["group"])
    expected = newest_first[::-1]  # submitted a minute apart, the first one last
    client.force_login(world["member"])

    page = client.get("/console/?view=all&sort=-age&page=4").content.decode()

    shown = [int(i) for i in re.findall(r'href="/console/tickets/(\d+)/"', page)]
    assert list(dict.fromkeys(shown)) == expected[60:80]
    assert 'rel="next"' in page and 'rel="prev"' in page


def test_console_search_finds_by_title_word_bill_code_and_applicant(client, world):
    pooled_tickets(40, world["creator"], world["group"], title="Printer jam")
    other = UserFactory(username="zoe.smith")
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE oa_ticket_bill SET title = 'VPN down', creator_id = %s "
            "WHERE bill_code = 'LS000007'",
            [other.pk],
        )
    client.force_login(world["member"])

    def found(q: str) -> set[str]:
        page = client.get("/console/", {"view": "all", "q": q}).content.decode()
        return set(re.findall(r"LS\d{6}", page))

    assert found("vpn") == {"LS000007"}
    assert found("ls000007") == {"LS000007"}
    assert found("ZOE") == {"LS000007"}
    assert found("printer JAM 000012") == {"LS000012"}
    assert found("12") == set()  # too short for a substring: a whole bill code or username
    assert found("nothing-like-it") == set()


# --- the admin -----------------------------------------------------------------------------


@pytest.fixture
def operator(client):
    admin = StaffFactory(username="operator", is_superuser=True)
    client.force_login(admin)
    return client


def test_admin_list_estimates_a_large_count_and_says_about(operator, world, settings):
    settings.EXACT_COUNT_LIMIT = 100
    pooled_tickets(400, world["creator"], world["group"])

    page = operator.get("/admin/ticketing/ticket/").content.decode()

    assert re.search(r"about [\d,]+ tickets", page), page
    # A date filter of fixed choices instead of the year links (no scan of every date).
    assert "submitted_time__gte" in page


def test_admin_search_by_word_code_category_and_people(operator, world):
    pooled_tickets(30, world["creator"], world["group"], title="Laptop battery")
    handler = UserFactory(username="harriet")
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE oa_ticket_bill SET handler_id = %s, category = 'hardware', ticket_status = %s "
            "WHERE bill_code = 'LS000003'",
            [handler.pk, TicketStatus.PROCESSING],
        )

    def found(q: str) -> set[str]:
        page = operator.get("/admin/ticketing/ticket/", {"q": q}).content.decode()
        return set(re.findall(r"LS\d{6}", page))

    assert found("harri") == {"LS000003"}
    assert found("HARDWARE") == {"LS000003"}
    assert found("battery 000003") == {"LS000003"}
    assert found("ls000021") == {"LS000021"}
    assert len(found("applic")) == 30  # the applicant's username


def test_cursor_links_keep_the_other_query_parameters(api, world):
    pooled_tickets(5, world["creator"], world["group"])
    body = api.as_user(world["member"]).get("/api/tickets/pool/?view=all&page_size=2").json()
    query = parse_qs(urlsplit(body["next"]).query)
    assert query["view"] == ["all"] and query["page_size"] == ["2"] and query["cursor"]
