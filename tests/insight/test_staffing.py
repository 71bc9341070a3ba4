"""Staffing per hour (GET /api/staffing/?group=&date=) on a hand-built history with known
answers, and the presence history (PresenceSpan) that presence changes write."""

import math
from datetime import date, datetime, time, timedelta
from fractions import Fraction

import pytest
from django.db import transaction
from django.utils import timezone

from insight import staffing
from routing import presence
from routing.models import PresenceSpan
from tests.factories import HandlerGroupFactory, StaffFactory, TicketFactory, UserFactory
from tests.insight.test_erlang import exact_service_level

pytestmark = pytest.mark.django_db

URL = "/api/staffing/"


@pytest.fixture(autouse=True)
def berlin(settings):
    """Hours are local: a zone ahead of UTC shows they are not UTC hours."""
    settings.TIME_ZONE = "Europe/Berlin"


def _wednesday_two_weeks_ago() -> date:
    day = timezone.localdate() - timedelta(days=14)
    return day - timedelta(days=(day.isoweekday() - 3) % 7)


def at(day: date, hour: int, minute: int = 0, second: int = 0) -> datetime:
    return timezone.make_aware(datetime.combine(day, time(hour, minute, second)))


@pytest.fixture
def team():
    leader = UserFactory(username="st_leader")
    members = [UserFactory(username=f"st_agent{i}") for i in range(3)]
    group = HandlerGroupFactory(name="staffed", leader=leader, members=members)
    other = HandlerGroupFactory(name="elsewhere", leader=UserFactory(username="st_other"))
    return group, other, leader, members


@pytest.fixture
def history(team):
    """Approvals, completions and presence with known answers, for a Wednesday D:

    approvals on the 4 previous Wednesdays at 09:xx: 4, 6, 8, 2 → forecast 5.0; at 14:xx:
    1, 0, 0, 1 → 0.5; one at 08:59:59 → hour 8: 0.25. Not counted: the Tuesday before, 5
    weeks back, D itself, another group.
    handle times (accepted → completed) in the 4 weeks: 200, 400, 900 s → 500 s. Not counted:
    one before the 4 weeks, one on D, one in another group.
    presence on D: agent0 available 09:00–10:00 and from 13:00 on (still open); agent1
    available 23:30 the evening before → 00:30 and 09:30–11:15; agent2 busy 09:00–12:00; a
    non-member available 09:00–10:00."""
    group, other, _, members = team
    day = _wednesday_two_weeks_ago()

    def approved(when, into=group):
        TicketFactory(handler_group=into, submitted_time=when, approved_time=when)

    for weeks, count in zip((1, 2, 3, 4), (4, 6, 8, 2), strict=True):
        for i in range(count):
            approved(at(day - timedelta(weeks=weeks), 9, 5 * i))
    approved(at(day - timedelta(weeks=1), 14, 30))
    approved(at(day - timedelta(weeks=4), 14, 59, 59))
    approved(at(day - timedelta(weeks=2), 8, 59, 59))
    approved(at(day - timedelta(days=1), 9, 30))
    approved(at(day - timedelta(weeks=5), 9, 10))
    approved(at(day, 9, 10))
    approved(at(day - timedelta(weeks=1), 9, 10), into=other)

    def handled(accepted, seconds, into=group):
        TicketFactory(
            handler_group=into,
            submitted_time=accepted,
            accepted_time=accepted,
            completed_time=accepted + timedelta(seconds=seconds),
        )

    handled(at(day - timedelta(days=3), 10), 200)
    handled(at(day - timedelta(days=10), 16), 400)
    handled(at(day - timedelta(days=27), 11), 900)
    handled(at(day - timedelta(days=30), 11), 10_000)
    handled(at(day, 11), 10_000)
    handled(at(day - timedelta(days=3), 10), 10_000, into=other)

    def span(user, state, start, end):
        PresenceSpan.objects.create(user=user, state=state, started=start, ended=end)

    span(members[0], "available", at(day, 9), at(day, 10))
    span(members[0], "available", at(day, 13), None)
    span(members[1], "available", at(day - timedelta(days=1), 23, 30), at(day, 0, 30))
    span(members[1], "available", at(day, 9, 30), at(day, 11, 15))
    span(members[2], "busy", at(day, 9), at(day, 12))
    span(UserFactory(username="st_outsider"), "available", at(day, 9), at(day, 10))
    return day


