"""The fast paths of the ranking give exactly what the slow ones give: the plain ranking and the
explained one (step by step, every swap recorded), orjson's reading of a jump list and json's,
the append of lists still as read and the merge in Lua, msgspec's check of the usual queue and
the field parsers, the endpoint's columns and the customers, one permission query and
has_perm."""

import copy
import functools
import json
import math
import random
import uuid

import pytest
import redis
from django.conf import settings as django_settings
from django.contrib.auth.models import Group, Permission
from django.test import override_settings
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from queueing import ranking, services, store
from queueing.permissions import CanRankQueue
from queueing.serializers import (
    MAX_COUNT,
    UsualPerson,
    _customer_or_errors,
    _usual_queue,
    parse_queue,
    ranked_persons,
    ranked_queue,
    usual_persons,
)
from tests.factories import UserFactory

from .helpers import customer, person
from .strategies import queues

# The plain ranking and the explained one ------------------------------------------------------


def both_ways(persons: list[dict], cache: dict[str, str]):
    customers = [customer(p) for p in persons]
    rr_levels = {c.uid: ranking.rr_level(cache.get(f"lechat_{c.uid}")) for c in customers}

    def read_jump_lists(uids):
        return {uid: ranking.jump_list(cache.get(f"lechat_jump_uids_{uid}")) for uid in uids}

    plain = ranking.rank(customers, rr_levels=rr_levels, read_jump_lists=read_jump_lists)
    swaps: list[ranking.Swap] = []
    explained = ranking.rank(
        customers, rr_levels=rr_levels, read_jump_lists=read_jump_lists, swaps=swaps
    )
    return plain, explained, swaps


def assert_same(plain: ranking.Ranking, explained: ranking.Ranking) -> None:
    assert plain.queue == explained.queue  # every field of every place, in order
    assert plain.appended_jumps == explained.appended_jumps


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(queues(max_size=40))
def test_the_plain_ranking_is_the_explained_one(queue_and_cache):
    plain, explained, _ = both_ways(*queue_and_cache)
    assert_same(plain, explained)


def long_queue(seed: int) -> tuple[list[dict], dict[str, str]]:
    """Many jumpers and customers who can be jumped, walls, SSVIPs of both groups, jump counts
    near 15 and stored lists holding some of the jumpers."""
    rnd = random.Random(seed)
    n = rnd.choice([200, 600, 1500])
    share_jumpers, share_walls, share_ssvip = rnd.random(), rnd.random() * 0.2, rnd.random() * 0.3
    uids = [f"c{k}" for k in range(n)]
    persons, cache = [], {}
    for uid in uids:
        persons.append(
            person(
                uid,
                already_wait_time=rnd.choice([0, 60, rnd.randint(0, 10_000)]),
                is_online=rnd.randint(0, 1),
                confirm_num=rnd.randint(0, 2),
                not_confirm_num=4 if rnd.random() < share_walls else rnd.randint(0, 3),
                is_ssvip=rnd.random() < share_ssvip,
                be_jump=rnd.choice([0, 0, 3, 10, 13, 14, 15, 16]),
            )
        )
        draw = rnd.random()
        if draw < 0.9:
            level = rnd.randint(1, 5) if draw < 0.9 * share_jumpers else rnd.randint(6, 9)
            cache[f"lechat_{uid}"] = json.dumps({"rr_1p5": f"R{level}"})
        if rnd.random() < 0.4:
            stored = rnd.sample(uids, rnd.randint(0, min(n, 30)))
            cache[f"lechat_jump_uids_{uid}"] = json.dumps(stored)
    return persons, cache


@pytest.mark.parametrize("seed", range(20))
def test_the_plain_ranking_is_the_explained_one_on_long_queues(seed):
    plain, explained, swaps = both_ways(*long_queue(seed))
    assert swaps  # the queues do make the steps work
    assert_same(plain, explained)


