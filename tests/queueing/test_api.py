"""POST /api/queueing/rank/ over HTTP (DRF test client), real PostgreSQL and Redis."""

import json
import logging

import pytest
from django.urls import reverse
from prometheus_client import REGISTRY

from tests.factories import UserFactory

from .helpers import person

URL = "/api/queueing/rank/"


def test_the_endpoint_is_named_queueing_rank():
    assert reverse("queueing-rank") == URL


@pytest.fixture
def client(api, ranker):
    return api.as_user(ranker)


def rank(client, body, **headers):
    return client.post(URL, data=json.dumps(body), content_type="application/json", **headers)


def test_ranks_the_queue_and_returns_every_field_with_the_results(client, queue_cache):
    queue_cache.set_rr("low", "R7")
    queue_cache.set_rr(42, "R2")
    queue_cache.set_rr("ssvip", "R3")
    queue = [
        person("low", already_wait_time=3600, is_online=1, channel="chat", meta={"a": [1, 2]}),
        person(42, already_wait_time=1800, is_complaint=1, confirm_num=2, be_jump=1),
        person("ssvip", already_wait_time=60, is_ssvip=True, be_jump=0, tags=None),
        person("idle", already_wait_time=9000, not_confirm_num=4),
    ]
    response = rank(client, {"queue": queue}, HTTP_X_REQUEST_ID="trace-abc")

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["trace_id"] == "trace-abc"
    assert body["degraded"] is False
    ranked = body["queue"]
    # Rough order: low 1.3, 42 0.8, ssvip 0.0166, idle 0 (4 unconfirmed). 42 (rr 2) jumps
    # low (rr 7); ssvip (rr 3) jumps low too, then moves ahead of 42 (same group).
    assert [p["uid"] for p in ranked] == ["ssvip", 42, "low", "idle"]
    assert [p["rank"] for p in ranked] == [1, 2, 3, 4]
    by_uid = {p["uid"]: p for p in ranked}
    assert by_uid["low"] == {
        **queue[0],
        "rough_sort_score": 1.0 + 0.3,
        "rr": 7,
        "user_group": 1,
        "be_jump": 2,
        "rank": 3,
    }
    assert by_uid[42]["rough_sort_score"] == 0.5 + 0.3 + 2 * 0.1
    assert (by_uid[42]["rr"], by_uid[42]["user_group"], by_uid[42]["be_jump"]) == (2, 2, 1)
    assert by_uid["ssvip"]["tags"] is None
    assert by_uid["ssvip"]["is_ssvip"] is True
    assert by_uid["idle"]["rough_sort_score"] == 0
    assert (by_uid["idle"]["rr"], by_uid["idle"]["user_group"]) == (9, 1)
    assert sorted(queue_cache.jumps("low")) == ["42", "ssvip"]


def test_a_second_identical_request_does_not_count_the_same_jumps_again(client, queue_cache):
    queue_cache.set_rr("low", "R7")
    queue_cache.set_rr("vip", "R1")
    body = {"queue": [person("low", already_wait_time=60), person("vip")]}
    first = rank(client, body).json()["queue"]
    second = rank(client, body).json()["queue"]
    assert [(p["uid"], p["be_jump"]) for p in first] == [("vip", 0), ("low", 1)]
    assert [(p["uid"], p["be_jump"]) for p in second] == [("vip", 0), ("low", 0)]
    assert queue_cache.jumps("low") == ["vip"]


def test_an_empty_queue_is_ranked(client, queue_cache):
    response = rank(client, {"queue": []})
    assert response.status_code == 200
    assert response.json()["queue"] == []


def test_a_trace_id_is_generated_without_x_request_id(client, queue_cache):
    response = rank(client, {"queue": [person("a")]})
    assert response.status_code == 200
    trace_id = response.json()["trace_id"]
    assert trace_id
    assert response["X-Request-ID"] == trace_id


def test_logs_the_input_summary_and_the_result(client, queue_cache, caplog):
    with caplog.at_level(logging.INFO, logger="queueing"):
        rank(client, {"queue": [person("a"), person("b", is_ssvip=1)]}, HTTP_X_REQUEST_ID="t-42")
    lines = {r.getMessage(): r for r in caplog.records if r.name.startswith("queueing")}
    request_line = lines["queueing rank request"]
    assert (request_line.trace_id, request_line.persons, request_line.ssvip) == ("t-42", 2, 1)
    result_line = lines["queueing rank result"]
    assert (result_line.trace_id, result_line.persons, result_line.degraded) == ("t-42", 2, False)
    assert result_line.first_uids == ["b", "a"]  # the SSVIP first


