"""The strategy simulator: hand-checkable waits, determinism, a recorded period built by
hand, and the call-centre seed's small-store day (4 agents, ~80 calls)."""

from datetime import date, datetime, timedelta

import pytest
from django.utils import timezone

from handler_groups.models import MemberCapacity
from insight import scenarios, services
from insight.scenarios import ParamsError, parse_synthetic, recorded_scenario
from insight.simulator import Scenario, SimAgent, SimTicket, simulate, simulate_strategy
from routing import idle_pool
from routing.models import PresenceSpan
from tests.factories import HandlerGroupFactory, TicketFactory, UserFactory


def _two_agents_three_arrivals(**options) -> Scenario:
    return Scenario(
        agents=(SimAgent(1, "ann", max_active=1), SimAgent(2, "bob", max_active=1)),
        tickets=(
            SimTicket(1, arrival=0, work=100, budget=60),
            SimTicket(2, arrival=10, work=100, budget=60),
            SimTicket(3, arrival=20, work=50, budget=60),
        ),
        horizon=200,
        **options,
    )


@pytest.mark.parametrize("code", [1, 2, 3, 4])
def test_two_agents_three_arrivals_known_waits(code):
    """ann takes 1 at 0 s, bob 2 at 10 s; 3 arrives at 20 s with both busy and waits until
    ann completes at 100 s: waits 0, 0, 80 — one response breach (budget 60 s), a queue of
    one, ann 2 tickets and bob 1, whatever the strategy."""
    report = simulate_strategy(_two_agents_three_arrivals(), code)
    assert report["assigned"] == 3
    assert report["wait_p50_seconds"] == 0
    assert report["wait_p95_seconds"] == 72.0  # 0, 0, 80 interpolated at 95 %
    assert report["wait_mean_seconds"] == pytest.approx(26.67)
    assert report["sla_response_breaches"] == 1
    assert report["max_queue_length"] == 1
    assert report["counts"] == {"ann": 2, "bob": 1}
    # ann busy 0–150 of 200 s, bob 10–110: 0.75 and 0.5.
    assert report["occupancy"] == {"ann": 0.75, "bob": 0.5}
    assert report["occupancy_stddev"] == 0.125


def test_wrap_up_holds_the_queue_and_longest_idle_picks_from_the_real_pool():
    """With a 30 s wrap-up ann is back at 130 s, not 100 s: ticket 3 waits 110 s. Longest
    idle's picks ran through the Redis Lua script under a scratch key, removed afterwards."""
    report = simulate_strategy(_two_agents_three_arrivals(wrap_up_seconds=30), 4)
    assert report["wait_p95_seconds"] == pytest.approx(0.9 * 110)
    assert list(idle_pool.client().scan_iter("td:{gsim-*")) == []


def test_longest_idle_takes_the_agent_idle_longest_round_robin_the_next_in_turn():
    """ann works 0–10 s and wraps up until 15 s; bob and cat, idle since 0 s, take the next
    two (longest idle: they have waited longest; round robin: their turn); at 40 s both pick
    ann (idle since 15 s, and next in turn after cat)."""
    scenario = Scenario(
        agents=(
            SimAgent(1, "ann", max_active=1),
            SimAgent(2, "bob", max_active=1),
            SimAgent(3, "cat", max_active=1),
        ),
        tickets=(
            SimTicket(1, arrival=0, work=10),  # ann (all idle since 0: member order)
            SimTicket(2, arrival=12, work=1),  # rr: bob; li: bob (idle since 0)
            SimTicket(3, arrival=30, work=1),  # rr: cat; li: cat (idle since 0)
            SimTicket(4, arrival=40, work=1),  # rr: ann (after cat); li: ann (idle since 15)
        ),
        horizon=60,
        wrap_up_seconds=5,
    )
    assert simulate_strategy(scenario, 4)["counts"] == {"ann": 2, "bob": 1, "cat": 1}
    assert simulate_strategy(scenario, 1)["counts"] == {"ann": 2, "bob": 1, "cat": 1}


def test_same_seed_same_results_different_seed_may_differ():
    params = parse_synthetic("agents=4,calls=60,aht=600")
    first = simulate(scenarios.synthetic_scenario(params, 7))
    again = simulate(scenarios.synthetic_scenario(params, 7))
    assert first == again
    other = simulate(scenarios.synthetic_scenario(params, 8))
    assert other != first  # another day of arrivals (not guaranteed in general, true here)


