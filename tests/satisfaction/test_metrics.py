"""GET /api/metrics/satisfaction/: exact figures on a small known set, who may read them,
bad parameters, and the statements' plans on a large table."""

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.models import Profile
from satisfaction.models import Survey
from satisfaction.selectors import figures_statements, satisfaction_figures
from tests.factories import HandlerGroupFactory, TicketFactory, UserFactory

pytestmark = pytest.mark.django_db

URL = "/api/metrics/satisfaction/"


def at(day: int, hour: int) -> datetime:
    return datetime(2026, 3, day, hour, tzinfo=UTC)


@pytest.fixture
def known(group, handlers, applicant):
    """Seven surveys in 2–15 March 2026 (six of `group`, one of another) and two outside."""
    other_leader = UserFactory(username="other_leader")
    other = HandlerGroupFactory(name="other", leader=other_leader, members=handlers)
    h0, h1 = handlers
    rows = [
        (group, h0, at(2, 9), 5),
        (group, h0, at(2, 15), 4),
        (group, h1, at(3, 10), 2),
        (group, h1, at(3, 11), None),
        (group, h0, at(9, 10), 3),
        (group, h1, at(10, 10), 1),
        (other, h0, at(2, 12), 1),
        (group, h0, at(1, 23), 5),  # before the window (UTC)
        (group, h0, datetime(2026, 3, 16, 0, tzinfo=UTC), 5),  # after it
    ]
    for handler_group, handler, asked, rating in rows:
        Survey.objects.create(
            ticket=TicketFactory(creator=applicant),
            applicant=applicant,
            handler=handler,
            handler_group=handler_group,
            asked=asked,
            expires=asked + timedelta(days=14),
            rating=rating,
            answered=asked + timedelta(hours=1) if rating else None,
        )
    return {"group": group, "other": other, "other_leader": other_leader}


def read(api, user, **query):
    params = {"from": "2026-03-02", "to": "2026-03-15", **query}
    return api.as_user(user).get(URL, params)


def test_a_groups_figures_per_day_and_per_agent_are_exact(api, known, leader, handlers):
    response = read(api, leader, group=known["group"].pk)
    assert response.status_code == 200, response.json()
    body = response.json()
    assert (body["asked"], body["responses"]) == (6, 5)
    assert body["response_rate"] == 0.8333
    assert body["csat"] == 0.4
    assert body["mean"] == 3.0
    assert body["group"] == known["group"].pk and body["groups"] == [known["group"].pk]
    days = body["buckets"]
    assert len(days) == 14
    assert days[0]["start"] == "2026-03-02T00:00:00+00:00"
    assert days[-1]["start"] == "2026-03-15T00:00:00+00:00"
    by_day = {d["start"][:10]: d for d in days}
    assert [
        (d["asked"], d["responses"], d["response_rate"], d["csat"], d["mean"])
        for d in (by_day["2026-03-02"], by_day["2026-03-03"], by_day["2026-03-09"])
    ] == [(2, 2, 1.0, 1.0, 4.5), (2, 1, 0.5, 0.0, 2.0), (1, 1, 1.0, 0.0, 3.0)]
    assert by_day["2026-03-05"] == {
        "start": by_day["2026-03-05"]["start"],
        "asked": 0,
        "responses": 0,
        "response_rate": None,
        "csat": None,
        "mean": None,
    }
    assert body["agents"] == [
        {
            "handler_id": handlers[0].pk,
            "username": "handler0",
            "asked": 3,
            "responses": 3,
            "csat": 0.6667,
            "mean": 4.0,
        },
        {
            "handler_id": handlers[1].pk,
            "username": "handler1",
            "asked": 3,
            "responses": 2,
            "csat": 0.0,
            "mean": 1.5,
        },
    ]


def test_weeks_start_on_monday(api, known, leader):
    body = read(api, leader, group=known["group"].pk, bucket="week").json()
    assert [(w["start"][:10], w["asked"], w["responses"], w["mean"]) for w in body["buckets"]] == [
        ("2026-03-02", 4, 3, 3.67),
        ("2026-03-09", 2, 2, 2.0),
    ]


def test_staff_read_every_survey_and_a_leader_all_their_groups(api, known, staff, leader):
    everything = read(api, staff).json()
    assert (everything["asked"], everything["responses"], everything["csat"]) == (7, 6, 0.3333)
    assert everything["mean"] == 2.67
    assert everything["groups"] is None
    mine = read(api, leader).json()
    assert (mine["asked"], mine["groups"]) == (6, [known["group"].pk])
    assert read(api, known["other_leader"]).json()["asked"] == 1


def test_only_staff_and_the_groups_leader_may_read(api, known, leader, handlers, applicant):
    assert read(api, leader, group=known["other"].pk).status_code == 403
    assert read(api, handlers[0], group=known["group"].pk).status_code == 403
    assert read(api, handlers[0]).status_code == 403
    assert read(api, applicant).status_code == 403
    assert read(api, leader, group=999_999).status_code == 404
    assert APIClient().get(URL).status_code == 401


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"bucket": "month"}, "bucket"),
        ({"from": "yesterday"}, "from"),
        ({"to": "2026-13-40"}, "to"),
        ({"group": "support"}, "group"),
        ({"from": "2026-03-10", "to": "2026-03-01"}, "to"),
        ({"from": "2024-01-01", "to": "2026-03-01", "bucket": "day"}, "to"),
    ],
)
def test_bad_parameters_are_a_400_naming_them(api, known, staff, query, field):
    response = read(api, staff, **query)
    assert response.status_code == 400
    assert field in response.json()["errors"]


