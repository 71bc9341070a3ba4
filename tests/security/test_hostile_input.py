"""Hostile input is a 4xx in the error shape, cheaply and without a traceback in the log:
deep nesting, oversized bodies, odd ids — with DEBUG on or off."""

import io
import json
import logging
import time

import pytest
from rest_framework.exceptions import ParseError
from rest_framework.test import APIClient

from config.limits import PayloadTooLarge
from config.parsers import SafeJSONParser
from tests.factories import StaffFactory, UserFactory

DEEP = b"[" * 5000 + b"]" * 5000


@pytest.fixture
def staff_api(db):
    client = APIClient()
    client.force_authenticate(StaffFactory())
    return client


def assert_no_error_logged(caplog):
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == [], [r.getMessage() for r in errors]
    assert not any(r.exc_info for r in caplog.records)


@pytest.mark.parametrize(
    "path", ["/api/auth/token/", "/api/tickets/", "/api/queueing/rank/", "/api/handler-groups/"]
)
def test_deeply_nested_json_is_a_cheap_400_without_a_traceback(staff_api, caplog, path):
    caplog.set_level(logging.INFO)
    client = staff_api if path != "/api/auth/token/" else APIClient()
    started = time.perf_counter()
    response = client.generic("POST", path, DEEP, content_type="application/json")
    elapsed = time.perf_counter() - started
    assert response.status_code == 400
    assert response.json() == {
        "code": "invalid_argument",
        "errors": {"body": ["JSON nested too deeply: at most 64 levels."]},
    }
    assert elapsed < 1.0  # orjson stops at depth 1,024 in microseconds; generous bound
    assert_no_error_logged(caplog)


def test_deep_nesting_behind_a_value_orjson_refuses_is_still_a_400():
    """A lone surrogate sends the body to the standard parser; nesting there is caught too."""
    body = b'["\\udc00", ' + b"[" * 5000 + b"]" * 5000 + b"]"
    with pytest.raises(ParseError, match="nested too deeply"):
        SafeJSONParser().parse(io.BytesIO(body), parser_context={})


def nested(depth: int) -> str:
    """A list `depth` levels deep ([] is one level), as JSON (json.dumps would recurse)."""
    return "[" * depth + "]" * depth


def ticket_body(**json_fields: str) -> str:
    """A ticket's body with these fields added, their values given as JSON text."""
    body = {"title": "Printer on fire", "content": "It is.", "priority": 2}
    fields = "".join(f', "{name}": {text}' for name, text in json_fields.items())
    return json.dumps(body)[:-1] + fields + "}"


@pytest.mark.parametrize("depth", [65, 900, 1000, 1020])
@pytest.mark.parametrize("field", ["title", "extra"])
def test_a_ticket_nested_past_the_limit_is_a_400_naming_it_and_creates_nothing(
    staff_api, caplog, settings, depth, field
):
    """Below orjson's own 1,024 the body used to reach the view: DRF's CharField took str() of
    the nested title, a RecursionError (a 500). The body is one level, the field the rest."""
    from ticketing.models import TicketRecord

    caplog.set_level(logging.INFO)
    assert settings.API_MAX_JSON_DEPTH == 64
    body = ticket_body(**{field: nested(depth - 1)})
    response = staff_api.generic("POST", "/api/tickets/", body, content_type="application/json")
    assert response.status_code == 400
    assert response.json() == {
        "code": "invalid_argument",
        "errors": {"body": ["JSON nested too deeply: at most 64 levels."]},
    }
    assert not TicketRecord.objects.exists()
    assert_no_error_logged(caplog)


def test_a_ticket_nested_to_the_limit_is_created(staff_api):
    from ticketing.models import TicketRecord

    body = ticket_body(extra=nested(63), more='{"a": {"b": ' + nested(61) + "}}")
    response = staff_api.generic("POST", "/api/tickets/", body, content_type="application/json")
    assert response.status_code == 201, response.content[:300]
    assert TicketRecord.objects.count() == 1


def test_the_nesting_limit_is_a_setting_and_named_in_chinese(staff_api, settings):
    settings.API_MAX_JSON_DEPTH = 5
    ok = staff_api.generic(
        "POST", "/api/tickets/", ticket_body(extra=nested(4)), content_type="application/json"
    )
    assert ok.status_code == 201
    refused = staff_api.generic(
        "POST",
        "/api/tickets/",
        ticket_body(extra=nested(5)),
        content_type="application/json",
        HTTP_ACCEPT_LANGUAGE="zh-hans",
    )
    assert refused.status_code == 400
    assert refused.json()["errors"] == {"body": ["JSON 嵌套层级过深：最多 5 层。"]}


@pytest.mark.parametrize(
    ("text", "depth"),
    [
        (b"1", 0),
        (b"[]", 1),
        (b"{}", 1),
        (b'{"a": [1, {"b": "[[[["}], "c": 2}', 3),
        (b'[[1], [[2]], {"x": [[[[]]]]}]', 6),
        (b'{"queue": [{"uid": 1, "t": {"u": [1]}}, {"uid": 2}], "n": null}', 5),
    ],
)
def test_nesting_is_counted_level_by_level(text, depth):
    import orjson

    from config.parsers import nesting_exceeds

    value = orjson.loads(text)
    brackets = text.count(b"[") + text.count(b"{")
    for bound in (None, brackets):
        assert not nesting_exceeds(value, depth, containers_at_most=bound)
        assert depth == 0 or nesting_exceeds(value, depth - 1, containers_at_most=bound)