def test_the_small_store_day_against_the_seeds_claim():
    """The call-centre seed: 4 agents, ~80 calls a day; "round robin: count std dev ≈ 6.2;
    longest idle + ACW: ≈ 1.8". Replayed through the real strategies (agents of speeds
    0.6–1.6, 300 s mean handle time, 60 s wrap-up), medians over 20 seeded days: round robin
    1.0, longest idle with wrap-up 2.0 — the claim does not hold here (see `explanation`)."""
    result = services.simulate_synthetic(params=parse_synthetic("agents=4,calls=80"), seed=0)
    claim = result["claim"]
    print(claim["medians"], claim["explanation"])
    assert claim["medians"] == {
        "round_robin_no_wrap_up": 1.0,
        "round_robin_wrap_up": 1.0,
        "longest_idle_wrap_up": 2.0,
    }
    assert claim["reduced"] is False
    assert claim["blind_rotation_count_stddev"] == 0.0
    assert "does not bring the spread down (1.0 → 2.0)" in claim["explanation"]
    by_code = {r["strategy"]: r for r in result["strategies"]}
    assert sum(by_code[1]["counts"].values()) == 80
    assert by_code[4]["count_stddev"] == claim["this_seed"]["longest_idle_wrap_up"]


@pytest.mark.parametrize(
    ("spec", "key"),
    [
        ("agents=0", "agents"),
        ("calls=many", "calls"),
        ("colour=blue", "colour"),
        ("speeds=1:2", "speeds"),
        ("dist=normal", "dist"),
        ("hours", "hours"),
        ("aht=-5", "aht"),
    ],
)
def test_synthetic_parameters_are_validated_by_key(spec, key):
    with pytest.raises(ParamsError) as caught:
        parse_synthetic(spec)
    assert key in caught.value.errors


@pytest.mark.django_db
def test_recorded_mode_replays_the_groups_history():
    """Three approvals on one day; ann was on shift 09:00–12:00 (recorded), bob has no span
    (taken as on shift all day, and said so). Handle times: 30 min and 20 min recorded, the
    third gets their mean (25 min). Round robin, one at a time: 09:00 ann, 09:10 bob, 09:15
    waits for ann (done 09:30): wait 15 min; budget 10 min → one breach."""
    ann, bob = UserFactory(username="ann"), UserFactory(username="bob")
    group = HandlerGroupFactory(
        members=[ann, bob], assign_strategy=1, requires_presence=True, max_active=1
    )
    MemberCapacity.objects.create(group=group, user=bob, max_active=1)
    day = date(2026, 11, 2)
    at = lambda h, m=0: datetime(2026, 11, 2, h, m, tzinfo=timezone.get_current_timezone())  # noqa: E731
    for approved, handle in ((at(9), 30), (at(9, 10), 20), (at(9, 15), None)):
        TicketFactory(
            handler_group=group,
            submitted_time=approved,
            approved_time=approved,
            accepted_time=approved + timedelta(minutes=1) if handle else None,
            completed_time=approved + timedelta(minutes=1 + handle) if handle else None,
        )
    TicketFactory(
        handler_group=group, submitted_time=at(8), approved_time=at(8) - timedelta(days=2)
    )
    PresenceSpan.objects.create(user=ann, state="available", started=at(9), ended=at(12))
    PresenceSpan.objects.create(user=ann, state="offline", started=at(12), ended=None)

    built = recorded_scenario(group=group, date_from=day, date_to=day, response_budget_seconds=600)
    assert built.notes["arrivals"] == 3
    assert built.notes["presence_basis"]["recorded"] == ["ann"]
    assert built.notes["presence_basis"]["assumed_available"] == ["bob"]
    assert "taken as available the whole time" in built.notes["presence_basis"]["summary"]
    assert built.notes["handle_time_basis"] == {
        "recorded_tickets": 2,
        "mean_seconds": 1500.0,
        "mean_from": "period",
    }
    ann_agent = built.scenario.agents[0]
    assert ann_agent.windows == ((9 * 3600.0, 12 * 3600.0),)

    result = services.simulate_recorded(
        group=group, date_from=day, date_to=day, strategies=[1, 4], response_budget_seconds=600
    )
    rr = result["strategies"][0]
    assert rr["counts"] == {"ann": 2, "bob": 1}
    assert rr["wait_p50_seconds"] == 0
    assert rr["wait_mean_seconds"] == 300.0  # 0, 0 and 15 min
    assert rr["sla_response_breaches"] == 1
    assert result["presence_basis"]["assumed_available"] == ["bob"]
    assert result["strategies"][1]["strategy_label"] == "longest idle"