def test_the_buckets_are_the_callers_local_days(client, known, staff):
    Profile.objects.update_or_create(user=staff, defaults={"time_zone": "Asia/Shanghai"})
    client.force_login(staff)
    body = client.get(
        URL, {"group": known["group"].pk, "from": "2026-03-02", "to": "2026-03-02"}
    ).json()
    assert body["zone"] == "Asia/Shanghai"
    # Local 2 March is 1 March 16:00 to 2 March 16:00 UTC: the 23:00 UTC survey of 1 March
    # is in it, the 3 March ones are not.
    assert [(d["start"], d["asked"], d["mean"]) for d in body["buckets"]] == [
        ("2026-03-02T00:00:00+08:00", 3, 4.67)
    ]


def test_a_daylight_saving_change_keeps_local_days(known, group):
    zone = ZoneInfo("Europe/Berlin")  # clocks go forward on 29 March 2026
    with timezone.override(zone):
        figures = satisfaction_figures(
            group_ids=[group.pk],
            date_from=datetime(2026, 3, 28, tzinfo=zone),
            date_to=datetime(2026, 3, 31, tzinfo=zone),
            bucket="day",
        )
    assert [d["start"] for d in figures["buckets"]] == [
        "2026-03-28T00:00:00+01:00",
        "2026-03-29T00:00:00+01:00",
        "2026-03-30T00:00:00+02:00",
    ]


def fill_surveys(n: int, creator_id: int, handler_ids: list[int], group_ids: list[int]) -> None:
    """n completed tickets and their surveys over two years, 40 % answered, written in two
    statements."""
    groups = "ARRAY[" + ",".join(str(g) for g in group_ids) + "]::bigint[]"
    handlers = "ARRAY[" + ",".join(str(h) for h in handler_ids) + "]::bigint[]"
    with connection.cursor() as cursor:
        cursor.execute("SELECT setseed(0.26)")
        cursor.execute(
            """
            INSERT INTO oa_ticket_bill (bill_code, title, content, priority, category,
                creator_id, process_status, ticket_status, submitted_time,
                response_timeout, resolve_timeout, reply_count)
            SELECT 'CSAT' || i, 't', 'c', 2, '', %s, 2, 4, now(), false, false, 0
            FROM generate_series(1, %s) AS i
            """,
            [creator_id, n],
        )
        cursor.execute(
            f"""
            INSERT INTO oa_ticket_survey (ticket_id, applicant_id, handler_id,
                handler_group_id, asked, expires, rating, comment, answered)
            SELECT id, %s, ({handlers})[1 + floor(random() * {len(handler_ids)})::int],
                   ({groups})[1 + floor(random() * {len(group_ids)})::int],
                   asked, asked + interval '14 days', rating, '',
                   CASE WHEN rating IS NULL THEN NULL ELSE asked + interval '1 hour' END
            FROM (
                SELECT id, now() - random() * interval '730 days' AS asked,
                       CASE WHEN random() < 0.4 THEN 1 + floor(random() * 5)::int END AS rating
                FROM oa_ticket_bill WHERE bill_code LIKE 'CSAT%%'
            ) t
            """,
            [creator_id],
        )
        # The rows' deferred foreign-key checks now, in one go, rather than at the test's
        # end (where they take over a minute, one by one).
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute("ANALYZE oa_ticket_survey")


def explain(statement: str, params: dict) -> str:
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN " + statement, params)
        return "\n".join(row[0] for row in cursor.fetchall())


def test_the_figures_read_the_window_by_its_indexes_on_a_large_table(applicant, handlers):
    groups = [HandlerGroupFactory(name=f"g{i}") for i in range(40)]
    fill_surveys(50_000, applicant.pk, [h.pk for h in handlers], [g.pk for g in groups])
    assert Survey.objects.count() == 50_000
    now = timezone.now()
    a_month = {"date_from": now - timedelta(days=30), "date_to": now, "bucket": "day"}
    for statement in figures_statements(group_ids=[groups[3].pk], **a_month)[:2]:
        plan = explain(statement, figures_statements(group_ids=[groups[3].pk], **a_month)[2])
        assert "survey_group_asked_idx" in plan, plan
        assert "Seq Scan on oa_ticket_survey" not in plan, plan
    a_week = {"date_from": now - timedelta(days=7), "date_to": now, "bucket": "day"}
    buckets_sql, agents_sql, params = figures_statements(group_ids=None, **a_week)
    for statement in (buckets_sql, agents_sql):
        plan = explain(statement, params)
        assert "survey_asked_idx" in plan, plan
        assert "Seq Scan on oa_ticket_survey" not in plan, plan
    # And the statements run: the week's figures add up.
    figures = satisfaction_figures(group_ids=None, **a_week)
    assert figures["asked"] == sum(b["asked"] for b in figures["buckets"]) > 0
    assert figures["asked"] == sum(a["asked"] for a in figures["agents"])