def test_records_the_ranking_latency(client, queue_cache):
    before = REGISTRY.get_sample_value("queueing_rank_duration_seconds_count") or 0
    rank(client, {"queue": [person("a")]})
    assert REGISTRY.get_sample_value("queueing_rank_duration_seconds_count") == before + 1


# Degraded mode ---------------------------------------------------------------------------------


def test_ranks_without_redis_and_says_so(client, settings, closed_redis_url, caplog):
    settings.QUEUEING_REDIS_URL = closed_redis_url
    before = REGISTRY.get_sample_value("queueing_rank_degraded_total") or 0
    queue = [
        person("a", already_wait_time=60),
        person("b", already_wait_time=120),
        person("c", is_ssvip=1),
    ]
    with caplog.at_level(logging.INFO, logger="queueing"):
        response = rank(client, {"queue": queue}, HTTP_X_REQUEST_ID="down-1")

    assert response.status_code == 200
    body = response.json()
    assert body["degraded"] is True
    assert [p["uid"] for p in body["queue"]] == ["c", "b", "a"]  # SSVIP still moves ahead
    assert {(p["rr"], p["user_group"], p["be_jump"]) for p in body["queue"]} == {(9, 1, 0)}
    assert REGISTRY.get_sample_value("queueing_rank_degraded_total") == before + 1
    warning = next(r for r in caplog.records if r.getMessage().startswith("queueing rank degraded"))
    assert warning.levelno == logging.WARNING
    assert warning.trace_id == "down-1"
    assert "ConnectionError" in warning.error


def test_a_healthy_redis_is_not_degraded(client, queue_cache):
    before = REGISTRY.get_sample_value("queueing_rank_degraded_total") or 0
    assert rank(client, {"queue": [person("a")]}).json()["degraded"] is False
    assert (REGISTRY.get_sample_value("queueing_rank_degraded_total") or 0) == before


# Access ----------------------------------------------------------------------------------------


def test_unauthenticated_is_401(api, db):
    response = rank(api, {"queue": [person("a")]})
    assert response.status_code == 401
    assert response.json()["code"] == "not_authenticated"


def test_a_user_without_the_permission_is_403(api, db):
    response = rank(api.as_user(UserFactory()), {"queue": [person("a")]})
    assert response.status_code == 403
    assert response.json()["code"] == "permission_denied"


def test_staff_may_rank(api, staff, queue_cache):
    assert rank(api.as_user(staff), {"queue": [person("a")]}).status_code == 200


def test_a_user_given_the_permission_may_rank(client, queue_cache):
    assert rank(client, {"queue": [person("a")]}).status_code == 200


# Bad input -------------------------------------------------------------------------------------


def field_error(index: int, field: str, value):
    """A queue of 4 valid persons whose person `index` has `field` set to `value` (or removed,
    for value MISSING)."""
    queue = [person(f"p{k}") for k in range(4)]
    if value is MISSING:
        del queue[index][field]
    else:
        queue[index][field] = value
    return queue


MISSING = object()

BAD_FIELDS = [
    ("uid", MISSING),
    ("uid", None),
    ("uid", ""),
    ("uid", 1.5),
    ("uid", True),
    ("uid", ["a"]),
    ("uid", "x" * 257),
    ("uid", 2**70),
    ("already_wait_time", MISSING),
    ("already_wait_time", -1),
    ("already_wait_time", -0.001),
    ("already_wait_time", "60"),
    ("already_wait_time", None),
    ("already_wait_time", True),
    ("already_wait_time", 10**400),
    ("already_wait_time", 1e300),
    ("is_online", MISSING),
    ("is_online", 2),
    ("is_online", -1),
    ("is_online", "1"),
    ("is_online", True),
    ("is_online", 1.0),
    ("is_complaint", MISSING),
    ("is_complaint", 3),
    ("confirm_num", MISSING),
    ("confirm_num", -1),
    ("confirm_num", 1.5),
    ("confirm_num", 2.0),
    ("confirm_num", "2"),
    ("confirm_num", 10**30),
    ("not_confirm_num", MISSING),
    ("not_confirm_num", -4),
    ("not_confirm_num", {}),
    ("is_ssvip", 2),
    ("is_ssvip", "yes"),
    ("is_ssvip", None),
    ("be_jump", -1),
    ("be_jump", 0.5),
    ("be_jump", None),
]


