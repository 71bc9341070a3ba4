"""The pure ranking (queueing/ranking.py): no database, no Redis."""

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from queueing import ranking

from .helpers import customer, person
from .strategies import queues, rr
from .transcription import transcribe

# Helpers ---------------------------------------------------------------------------------------


def rank_like_service(persons: list[dict], cache: dict[str, str], **kwargs) -> ranking.Ranking:
    """ranking.rank over a dict standing for Redis (keys as the transcription names them);
    appends this request's jumps to `cache` as the store's script does."""
    customers = [customer(p) for p in persons]
    rr_levels = {c.uid: ranking.rr_level(cache.get(f"lechat_{c.uid}")) for c in customers}
    asked = []

    def read_jump_lists(uids):
        asked.extend(uids)
        return {uid: ranking.jump_list(cache.get(f"lechat_jump_uids_{uid}")) for uid in uids}

    result = ranking.rank(customers, rr_levels=rr_levels, read_jump_lists=read_jump_lists, **kwargs)
    for uid, appended in result.appended_jumps.items():
        key = f"lechat_jump_uids_{uid}"
        stored = ranking.jump_list(cache.get(key))
        cache[key] = json.dumps(stored + [u for u in appended if u not in stored])
    result.asked = asked
    return result


def decoded(cache: dict[str, str]) -> dict:
    return {key: json.loads(value) for key, value in cache.items() if "jump_uids_" in key}


def assert_same_as_transcription(persons: list[dict], cache: dict[str, str]) -> None:
    expected_cache = dict(cache)
    expected = transcribe(persons, expected_cache)
    actual_cache = dict(cache)
    result = rank_like_service(persons, actual_cache)
    assert [e.uid for e in result.queue] == [str(p["uid"]) for p in expected]
    assert [e.be_jump for e in result.queue] == [p["be_jump"] for p in expected]
    assert [e.rr for e in result.queue] == [p["rr"] for p in expected]
    assert [e.user_group for e in result.queue] == [p["user_group"] for p in expected]
    assert [e.rough_sort_score for e in result.queue] == [p["rough_sort_score"] for p in expected]
    assert decoded(actual_cache) == decoded(expected_cache)


# Step 1: rough score ---------------------------------------------------------------------------


def test_rough_score_adds_the_terms_left_to_right():
    p = person("a", already_wait_time=35, is_online=1, is_complaint=1, confirm_num=1)
    score = ranking.rough_sort_score(customer(p))
    assert score == ((35 / 3600 + 0.3) + 0.3) + 1 * 0.1
    # Grouping the constants differs in the last bit: the order is part of the contract.
    assert score != 35 / 3600 + (0.3 + 0.3 + 0.1)


def test_rough_score_leaves_out_terms_that_do_not_apply():
    p = person("a", already_wait_time=7200, is_online=0, is_complaint=1, confirm_num=3)
    assert ranking.rough_sort_score(customer(p)) == 2 + 0.3 + 3 * 0.1


@pytest.mark.parametrize(("not_confirm_num", "zero"), [(3, False), (4, True), (9, True)])
def test_rough_score_is_zero_from_four_unconfirmed(not_confirm_num, zero):
    p = person("a", already_wait_time=3600, not_confirm_num=not_confirm_num)
    assert (ranking.rough_sort_score(customer(p)) == 0) is zero


# Step 2: stable sort ---------------------------------------------------------------------------


def test_rough_sort_puts_highest_first_and_keeps_request_order_on_ties():
    persons = [
        person("tie-1", already_wait_time=60),
        person("low", already_wait_time=0),
        person("high", already_wait_time=7200),
        person("tie-2", already_wait_time=60),
        person("tie-3", already_wait_time=60),
    ]
    queue = ranking.rough_sort(customer(p) for p in persons)
    assert [e.uid for e in queue] == ["high", "tie-1", "tie-2", "tie-3", "low"]
    assert [e.rough_position for e in queue] == [0, 1, 2, 3, 4]


# Step 3: RR level ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cached", "level"),
    [(rr(f"R{k}"), k) for k in range(1, 10)]
    + [
        (None, 9),
        (rr("R0"), 9),
        (rr("R10"), 9),
        (rr("r3"), 9),
        (rr(" R3"), 9),
        (json.dumps({"rr_1p5": 3}), 9),
        (json.dumps({"rr_1p5": None}), 9),
        (json.dumps({"other": "R3"}), 9),
        (json.dumps(["R3"]), 9),
        ('"R3"', 9),
        ("{not json", 9),
        (b"\xff\xfe", 9),
        ("[" * 100_000, 9),
        (rr("R3").encode(), 3),
        (json.dumps({"rr_1p5": "R4", "other": 1}), 4),
    ],
)
def test_rr_level_is_r1_to_r9_and_9_for_anything_else(cached, level):
    assert ranking.rr_level(cached) == level