@settings(max_examples=500, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.one_of(
                st.sampled_from([0, -0.0, 0.0, 1, 3600, 3600.0, MAX_COUNT, float(MAX_COUNT)]),
                st.floats(0, MAX_COUNT, allow_nan=False),
                st.integers(0, MAX_COUNT),
            ),
            st.sampled_from([0, 1, True, False]),
            st.sampled_from([0, 1, True, False]),
            st.integers(0, 6),
            st.integers(0, 6),
        ),
        max_size=20,
    )
)
def test_the_columns_rough_scores_are_rough_sort_score(rows):
    customers = [
        ranking.Customer(f"u{k}", waited, online, complaint, confirmed, offers, False, 0, {})
        for k, (waited, online, complaint, confirmed, offers) in enumerate(rows)
    ]
    scores = ranking._rough_sort_scores(ranking.Persons.of(customers))
    expected = [ranking.rough_sort_score(c) for c in customers]
    assert [(s, math.copysign(1, s)) for s in scores] == [
        (s, math.copysign(1, s)) for s in expected
    ]


def test_customers_sharing_a_uid_are_ranked_as_the_explained_path_ranks_them():
    """Not from the endpoint (it refuses them), but the pure function stays exact."""
    persons = [
        person("low", already_wait_time=300),
        person("vip", already_wait_time=200),
        person("low", already_wait_time=100),
        person("vip"),
    ]
    cache = {"lechat_low": json.dumps({"rr_1p5": "R7"}), "lechat_vip": '{"rr_1p5": "R2"}'}
    plain, explained, _ = both_ways(persons, cache)
    assert_same(plain, explained)


# Reading a jump list: orjson first, json as the contract ---------------------------------------


def jump_list_by_json(cached) -> list[str]:
    """ranking.jump_list as it was, with json alone."""
    if cached is None:
        return []
    try:
        value = json.loads(cached)
    except (ValueError, RecursionError):
        return []
    if not isinstance(value, list):
        return []
    uids = []
    for item in value:
        if isinstance(item, str):
            uids.append(item)
        elif isinstance(item, int) and not isinstance(item, bool):
            uids.append(str(item))
        elif isinstance(item, float) and item.is_integer():
            uids.append(str(int(item)))
    return uids


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=6),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=3), children, max_size=3)
    ),
    max_leaves=12,
)


@settings(max_examples=800, deadline=None)
@given(
    value=JSON_VALUES | st.lists(st.text(max_size=6), max_size=6),
    ensure_ascii=st.booleans(),
    spaced=st.booleans(),
    as_bytes=st.booleans(),
)
def test_a_jump_list_reads_as_json_reads_it(value, ensure_ascii, spaced, as_bytes):
    text = json.dumps(
        value, ensure_ascii=ensure_ascii, separators=(", ", ": ") if spaced else (",", ":")
    )
    cached = text.encode("utf-8", "surrogatepass") if as_bytes else text
    assert ranking.jump_list(cached) == jump_list_by_json(cached)


@pytest.mark.parametrize(
    "cached",
    [
        b'\xef\xbb\xbf["a"]',  # UTF-8 with a byte order mark
        '["a"]'.encode("utf-16"),
        '["a", "b"]'.encode("utf-32-le"),
        b'["\xff"]',
        '["\ud800"]',
        '["\\ud800"]',
        '["\\ud83d\\ude00", "\\u00e9\\/"]',
        '["a"] x',
        '["a",]',
        ' [ "a" ,\n\t"b" ] ',
        "[" * 2000 + "]" * 2000,
        '["a", ' + "[" * 2000 + "]" * 2000 + "]",
        "",
        b"",
    ],
)
def test_a_jump_list_reads_as_json_reads_it_at_the_edges(cached):
    assert ranking.jump_list(cached) == jump_list_by_json(cached)


# Appending to jump lists: the lists still as read, and the merge --------------------------------

STORED_TEXTS = [
    None,
    "[]",
    "[ ]",
    '["a"]',
    '["a","b"]',
    '["a", "b"]',
    '["a" , "b"]',
    ' ["a"] ',
    '["a"]\n',
    '["x/y"]',
    '["x\\/y"]',
    '["\\u00e9", "é"]',
    '["a", 7, 2.0, null, true]',
    '[["a"], {"b": 1}]',
    "garbage",
    '{"a": 1}',
    '"a"',
    "[1,",
    "",
]
UIDS = st.sampled_from(["a", "b", "c", "7", "x/y", "é", 'q"t', "s\\t", "sp ace", "co,ma", "[x]"])