def _required(arrivals: float, aht: float, target: float = 60) -> int:
    """The independent answer: the smallest N > A with the exact service level ≥ 80 % and
    occupancy ≤ 85 %."""
    if arrivals == 0:
        return 0
    load = Fraction(arrivals).limit_denominator() * Fraction(aht).limit_denominator() / 3600
    n = math.floor(load) + 1
    while exact_service_level(n, load, aht, target) < 0.8 or load / n > Fraction(85, 100):
        n += 1
    return n


def test_staffing_per_hour_on_a_known_history(api, team, history):
    group, _, leader, _ = team
    response = api.as_user(leader).get(URL, {"group": group.pk, "date": history.isoformat()})
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["group"] == group.pk and body["date"] == history.isoformat()
    assert body["time_zone"] == "Europe/Berlin"
    assert (body["weeks"], body["interval_minutes"], body["service_level_target"]) == (4, 60, 0.8)
    assert body["target_answer_seconds"] == 60
    assert body["aht_seconds"] == 500.0 and body["aht_measured"] is True
    assert body["aht_sample"] == 3
    hours = body["hours"]
    assert [h["hour"] for h in hours] == list(range(24))
    assert hours[9]["start"] == at(history, 9).isoformat()

    forecast = {h["hour"]: h["forecast_arrivals"] for h in hours}
    assert forecast == {**dict.fromkeys(range(24), 0.0), 8: 0.25, 9: 5.0, 14: 0.5}
    assert all(h["aht_seconds"] == 500.0 for h in hours)
    assert hours[9]["traffic_erlangs"] == pytest.approx(5 * 500 / 3600, abs=1e-4)

    required = {h["hour"]: h["required_agents"] for h in hours}
    assert required == {h: _required(forecast[h], 500) for h in range(24)}
    assert (required[8], required[9], required[14], required[3]) == (1, 2, 1, 0)

    available = {h["hour"]: h["available_agents"] for h in hours}
    expected = {**dict.fromkeys(range(24), 0.0), 0: 0.5, 9: 1.5, 10: 1.0, 11: 0.25}
    expected.update(dict.fromkeys(range(13, 24), 1.0))
    assert available == expected
    assert {h["hour"]: h["gap"] for h in hours} == {
        h: round(expected[h] - required[h], 2) for h in range(24)
    }
    assert hours[9]["gap"] == -0.5 and hours[14]["gap"] == 0.0


def test_staffing_takes_three_queries_whatever_the_history(
    team, history, django_assert_num_queries
):
    group = team[0]
    with django_assert_num_queries(3):  # forecast, handle time, availability
        staffing.staffing(group=group, day=history)


def test_without_completions_the_handle_time_is_a_flagged_default(api, team):
    group, _, leader, _ = team
    day = _wednesday_two_weeks_ago()
    TicketFactory(
        handler_group=group,
        submitted_time=at(day, 9),
        approved_time=at(day - timedelta(weeks=1), 9),
    )
    body = api.as_user(leader).get(URL, {"group": group.pk, "date": day.isoformat()}).json()
    assert body["aht_measured"] is False and body["aht_sample"] == 0
    assert body["aht_seconds"] == staffing.DEFAULT_AHT_SECONDS == 600
    assert body["hours"][9]["forecast_arrivals"] == 0.25
    assert body["hours"][9]["required_agents"] == _required(0.25, 600)