@pytest.mark.parametrize(("field", "value"), BAD_FIELDS)
def test_a_bad_field_is_400_naming_index_and_field(client, queue_cache, field, value):
    response = rank(client, {"queue": field_error(2, field, value)})
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["code"] == "invalid_argument"
    assert list(body["errors"]) == ["queue"]
    assert list(body["errors"]["queue"]) == ["2"]
    assert list(body["errors"]["queue"]["2"]) == [field]
    messages = body["errors"]["queue"]["2"][field]
    assert messages
    assert all(isinstance(message, str) and message for message in messages)


@pytest.mark.parametrize(("is_ssvip", "be_jump"), [(0, 0), (1, 3), (True, 15), (False, 99)])
def test_optional_fields_accept_their_forms(client, queue_cache, is_ssvip, be_jump):
    queue = [person("a", is_ssvip=is_ssvip, be_jump=be_jump), person("b")]
    assert rank(client, {"queue": queue}).status_code == 200


def test_every_bad_person_is_named(client, queue_cache):
    queue = [person("a"), "not an object", person("c", confirm_num=-1, is_online=5), person("d")]
    response = rank(client, {"queue": queue})
    assert response.status_code == 400
    errors = response.json()["errors"]["queue"]
    assert set(errors) == {"1", "2"}
    assert list(errors["1"]) == ["non_field_errors"]
    assert set(errors["2"]) == {"confirm_num", "is_online"}


@pytest.mark.parametrize("second_uid", ["a", 7, "7"])
def test_a_duplicate_uid_is_400_at_its_second_index(client, queue_cache, second_uid):
    first_uid = "a" if second_uid == "a" else 7
    queue = [person(first_uid), person("b"), person(second_uid)]
    response = rank(client, {"queue": queue})
    assert response.status_code == 400
    assert response.json()["errors"] == {
        "queue": {"2": {"uid": ["Duplicate uid: also at index 0."]}}
    }


def test_more_persons_than_the_maximum_is_400(client, settings, queue_cache):
    settings.QUEUEING_MAX_PERSONS = 3
    assert rank(client, {"queue": [person(k) for k in range(3)]}).status_code == 200
    response = rank(client, {"queue": [person(k) for k in range(4)]})
    assert response.status_code == 400
    assert response.json()["errors"] == {"queue": ["At most 3 persons per request; got 4."]}


def test_the_default_maximum_is_20000_persons(client, settings, queue_cache):
    assert settings.QUEUEING_MAX_PERSONS == 20_000
    response = rank(client, {"queue": [person(k) for k in range(20_001)]})
    assert response.status_code == 400
    assert "At most 20000 persons" in response.json()["errors"]["queue"][0]


@pytest.mark.parametrize(
    ("body", "errors"),
    [
        ({}, {"queue": ["This field is required."]}),
        ({"queue": None}, {"queue": ["This field may not be null."]}),
        ({"queue": "a"}, {"queue": ['Expected a list of persons but got "str".']}),
        ({"queue": {"0": {}}}, {"queue": ['Expected a list of persons but got "dict".']}),
        (
            [person("a")],
            {"non_field_errors": ["Invalid data. Expected a dictionary, but got list."]},
        ),
    ],
)
def test_a_body_of_the_wrong_shape_is_400(client, queue_cache, body, errors):
    response = rank(client, body)
    assert response.status_code == 400
    assert response.json() == {"code": "invalid_argument", "errors": errors}