def append_in(namespace: str, stored: str | None, appended, *, with_texts: bool, change=None):
    """Stores `stored` as each customer's list, reads the lists, lets `change` alter Redis, then
    appends: returns the count and each list's text and whether it expires."""
    client = redis.Redis.from_url(django_settings.QUEUEING_REDIS_URL)
    prefix = f"{namespace}lechat_"
    with override_settings(QUEUEING_KEY_PREFIX=prefix):
        for uid in appended:
            if stored is not None:
                client.set(f"{prefix}jump_uids_{uid}", stored)
        texts: dict[str, bytes | None] = {}
        store.read_jump_lists(list(appended), texts=texts)
        if change is not None:
            change(client, prefix)
        count = store.append_jumps(appended, texts=texts if with_texts else None)
    lists = {
        uid: (client.get(f"{prefix}jump_uids_{uid}"), client.ttl(f"{prefix}jump_uids_{uid}") > 0)
        for uid in appended
    }
    keys = list(client.scan_iter(match=f"{namespace}*", count=1000))
    if keys:
        client.delete(*keys)
    client.close()
    return count, lists


def assert_appends_alike(stored, appended, change=None) -> None:
    namespace = f"append_{uuid.uuid4().hex[:12]}_"
    as_read = append_in(namespace + "r_", stored, appended, with_texts=True, change=change)
    merged = append_in(namespace + "m_", stored, appended, with_texts=False, change=change)
    assert as_read == merged


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    stored=st.sampled_from(STORED_TEXTS),
    appended=st.dictionaries(
        st.sampled_from(["p", "q", "r"]), st.lists(UIDS, min_size=1, max_size=5), min_size=1
    ),
)
def test_appending_to_lists_as_read_stores_what_the_merge_stores(stored, appended):
    assert_appends_alike(stored, appended)


def ranked_appends(persons: list[dict], cache: dict[str, str]):
    """A ranking's appends (as the endpoint makes them, from the jump lists' texts) and the
    texts."""
    columns = ranking.Persons.of([customer(p) for p in persons])
    texts = {}
    for uid in columns.uid:
        text = cache.get(f"lechat_jump_uids_{uid}")
        texts[uid] = None if text is None else text.encode()
    levels = [ranking.rr_level(cache.get(f"lechat_{uid}")) for uid in columns.uid]
    order = ranking.rank_persons(columns, levels, functools.partial(store.jump_lists, texts))
    return order.appended_jumps, texts


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(queues(max_size=40))
def test_a_rankings_appends_are_sent_alike_without_a_second_look(queue_and_cache):
    """`ranked=True` skips checking what the ranking made so (uids new to the list as read,
    none twice): the script gets the same keys and arguments."""
    appended, texts = ranked_appends(*queue_and_cache)
    fast = store._append_arguments(appended, texts, "p:", ranked=True)
    assert fast == store._append_arguments(appended, texts, "p:")


@pytest.mark.parametrize("seed", range(10))
def test_a_long_rankings_appends_are_sent_alike_without_a_second_look(seed):
    appended, texts = ranked_appends(*long_queue(seed))
    assert appended
    fast = store._append_arguments(appended, texts, "p:", ranked=True)
    assert fast == store._append_arguments(appended, texts, "p:")


def test_a_fresh_list_is_the_cjson_array_of_the_uids(queue_cache):
    texts: dict[str, bytes | None] = {}
    store.read_jump_lists(["p"], texts=texts)
    assert store.append_jumps({"p": ["a", "b-1"]}, texts=texts) == 2
    assert queue_cache.jumps_raw("p") == '["a","b-1"]'


@pytest.mark.parametrize(
    "change",
    [
        lambda client, prefix: client.set(f"{prefix}jump_uids_p", '["c"]'),  # created meanwhile
        lambda client, prefix: client.set(f"{prefix}jump_uids_q", '["a", "z"]'),  # appended to
        lambda client, prefix: client.set(f"{prefix}jump_uids_q", "garbage"),
        lambda client, prefix: client.delete(f"{prefix}jump_uids_q"),
    ],
)
@pytest.mark.parametrize("stored", [None, '["z"]', "[]"])
def test_a_list_changed_since_it_was_read_is_merged(change, stored):
    assert_appends_alike(stored, {"p": ["a", "b"], "q": ["c", "a"]}, change=change)


