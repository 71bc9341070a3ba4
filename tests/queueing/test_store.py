"""The ranking's Redis I/O against the real Redis at settings.QUEUEING_REDIS_URL."""

import json
import threading
import uuid

import pytest
import redis
from redis.connection import AbstractConnection

from queueing import ranking, services, store

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
    # One MGET of the RR levels and the jump lists, one EVALSHA of the append script.
    assert small_trips == len(round_trips) == 2


def test_round_trips_of_the_endpoints_ranking_do_not_grow_with_the_queue(queue_cache, round_trips):
    """The endpoint's way (columns, the append read after rendering): the same two."""

    def persons(size: int) -> ranking.Persons:
        for k in range(size):
            queue_cache.set_rr(f"p{size}-{k}", "R7" if k % 2 == 0 else "R3")
        queue = [person(f"p{size}-{k}", already_wait_time=size - k) for k in range(size)]
        return ranking.Persons.of([customer(p) for p in queue])

    rendered = []
    warm_up = persons(4)
    services.queue_rank_persons(persons=warm_up, trace_id="warm-up", render=rendered.append)
    small, large = persons(10), persons(400)
    round_trips.clear()
    services.queue_rank_persons(persons=small, trace_id="small", render=rendered.append)
    small_trips = len(round_trips)
    round_trips.clear()
    outcome = services.queue_rank_persons(persons=large, trace_id="large", render=rendered.append)
    assert outcome.jumps_appended > 100
    assert small_trips == len(round_trips) == 2


# Appending while the caller renders ----------------------------------------------------------


def test_an_append_read_later_does_what_append_jumps_does(queue_cache):
    queue_cache.set_raw("jump_uids_b", '["x", "y"]')
    queue_cache.set_raw("jump_uids_c", '[ "x", 7 ]')
    appended = {"a": ["u1", "u2"], "b": ["u3"], "c": ["x", "7", "é"]}
    texts: dict[str, bytes | None] = {}
    store.read_jump_lists(list(appended), texts=texts)
    pending = store.start_append_jumps(appended, texts=texts)
    assert pending.result() == 4  # x and 7 were in c's list
    assert queue_cache.jumps("a") == ["u1", "u2"]
    assert queue_cache.jumps("b") == ["x", "y", "u3"]
    assert json.loads(queue_cache.jumps_raw("c")) == ["x", 7, "é"]
    assert queue_cache.ttl("jump_uids_a") > 0


def test_nothing_to_append_costs_no_round_trip(queue_cache, round_trips):
    pending = store.start_append_jumps({})
    assert pending.result() == 0
    assert round_trips == []


def test_an_append_read_later_loads_a_script_redis_has_forgotten(queue_cache, monkeypatch):
    client, script = store._connection()
    forgotten = client.register_script(store._APPEND_JUMPS_LUA)
    forgotten.sha = "0" * 40  # a script Redis does not know: NOSCRIPT
    monkeypatch.setattr(store, "_connection", lambda: (client, forgotten))
    assert store.start_append_jumps({"a": ["u1"]}).result() == 1
    assert queue_cache.jumps("a") == ["u1"]
    assert forgotten.sha == script.sha  # loaded again


def test_an_append_to_a_redis_that_is_down_is_unavailable(settings, closed_redis_url):
    settings.QUEUEING_REDIS_URL = closed_redis_url
    pending = store.start_append_jumps({"a": ["u1"]})
    with pytest.raises(store.Unavailable):
        pending.result()


def test_a_closed_append_gives_its_connection_back(queue_cache):
    client, _ = store._connection()
    pending = store.start_append_jumps({"a": ["u1"]})
    in_use = len(client.connection_pool._in_use_connections)
    pending.close()
    assert len(client.connection_pool._in_use_connections) == in_use - 1


def test_when_the_append_fails_the_ranking_is_rendered_again_degraded(queue_cache, monkeypatch):
    queue_cache.set_rr("low", "R7")
    queue_cache.set_rr("vip", "R1")
    persons = ranking.Persons.of(
        [customer(person("low", already_wait_time=60)), customer(person("vip"))]
    )

    def fail(self):
        raise store.Unavailable("ConnectionError: gone")

    monkeypatch.setattr(store.PendingAppend, "result", fail)
    rendered = []

    def render(order: ranking.Order) -> list[str]:
        rendered.append([(persons.uid[p], order.rr[p]) for p in order.order])
        return rendered[-1]

    outcome = services.queue_rank_persons(persons=persons, trace_id="t", render=render)
    assert outcome.degraded
    assert rendered == [[("vip", 1), ("low", 7)], [("low", 9), ("vip", 9)]]
    assert outcome.rendered == [("low", 9), ("vip", 9)]
    assert outcome.jumps_appended == 0


def test_a_read_whose_connection_fails_is_sent_again(queue_cache, monkeypatch):
    queue_cache.set_rr("a", "R2")
    original = AbstractConnection.send_packed_command
    failures = []

    def send_packed_command(self, command, check_health=True):
        if not failures and b"MGET" in b"".join(command):  # the connection breaks
            failures.append(command)
            raise redis.ConnectionError("Connection reset by peer")
        return original(self, command, check_health)

    monkeypatch.setattr(AbstractConnection, "send_packed_command", send_packed_command)
    assert store.read_queue(["a"])[0] == [2]
    assert len(failures) == 1


def test_a_read_read_later_is_read_queue_and_a_closed_one_gives_its_connection_back(queue_cache):
    queue_cache.set_rr("a", "R2")
    queue_cache.set_jumps("b", ["x"])
    assert store.start_read_queue(["a", "b"]).result() == ([2, 9], {"a": None, "b": b'["x"]'})
    assert store.read_queue(["a", "b"]) == ([2, 9], {"a": None, "b": b'["x"]'})
    client, _ = store._connection()
    pending = store.start_read_queue(["a"])
    in_use = len(client.connection_pool._in_use_connections)
    pending.close()
    assert len(client.connection_pool._in_use_connections) == in_use - 1


def test_a_read_from_a_redis_that_is_down_is_unavailable(settings, closed_redis_url):
    settings.QUEUEING_REDIS_URL = closed_redis_url
    pending = store.start_read_queue(["a"])
    with pytest.raises(store.Unavailable):
        pending.result()