@pytest.mark.parametrize(("level", "group"), [(1, 2), (5, 2), (6, 1), (9, 1)])
def test_user_group_is_2_up_to_rr_5(level, group):
    assert ranking.user_group(level) == group


@pytest.mark.parametrize(
    ("cached", "uids"),
    [
        (None, []),
        ('["a", "b", "a"]', ["a", "b", "a"]),
        ('[1, 2.0, 2.5, true, null, "x"]', ["1", "2", "x"]),
        ("not json", []),
        ('{"a": 1}', []),
        (b'["a"]', ["a"]),
    ],
)
def test_jump_list_reads_uids_as_strings(cached, uids):
    assert ranking.jump_list(cached) == uids


# Step 4: RR adjustment -------------------------------------------------------------------------


def test_jumper_moves_ahead_of_a_low_rr_customer_and_is_recorded():
    persons = [person("low", already_wait_time=100), person("vip", already_wait_time=10)]
    cache = {"lechat_low": rr("R7"), "lechat_vip": rr("R2")}
    result = rank_like_service(persons, cache)
    assert [(e.uid, e.be_jump) for e in result.queue] == [("vip", 0), ("low", 1)]
    assert result.appended_jumps == {"low": ["vip"]}
    assert json.loads(cache["lechat_jump_uids_low"]) == ["vip"]


def test_a_jumper_already_in_the_list_moves_ahead_without_counting():
    persons = [person("low", already_wait_time=100, be_jump=3), person("vip")]
    cache = {
        "lechat_low": rr("R9"),
        "lechat_vip": rr("R5"),
        "lechat_jump_uids_low": '["vip"]',
    }
    result = rank_like_service(persons, cache)
    assert [(e.uid, e.be_jump) for e in result.queue] == [("vip", 0), ("low", 3)]
    assert result.appended_jumps == {}
    assert json.loads(cache["lechat_jump_uids_low"]) == ["vip"]


def test_no_one_jumps_a_customer_jumped_15_times():
    persons = [person("low", already_wait_time=100, be_jump=15), person("vip")]
    cache = {"lechat_low": rr("R6"), "lechat_vip": rr("R1")}
    result = rank_like_service(persons, cache)
    assert [e.uid for e in result.queue] == ["low", "vip"]
    assert result.appended_jumps == {}


def test_a_jump_in_this_request_counts_towards_the_15():
    persons = [
        person("low", already_wait_time=100, be_jump=14),
        person("vip-1", already_wait_time=50),
        person("vip-2"),
    ]
    cache = {"lechat_low": rr("R8"), "lechat_vip-1": rr("R3"), "lechat_vip-2": rr("R3")}
    result = rank_like_service(persons, cache)
    # vip-1 makes it 15, so vip-2 stays behind.
    assert [(e.uid, e.be_jump) for e in result.queue] == [
        ("vip-1", 0),
        ("low", 15),
        ("vip-2", 0),
    ]


def test_a_customer_with_four_unconfirmed_cannot_jump():
    persons = [person("low", already_wait_time=100), person("vip", not_confirm_num=4)]
    cache = {"lechat_low": rr("R7"), "lechat_vip": rr("R2")}
    assert [e.uid for e in rank_like_service(persons, cache).queue] == ["low", "vip"]


def test_customers_of_the_same_rr_group_do_not_swap():
    persons = [person("a", already_wait_time=100), person("b"), person("c"), person("d")]
    cache = {"lechat_a": rr("R9"), "lechat_b": rr("R6"), "lechat_c": rr("R5"), "lechat_d": rr("R1")}
    result = rank_like_service(persons, cache)
    assert [e.uid for e in result.queue] == ["c", "d", "a", "b"]
    # b was passed by c and d, then a was; c and d never swap with each other.
    assert result.appended_jumps == {"b": ["c", "d"], "a": ["c", "d"]}


def test_only_jump_lists_that_may_be_needed_are_read():
    persons = [
        person("low-ahead", already_wait_time=400),
        person("jumped-15", already_wait_time=300, be_jump=15),
        person("low", already_wait_time=200),
        person("vip"),
    ]
    cache = {f"lechat_{p['uid']}": rr("R7") for p in persons} | {"lechat_vip": rr("R1")}
    # Nobody passes "jumped-15", so vip can never reach "low-ahead".
    assert rank_like_service(persons, dict(cache)).asked == ["low"]
    persons[1]["be_jump"] = 14
    assert sorted(rank_like_service(persons, dict(cache)).asked) == [
        "jumped-15",
        "low",
        "low-ahead",
    ]


