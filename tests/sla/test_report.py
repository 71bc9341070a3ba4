from datetime import timedelta

import pytest

from tests.factories import HandlerGroupFactory, UserFactory
from tests.sla.conftest import T0
from workflow import services

pytestmark = pytest.mark.django_db

WINDOW = {"from": "2026-03-01T00:00:00Z", "to": "2026-03-31T00:00:00Z"}


@pytest.fixture
def history(approved, people, rule):
    """Three completed tickets: accepted after 30, 90 and 20 min; resolved after 2, 5, 1 h."""
    handler = people["handler"]
    for accept_after, complete_after in ((30, 120), (90, 300), (20, 60)):
        ticket = approved()
        services.ticket_accept(
            ticket_id=ticket.pk, handler=handler, now=T0 + timedelta(minutes=accept_after)
        )
        services.ticket_complete(
            ticket_id=ticket.pk, handler=handler, now=T0 + timedelta(minutes=complete_after)
        )
    return people


def test_report_counts_breaches_and_percentiles(api, history, staff):
    response = api.as_user(staff).get("/api/sla/report/", {**WINDOW, "group_by": "handler_group"})
    assert response.status_code == 200, response.json()
    (row,) = response.json()["rows"]
    assert row["key"] == row["handler_group"] == history["group"].pk
    assert row["count"] == 3
    assert row["response_breaches"] == 1  # 90 min > 1 h
    assert row["response_breach_rate"] == pytest.approx(1 / 3, abs=1e-3)
    assert row["resolve_breaches"] == 1  # 5 h > 4 h
    assert row["response_minutes_median"] == 30
    assert row["resolve_minutes_median"] == 120
    assert row["resolve_minutes_p90"] == pytest.approx(264)


def test_report_groups_by_handler_and_filters(api, history, staff):
    body = (
        api.as_user(staff)
        .get("/api/sla/report/", {**WINDOW, "group_by": "handler", "priority": 3})
        .json()
    )
    assert [r["key"] for r in body["rows"]] == [history["handler"].pk]
    empty = api.as_user(staff).get("/api/sla/report/", {**WINDOW, "priority": 1}).json()
    assert empty["rows"] == []


def test_leaders_see_only_their_groups(api, history):
    leader = history["leader"]
    assert api.as_user(leader).get("/api/sla/report/", WINDOW).json()["rows"][0]["count"] == 3
    other = HandlerGroupFactory(name="other", leader=UserFactory(username="other_lead"))
    response = api.as_user(leader).get("/api/sla/report/", {**WINDOW, "handler_group": other.pk})
    assert response.status_code == 403
    outsider_view = api.as_user(other.leader).get("/api/sla/report/", WINDOW).json()
    assert outsider_view["rows"] == []


def test_handlers_cannot_read_reports(api, history):
    assert api.as_user(history["handler"]).get("/api/sla/report/", WINDOW).status_code == 403
    assert api.as_user(history["handler"]).get("/api/sla/report/").status_code == 403


def test_dates_are_optional_and_a_plain_to_date_includes_that_day(api, history, staff):
    client = api.as_user(staff)
    recent = client.get("/api/sla/report/").json()  # the last 30 days: March 2026 is older
    assert recent["rows"] == [] and recent["group_by"] == "handler_group"
    same_day = client.get("/api/sla/report/", {"from": "2026-03-02", "to": "2026-03-02"}).json()
    assert same_day["rows"][0]["count"] == 3


def test_group_alias_and_other_groupings(api, history, staff):
    client = api.as_user(staff)
    by_group = client.get("/api/sla/report/", {**WINDOW, "group_by": "group"}).json()
    assert by_group["group_by"] == "handler_group"
    by_priority = client.get("/api/sla/report/", {**WINDOW, "group_by": "priority"}).json()
    assert by_priority["rows"][0]["priority"] == 3
    by_category = client.get("/api/sla/report/", {**WINDOW, "group_by": "category"}).json()
    assert by_category["rows"][0]["category"] == ""


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"from": "yesterday", "to": "2026-03-31T00:00:00Z"}, "from"),
        ({"from": "2026-02-30", "to": "2026-03-31"}, "from"),
        ({**WINDOW, "group_by": "weather"}, "group_by"),
        ({"from": "2026-03-31T00:00:00Z", "to": "2026-03-01T00:00:00Z"}, "to"),
        ({**WINDOW, "priority": 9}, "priority"),
    ],
)
def test_bad_report_queries_are_400(api, staff, query, field):
    response = api.as_user(staff).get("/api/sla/report/", query)
    assert response.status_code == 400
    assert field in response.json()["errors"]
