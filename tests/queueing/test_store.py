"""The ranking's Redis I/O against the real Redis at settings.QUEUEING_REDIS_URL."""

import json
import threading
import uuid

import pytest
from redis.connection import AbstractConnection

from queueing import services, store

from .helpers import customer, person


def test_reads_rr_levels_from_plain_lechat_keys(settings, redis_client):
    assert settings.QUEUEING_KEY_PREFIX == "lechat_"  # the default other systems write to
    uids = [f"rr-test-{uuid.uuid4().hex}" for _ in range(3)]
    try:
        redis_client.set(f"lechat_{uids[0]}", json.dumps({"rr_1p5": "R2"}))
        redis_client.set(f"lechat_{uids[1]}", "not json")
        assert store.read_rr_levels(uids) == {uids[0]: 2, uids[1]: 9, uids[2]: 9}
    finally:
        redis_client.delete(*(f"lechat_{uid}" for uid in uids))


def test_jump_lists_live_in_lechat_jump_uids_keys(settings, redis_client):
    uid = f"jump-test-{uuid.uuid4().hex}"
    key = f"lechat_jump_uids_{uid}"
    try:
        redis_client.set(key, '["x"]')
        assert store.read_jump_lists([uid]) == {uid: ["x"]}
        store.append_jumps({uid: ["y"]})
        assert json.loads(redis_client.get(key)) == ["x", "y"]
    finally:
        redis_client.delete(key)


def test_append_adds_only_uids_not_already_there_and_keeps_the_stored_text(queue_cache):
    queue_cache.set_raw("jump_uids_a", '[ "x", 7 ]')
    appended = store.append_jumps({"a": ["x", "y", "7", "y/z", "é", "😀"]})
    assert appended == 4
    raw = queue_cache.jumps_raw("a")
    assert raw.startswith('[ "x", 7 ')
    assert json.loads(raw) == ["x", 7, "y", "y/z", "é", "😀"]
    assert store.read_jump_lists(["a"]) == {"a": ["x", "7", "y", "y/z", "é", "😀"]}


@pytest.mark.parametrize("stored", [None, "[]", " [ ] ", "garbage", '{"x": 1}', "[1,"])
def test_append_starts_a_list_when_there_is_no_readable_one(queue_cache, stored):
    if stored is not None:
        queue_cache.set_raw("jump_uids_a", stored)
    assert store.append_jumps({"a": ["u1", "u2", "u1"]}) == 2
    assert queue_cache.jumps("a") == ["u1", "u2"]


def test_append_sets_the_configured_expiry(settings, queue_cache):
    settings.QUEUEING_JUMP_TTL_SECONDS = 4321
    store.append_jumps({"a": ["u1"]})
    assert 4300 < queue_cache.ttl("jump_uids_a") <= 4321
    queue_cache.client.expire(f"{queue_cache.prefix}jump_uids_a", 10)
    store.append_jumps({"a": ["u1"]})  # nothing new: the expiry is still refreshed
    assert 4300 < queue_cache.ttl("jump_uids_a") <= 4321


def test_default_jump_expiry_is_seven_days(settings):
    assert settings.QUEUEING_JUMP_TTL_SECONDS == 7 * 24 * 3600


def test_concurrent_appends_to_the_same_lists_lose_nothing(queue_cache):
    threads_count, per_thread = 12, 40
    barrier = threading.Barrier(threads_count)
    failures = []

    def append(worker: int) -> None:
        try:
            barrier.wait(timeout=10)
            for k in range(per_thread):
                # Every worker appends its own uid and a shared one to the same three lists.
                store.append_jumps(
                    {target: [f"w{worker}-{k}", f"shared-{k}"] for target in ("a", "b", "c")}
                )
        except Exception as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    threads = [threading.Thread(target=append, args=(w,)) for w in range(threads_count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not failures
    expected = {f"w{w}-{k}" for w in range(threads_count) for k in range(per_thread)} | {
        f"shared-{k}" for k in range(per_thread)
    }
    for target in ("a", "b", "c"):
        stored = queue_cache.jumps(target)
        assert len(stored) == len(expected)  # each uid once
        assert set(stored) == expected


def test_concurrent_rankings_keep_every_jump_on_a_shared_customer(queue_cache):
    """Each request moves its own jumper ahead of the same low-RR customer at the same moment;
    the customer's jump list ends up with all of them."""
    workers = 10
    queue_cache.set_rr("low", "R8")
    for w in range(workers):
        queue_cache.set_rr(f"vip-{w}", "R1")
    barrier = threading.Barrier(workers)
    results, failures = {}, []

    def rank(worker: int) -> None:
        customers = [
            customer(person("low", already_wait_time=100)),
            customer(person(f"vip-{worker}")),
        ]
        try:
            barrier.wait(timeout=10)
            outcome = services.queue_rank(customers=customers, trace_id=f"t{worker}")
            results[worker] = outcome
        except Exception as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    threads = [threading.Thread(target=rank, args=(w,)) for w in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not failures
    assert sorted(queue_cache.jumps("low")) == sorted(f"vip-{w}" for w in range(workers))
    for outcome in results.values():
        assert not outcome.degraded
        assert [e.uid for e in outcome.queue][1] == "low"
        assert outcome.queue[1].be_jump == 1  # counted from the request's own snapshot


@pytest.fixture
def round_trips(monkeypatch):
    """Counts what is sent to Redis: one send per command, or per pipeline."""
    sent = []
    original = AbstractConnection.send_packed_command

    def send_packed_command(self, command, check_health=True):
        sent.append(command)
        return original(self, command, check_health)

    monkeypatch.setattr(AbstractConnection, "send_packed_command", send_packed_command)
    return sent


def test_round_trips_per_ranking_do_not_grow_with_the_queue(queue_cache, round_trips):
    def queue(size: int) -> list:
        # Half low RR, half jumpers, interleaved: many swaps, many jump lists.
        for k in range(size):
            queue_cache.set_rr(f"{size}-{k}", "R7" if k % 2 == 0 else "R3")
        return [customer(person(f"{size}-{k}", already_wait_time=size - k)) for k in range(size)]

    services.queue_rank(customers=queue(4), trace_id="warm-up")  # connects, loads the script
    small, large = queue(10), queue(400)
    round_trips.clear()
    small_outcome = services.queue_rank(customers=small, trace_id="small")
    small_trips = len(round_trips)
    round_trips.clear()
    large_outcome = services.queue_rank(customers=large, trace_id="large")
    assert small_outcome.jumps_appended > 0
    assert large_outcome.jumps_appended > 100
    # MGET of RR levels, MGET of jump lists, EVALSHA of the append script.
    assert small_trips == len(round_trips) == 3