def test_no_jump_list_is_read_when_a_customer_who_cannot_jump_blocks():
    persons = [
        person("low", already_wait_time=100),
        person("unconfirmed", not_confirm_num=4),
        person("vip"),
    ]
    cache = {"lechat_low": rr("R7"), "lechat_unconfirmed": rr("R2"), "lechat_vip": rr("R1")}
    result = rank_like_service(persons, cache)
    assert [e.uid for e in result.queue] == ["low", "unconfirmed", "vip"]
    assert result.asked == []


# Step 5: SSVIP adjustment ----------------------------------------------------------------------


def test_ssvip_moves_ahead_within_its_group():
    persons = [person("a", already_wait_time=100), person("s", is_ssvip=True)]
    cache = {"lechat_a": rr("R3"), "lechat_s": rr("R4")}
    assert [e.uid for e in rank_like_service(persons, cache).queue] == ["s", "a"]


def test_ssvip_of_a_higher_group_moves_ahead_of_a_lower_group():
    persons = [person("a", already_wait_time=100), person("s", is_ssvip=1)]
    cache = {"lechat_a": rr("R7"), "lechat_s": rr("R1")}
    # Step 4 already moves s ahead (a jump); check step 5 alone.
    queue = ranking.rough_sort(customer(p) for p in persons)
    ranking.assign_rr(queue, {"a": 7, "s": 1})
    ranking.ssvip_adjust(queue)
    assert [e.uid for e in queue] == ["s", "a"]
    assert [e.uid for e in rank_like_service(persons, cache).queue] == ["s", "a"]


def test_ssvip_never_passes_a_user_of_a_higher_group():
    persons = [person("a", already_wait_time=100), person("s", is_ssvip=True)]
    cache = {"lechat_a": rr("R2"), "lechat_s": rr("R8")}
    assert [e.uid for e in rank_like_service(persons, cache).queue] == ["a", "s"]


@pytest.mark.parametrize(
    ("ahead", "moves"),
    [
        ({"not_confirm_num": 3}, True),
        ({"not_confirm_num": 4}, False),
        ({"is_ssvip": True}, False),
    ],
)
def test_ssvip_passes_neither_four_unconfirmed_nor_another_ssvip(ahead, moves):
    persons = [person("ahead", **ahead), person("ssvip", is_ssvip=True)]
    queue = ranking.rough_sort(customer(p) for p in persons)
    ranking.ssvip_adjust(queue)
    assert [e.uid for e in queue] == (["ssvip", "ahead"] if moves else ["ahead", "ssvip"])


def test_explain_records_every_swap():
    persons = [person("low", already_wait_time=100), person("vip", is_ssvip=True)]
    cache = {"lechat_low": rr("R7"), "lechat_vip": rr("R2")}
    swaps: list[ranking.Swap] = []
    rank_like_service(persons, cache, swaps=swaps)
    assert [(s.step, s.pass_no, s.ahead.uid, s.behind.uid, s.jump_counted) for s in swaps] == [
        ("rr", 0, "vip", "low", True)
    ]


# Fidelity: the whole algorithm against the plain transcription ---------------------------------


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(queues())
def test_ranking_agrees_with_the_transcription(queue_and_cache):
    persons, cache = queue_and_cache
    assert_same_as_transcription(persons, cache)


@pytest.mark.parametrize("seed", range(12))
def test_ranking_agrees_with_the_transcription_on_long_queues(seed):
    rnd = random.Random(seed)
    n = rnd.choice([150, 300])
    share_low, share_walls, share_ssvip = rnd.random(), rnd.random() * 0.2, rnd.random() * 0.3
    uids = [f"c{k}" for k in range(n)]
    persons, cache = [], {}
    for uid in uids:
        persons.append(
            person(
                uid,
                already_wait_time=rnd.choice([0, 60, 600, rnd.randint(0, 10_000)]),
                is_online=rnd.randint(0, 1),
                confirm_num=rnd.randint(0, 2),
                not_confirm_num=4 if rnd.random() < share_walls else rnd.randint(0, 3),
                is_ssvip=rnd.random() < share_ssvip,
                be_jump=rnd.choice([0, 0, 3, 10, 14, 15]),
            )
        )
        level = rnd.randint(6, 9) if rnd.random() < share_low else rnd.randint(1, 5)
        cache[f"lechat_{uid}"] = rr(f"R{level}")
        if rnd.random() < 0.5:
            cache[f"lechat_jump_uids_{uid}"] = json.dumps(rnd.sample(uids, rnd.randint(0, n // 2)))
    assert_same_as_transcription(persons, cache)


def test_the_ranking_module_imports_neither_django_nor_redis():
    code = (
        "import sys, queueing.ranking; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'django', 'redis'}))"
    )
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert result.stdout.strip() == "[]"