# The usual queue, checked by msgspec ------------------------------------------------------------

ANY_VALUE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([MAX_COUNT, MAX_COUNT + 1, 2**63 - 1, 2**63, -(2**63), -(2**63) - 1]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 1.0, 0.5, 3600.25, float(MAX_COUNT)]),
    st.text(max_size=4),
    st.sampled_from(["", "x" * 256, "x" * 257, "é", "\ud800"]),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
)
FIELDS = [
    "uid",
    "already_wait_time",
    "is_online",
    "is_complaint",
    "confirm_num",
    "not_confirm_num",
    "is_ssvip",
    "be_jump",
]


def typed(customer):
    return None if customer is None else [(type(v), v) for v in customer]


@settings(max_examples=1500, deadline=None)
@given(
    base=st.fixed_dictionaries({}, optional={f: ANY_VALUE for f in FIELDS}),
    valid=st.lists(st.sampled_from(FIELDS), unique=True),
)
def test_the_usual_queue_check_accepts_a_subset_with_the_same_values(base, valid):
    candidate = {**base, **{f: person("u")[f] for f in valid if f in person("u")}}
    usual = _usual_queue([candidate])
    slow, errors = _customer_or_errors(candidate)
    if usual is not None:
        assert not errors
        assert [typed(c) for c in usual] == [typed(slow)]
        assert usual[0].payload is candidate


def test_the_usual_queue_check_takes_the_usual_queue():
    queue = [person(7, already_wait_time=12.5, is_ssvip=1, be_jump=2), person("a", is_ssvip=False)]
    assert _usual_queue(queue) == [_customer_or_errors(p)[0] for p in queue]


@pytest.mark.parametrize(
    "queue",
    [
        [person(1), person("1")],  # the same customer twice
        [person("a"), person("é")],  # checked by the field parser
        [person("a"), "not an object"],
        [person("a", confirm_num=-1)],
    ],
)
def test_the_usual_queue_check_leaves_the_rest_to_the_field_parsers(queue):
    assert _usual_queue(queue) is None


def test_usual_persons_are_the_columns_of_the_usual_queue():
    queue = [person(7, already_wait_time=12.5, is_ssvip=1, be_jump=2), person("a", is_ssvip=False)]
    body = {"queue": queue, "other": 1}
    columns, payloads = usual_persons(body)
    assert payloads is queue
    expected = ranking.Persons.of(_usual_queue(queue))
    assert [[(type(v), v) for v in column] for column in columns] == [
        [(type(v), v) for v in column] for column in expected
    ]


def test_usual_persons_rows_are_persons_columns_in_order():
    assert tuple(UsualPerson.__struct_fields__) == ranking.Persons._fields


def test_an_empty_queue_is_usual():
    columns, payloads = usual_persons({"queue": []})
    assert columns == ranking.Persons([], [], [], [], [], [], [], []) and payloads == []


@pytest.mark.parametrize(
    "body",
    [
        [person("a")],  # not an object
        {"persons": [person("a")]},
        {"queue": {"0": person("a")}},
        {"queue": [person(1), person("1")]},  # the same customer twice
        {"queue": [person("a"), person("é")]},  # checked by the field parser
        {"queue": [person("a", confirm_num=-1)]},
        {"queue": [person("a"), None]},
    ],
)
def test_usual_persons_leave_the_rest_to_the_serializer(body):
    assert usual_persons(body) is None


def test_usual_persons_leave_a_queue_over_the_limit_to_the_serializer(settings):
    settings.QUEUEING_MAX_PERSONS = 2
    assert usual_persons({"queue": [person("a"), person("b")]}) is not None
    assert usual_persons({"queue": [person("a"), person("b"), person("c")]}) is None