def test_brackets_inside_strings_neither_hide_nor_fake_nesting():
    """The parser bounds the walk by the body's bracket bytes; brackets in strings only make
    that bound larger, never a shallow body deep or a deep one shallow."""
    import orjson

    from config.parsers import nesting_exceeds

    shallow = b'{"a": "' + b"[" * 200 + b'", "b": ["]]]]"]}'
    deep = b'{"a": "]]]]]]", "b": ' + b"[" * 65 + b"]" * 65 + b"}"
    for text, exceeds in ((shallow, False), (deep, True)):
        brackets = text.count(b"[") + text.count(b"{")
        assert nesting_exceeds(orjson.loads(text), 64, containers_at_most=brackets) is exceeds


def test_a_body_over_the_api_limit_is_a_413_in_the_error_shape(staff_api, settings):
    settings.API_MAX_BODY_BYTES = 10_000
    body = json.dumps({"title": "x", "content": "y" * 20_000, "priority": 2})
    response = staff_api.generic("POST", "/api/tickets/", body, content_type="application/json")
    assert response.status_code == 413
    assert response.json()["code"] == "payload_too_large"
    assert "10000 bytes" in response.json()["detail"]


def test_the_default_api_limit_refuses_a_two_megabyte_ticket(staff_api):
    body = json.dumps({"title": "x", "content": "y" * 2_000_000, "priority": 2})
    response = staff_api.generic("POST", "/api/tickets/", body, content_type="application/json")
    assert response.status_code == 413
    assert response.json()["code"] == "payload_too_large"


def test_a_body_without_a_declared_length_is_capped_while_read(settings):
    settings.API_MAX_BODY_BYTES = 100

    class Request:
        path = "/api/tickets/"

    with pytest.raises(PayloadTooLarge):
        SafeJSONParser().parse(
            io.BytesIO(b'"' + b"a" * 200 + b'"'), parser_context={"request": Request()}
        )


def test_the_largest_documented_queue_fits_as_ordinary_json(db, settings):
    """QUEUEING_MAX_PERSONS persons, indented as a person would write them, every field set:
    under the ranking endpoint's own limit (and over the general API limit and the pages'),
    ranked; one more is the ranking's own 400."""
    person = {
        "uid": "customer-000000000000",
        "already_wait_time": 1800.5,
        "is_online": 1,
        "is_complaint": 0,
        "confirm_num": 1,
        "not_confirm_num": 0,
        "is_ssvip": 0,
        "be_jump": 0,
        "channel": "chat",
    }
    queue = {
        "queue": [
            {**person, "uid": f"customer-{i:012d}"} for i in range(settings.QUEUEING_MAX_PERSONS)
        ]
    }
    body = json.dumps(queue, indent=4)
    assert settings.DATA_UPLOAD_MAX_MEMORY_SIZE < len(body.encode())
    assert settings.API_MAX_BODY_BYTES < len(body.encode()) < settings.QUEUEING_MAX_BODY_BYTES
    client = APIClient()
    client.force_authenticate(StaffFactory())
    # Over the pages' limit (Django's DATA_UPLOAD_MAX_MEMORY_SIZE), within the endpoint's.
    response = client.generic("POST", "/api/queueing/rank/", body, content_type="application/json")
    assert response.status_code == 200, response.content[:300]
    assert len(response.json()["queue"]) == settings.QUEUEING_MAX_PERSONS
    # One person more: the ranking's own 400 naming the limit, in the error shape.
    queue["queue"].append({**person, "uid": "one-too-many"})
    response = client.generic(
        "POST", "/api/queueing/rank/", json.dumps(queue, indent=4), content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_argument"


def test_a_ranking_request_over_its_limit_is_a_413(db, settings):
    settings.QUEUEING_MAX_BODY_BYTES = 1000
    client = APIClient()
    client.force_authenticate(StaffFactory())
    body = json.dumps({"queue": [{"uid": f"u{i}"} for i in range(200)]})
    response = client.generic("POST", "/api/queueing/rank/", body, content_type="application/json")
    assert response.status_code == 413
    assert response.json()["code"] == "payload_too_large"


@pytest.mark.parametrize("debug", [True, False])
@pytest.mark.parametrize(
    "path",
    [
        "/api/handler-groups/%C2%84/",
        "/api/tickets/abc/",
        "/api/tickets/1x/replies/",
        "/api/no-such-thing/",
        "/api/tickets/%00/",
    ],
)
def test_api_404s_are_json_in_every_mode(db, settings, debug, path):
    settings.DEBUG = debug
    client = APIClient()
    client.force_authenticate(UserFactory())
    response = client.get(path)
    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["code"] == "not_found"
    response = client.post(path, {}, format="json")
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"