def test_hours_not_started_yet_have_no_availability(api, team):
    group, _, leader, _ = team
    tomorrow = timezone.localdate() + timedelta(days=1)
    body = api.as_user(leader).get(URL, {"group": group.pk, "date": tomorrow.isoformat()}).json()
    assert {h["available_agents"] for h in body["hours"]} == {None}
    assert {h["gap"] for h in body["hours"]} == {None}
    assert {h["required_agents"] for h in body["hours"]} == {0}


def test_the_date_defaults_to_today(api, team):
    group, _, leader, _ = team
    body = api.as_user(leader).get(URL, {"group": group.pk}).json()
    assert body["date"] == timezone.localdate().isoformat()


def test_who_may_read_staffing(api, team, applicant):
    group, other, leader, members = team
    query = {"group": group.pk}
    assert api.get(URL, query).status_code == 401
    assert api.as_user(applicant).get(URL, query).status_code == 403
    assert api.as_user(members[0]).get(URL, query).status_code == 403  # a member, not leader
    assert api.as_user(other.leader).get(URL, query).status_code == 403  # leads another group
    assert api.as_user(leader).get(URL, query).status_code == 200
    assert api.as_user(StaffFactory()).get(URL, query).status_code == 200


def test_bad_queries(api, team):
    group, _, leader, _ = team
    client = api.as_user(leader)
    missing = client.get(URL, {"group": 999_999})
    assert missing.status_code == 404 and missing.json()["code"] == "not_found"
    for params, field in [
        ({}, "group"),
        ({"group": "x"}, "group"),
        ({"group": group.pk, "date": "yesterday"}, "date"),
        ({"group": group.pk, "date": "1999-12-31"}, "date"),
    ]:
        response = client.get(URL, params)
        assert response.status_code == 400 and field in response.json()["errors"], params


# --- the presence history ----------------------------------------------------------------


@pytest.fixture
def acd():
    agent = UserFactory(username="span_agent")
    group = HandlerGroupFactory(
        name="span_acd", members=[agent], assign_strategy=4, requires_presence=True,
        wrap_up_seconds=120,
    )  # fmt: skip
    return group, agent


def _spans(user):
    return list(
        PresenceSpan.objects.filter(user=user)
        .order_by("started", "id")
        .values_list("state", "started", "ended")
    )


def test_every_presence_change_closes_one_span_and_opens_the_next(acd, on_commit):
    _, agent = acd
    t = timezone.now().replace(microsecond=0)
    with on_commit(execute=True):
        presence.heartbeat(user=agent, now=t)  # offline → available
    presence.heartbeat(user=agent, now=t + timedelta(seconds=20))  # no change, no span
    presence.set_state(user=agent, state="busy", now=t + timedelta(seconds=60))
    presence.set_state(user=agent, state="busy", now=t + timedelta(seconds=70))  # no change
    with on_commit(execute=True):
        presence.set_state(user=agent, state="available", now=t + timedelta(seconds=120))
    with transaction.atomic():  # a completion's wrap-up
        presence.ticket_completed(user_id=agent.pk, now=t + timedelta(seconds=180))
    presence.heartbeat(user=agent, now=t + timedelta(seconds=290))
    with on_commit(execute=True):  # the wrap-up runs out
        presence.presence_sweep(now=t + timedelta(seconds=300))
    presence.presence_sweep(now=t + timedelta(seconds=400))  # silent: offline
    s = lambda seconds: t + timedelta(seconds=seconds)  # noqa: E731
    assert _spans(agent) == [
        ("available", s(0), s(60)),
        ("busy", s(60), s(120)),
        ("available", s(120), s(180)),
        ("wrap_up", s(180), s(300)),
        ("available", s(300), s(400)),
        ("offline", s(400), None),
    ]


def test_presence_set_through_the_api_is_recorded(api, acd):
    _, agent = acd
    client = api.as_user(agent)
    client.post("/api/presence/heartbeat/")
    client.post("/api/presence/state/", {"state": "offline"}, format="json")
    states = [state for state, _, _ in _spans(agent)]
    assert states == ["available", "offline"]
    assert PresenceSpan.objects.filter(user=agent, ended__isnull=True).count() == 1