@settings(max_examples=1500, deadline=None)
@given(
    base=st.fixed_dictionaries({}, optional={f: ANY_VALUE for f in FIELDS}),
    valid=st.lists(st.sampled_from(FIELDS), unique=True),
)
def test_usual_persons_accept_a_subset_with_the_same_values(base, valid):
    candidate = {**base, **{f: person("u")[f] for f in valid if f in person("u")}}
    usual = usual_persons({"queue": [candidate]})
    slow, errors = _customer_or_errors(candidate)
    if usual is not None:
        assert not errors
        columns, _ = usual
        assert [[(type(v), v) for v in column] for column in columns] == [
            [(type(v), v) for v in column] for column in ranking.Persons.of([slow])
        ]


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(queue_and_cache=queues(max_size=30))
def test_the_endpoint_columns_render_what_the_customers_render(queue_and_cache, queue_cache):
    """The endpoint's usual request (usual_persons → queue_rank_persons → ranked_persons) against
    the customers' path (parse_queue → queue_rank → ranked_queue), Redis included: every field
    of every person, in the same key order, and the same jump lists appended."""
    persons, cache = queue_and_cache
    queue_cache.clear()
    for key, value in cache.items():
        queue_cache.set_raw(key.removeprefix("lechat_"), value)
    columns, payloads = usual_persons({"queue": copy.deepcopy(persons)})
    plain = services.queue_rank_persons(persons=columns, trace_id="t", record_jumps=False)
    by_columns = ranked_persons(payloads, plain.order)
    outcome = services.queue_rank(customers=parse_queue(persons), trace_id="t", record_jumps=False)
    by_customers = ranked_queue(outcome.queue)
    assert [list(p.items()) for p in by_columns] == [list(p.items()) for p in by_customers]
    assert not plain.degraded and not outcome.degraded
    expected = ranking.rank(
        parse_queue(persons),
        rr_levels=store.read_rr_levels([str(p["uid"]) for p in persons]),
        read_jump_lists=store.read_jump_lists,
    )
    assert plain.order.appended_jumps == expected.appended_jumps


# The permission: one query for a service account ----------------------------------------------


class _Request:
    def __init__(self, user):
        self.user = user


@pytest.fixture
def rank_queue_permission(db):
    return Permission.objects.get(content_type__app_label="queueing", codename="rank_queue")


def test_a_service_account_given_the_permission_costs_one_query(
    rank_queue_permission, django_assert_num_queries
):
    user = UserFactory(username="ranking-service-1")
    user.user_permissions.add(rank_queue_permission)
    with django_assert_num_queries(1):
        assert CanRankQueue().has_permission(_Request(user), None)


def test_the_permission_through_a_group_is_enough(rank_queue_permission):
    group = Group.objects.create(name="rankers")
    group.permissions.add(rank_queue_permission)
    user = UserFactory(username="ranking-service-2")
    user.groups.add(group)
    assert CanRankQueue().has_permission(_Request(user), None)


def test_an_inactive_user_given_the_permission_may_not_rank(rank_queue_permission):
    user = UserFactory(username="ranking-service-3", is_active=False)
    user.user_permissions.add(rank_queue_permission)
    assert not CanRankQueue().has_permission(_Request(user), None)


def test_a_user_without_the_permission_may_not_rank(db):
    assert not CanRankQueue().has_permission(_Request(UserFactory(username="someone")), None)


def test_only_lists_still_as_read_with_new_plain_uids_skip_the_merge():
    texts = {"absent": None, "plain": b'["a", "b"]', "spaced": b"[ ]", "numbers": b"[1]"}
    appended = {
        "absent": ["x", "y"],
        "plain": ["c"],
        "spaced": ["c"],  # not a plain list
        "numbers": ["c"],
        "unread": ["c"],
        "plain-again": ["a"],  # already in it
        "twice": ["c", "c"],
        "escaped": ["x/y"],
    }
    texts |= {"plain-again": b'["a"]', "twice": None, "escaped": None}
    keys, args, sent = store._append_arguments(appended, texts, "p:")
    assert keys == ["p:absent", "p:plain"] + [f"p:{uid}" for uid in list(appended)[2:]]
    assert args[1:3] == [1, 1]  # one list sent as absent, one as a plain text
    assert args[3:6] == ['["x","y"]', b'["a", "b"]', '["c"]']
    assert sent == 3