@pytest.mark.parametrize(
    ("raw", "named"),
    [
        ("not json", "body"),
        ('{"queue": [', "body"),
        ('{"queue": [{"uid": "a", "already_wait_time": NaN}]}', "body"),
        ('{"queue": [{"uid": "a", "already_wait_time": Infinity}]}', "body"),
        ("", "queue"),
    ],
)
def test_a_body_that_is_not_json_is_400(client, queue_cache, raw, named):
    response = client.post(URL, data=raw, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_argument"
    assert list(response.json()["errors"]) == [named]


def test_a_uid_that_cannot_name_a_redis_key_is_400(client, queue_cache):
    raw = json.dumps({"queue": [person("a"), person("b")]}).replace('"b"', '"\\ud800"')
    response = client.post(URL, data=raw, content_type="application/json")
    assert response.status_code == 400
    assert list(response.json()["errors"]["queue"]["1"]) == ["uid"]


def test_any_text_in_the_callers_fields_comes_back(client, queue_cache):
    raw = json.dumps({"queue": [person("a", note="X", name="Zoë ✓")]}).replace('"X"', '"\\udc80"')
    response = client.post(URL, data=raw, content_type="application/json")
    assert response.status_code == 200
    returned = response.json()["queue"][0]
    assert returned["note"] == "\udc80"
    assert returned["name"] == "Zoë ✓"


def test_an_integer_beyond_64_bits_in_the_callers_fields_comes_back(client, queue_cache):
    """orjson reads and writes 64-bit integers only: the standard parser and renderer take it."""
    response = rank(client, {"queue": [person("a", ticket=2**70), person("b")]})
    assert response.status_code == 200
    assert [p.get("ticket") for p in response.json()["queue"]] == [2**70, None]


def test_when_the_append_fails_the_response_is_the_degraded_ranking(
    client, queue_cache, monkeypatch
):
    """The persons were written (and their objects freed) while Redis appended; written again
    from scratch, degraded, they come back whole."""
    from queueing import store

    queue_cache.set_rr("low", "R7")
    queue_cache.set_rr("vip", "R1")
    queue = [
        person("low", already_wait_time=60, channel="chat", meta={"a": [1, 2.5]}),
        person("vip", be_jump=3, tags=None),
        person("vip2", is_ssvip=True, note="é ✓"),
    ]

    def fail(self):
        raise store.Unavailable("ConnectionError: gone")

    monkeypatch.setattr(store.PendingAppend, "result", fail)
    response = rank(client, {"queue": queue})
    assert response.status_code == 200
    body = response.json()
    assert body["degraded"] is True
    assert [p["uid"] for p in body["queue"]] == ["vip2", "low", "vip"]  # rr 9 for everyone
    for place, returned in enumerate(body["queue"], start=1):
        sent = next(p for p in queue if p["uid"] == returned["uid"])
        assert returned == {
            **sent,
            "rough_sort_score": returned["rough_sort_score"],
            "rr": 9,
            "user_group": 1,
            "be_jump": sent.get("be_jump", 0),
            "rank": place,
        }
    assert list(body["queue"][1]) == [*queue[0], "rough_sort_score", "rr", "user_group"] + [
        "be_jump",
        "rank",
    ]


def nested(depth: int) -> str:
    """A list `depth` levels deep ([] is one level), as JSON (json.dumps would recurse)."""
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("depth", [65, 900, 1000, 1020])
def test_a_queue_nested_past_the_limit_is_a_400_naming_it_and_ranks_nothing(
    client, queue_cache, depth
):
    """A caller's own field comes back unchanged: at about a thousand levels its echo was
    Python's RecursionError, a 500, after the ranking had stored its jumps. The body, the
    queue and the person are three levels, the field the rest."""
    queue_cache.set_rr("low", "R7")
    queue_cache.set_rr("vip", "R1")
    before = queue_cache.snapshot()
    body = {"queue": [person("low", meta="META"), person("vip")]}
    text = json.dumps(body).replace('"META"', nested(depth - 3))
    response = client.post(URL, data=text, content_type="application/json")
    assert response.status_code == 400
    assert response.json() == {
        "code": "invalid_argument",
        "errors": {"body": ["JSON nested too deeply: at most 64 levels."]},
    }
    assert queue_cache.snapshot() == before  # no jump recorded


def test_a_queue_nested_to_the_limit_is_ranked_and_echoed(client, queue_cache):
    queue_cache.set_rr("low", "R7")
    queue_cache.set_rr("vip", "R1")
    body = {"queue": [person("low", meta="META1"), person("vip", meta={"a": "META2"})]}
    text = json.dumps(body).replace('"META1"', nested(61)).replace('"META2"', nested(60))
    response = client.post(URL, data=text, content_type="application/json")
    assert response.status_code == 200, response.content[:300]
    ranked = response.json()["queue"]
    assert [(p["uid"], p["be_jump"]) for p in ranked] == [("vip", 0), ("low", 1)]
    assert json.dumps(ranked[1]["meta"], separators=(",", ":")) == nested(61)
    assert json.dumps(ranked[0]["meta"]["a"], separators=(",", ":")) == nested(60)
    assert queue_cache.jumps("low") == ["vip"]
