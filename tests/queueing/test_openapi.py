"""The OpenAPI schema documents the endpoint truthfully."""

import json

import pytest
from drf_spectacular.generators import SchemaGenerator

from queueing.apis import _EXAMPLE_REQUEST, _EXAMPLE_RESPONSE

from .helpers import customer


@pytest.fixture(scope="module")
def operation():
    schema = SchemaGenerator().get_schema(request=None, public=True)
    return schema["paths"]["/api/queueing/rank/"]["post"]


def test_documents_request_and_response_examples(operation):
    request_examples = operation["requestBody"]["content"]["application/json"]["examples"]
    assert [e["value"] for e in request_examples.values()] == [_EXAMPLE_REQUEST]
    response_examples = operation["responses"]["200"]["content"]["application/json"]["examples"]
    assert [e["value"] for e in response_examples.values()] == [_EXAMPLE_RESPONSE]


def test_documents_errors_naming_index_and_field(operation):
    assert set(operation["responses"]) == {"200", "400", "401", "403"}
    examples = operation["responses"]["400"]["content"]["application/json"]["examples"]
    values = [e["value"] for e in examples.values()]
    assert {
        "code": "invalid_argument",
        "errors": {"queue": {"3": {"already_wait_time": ["Must be at least 0."]}}},
    } in values


def test_the_response_example_is_what_the_ranking_returns(queue_cache):
    """With the cache the example assumes: u-1001 at R7, u-1002 at R2."""
    from queueing import services
    from queueing.serializers import ranked_queue

    queue_cache.set_rr("u-1001", "R7")
    queue_cache.set_rr("u-1002", "R2")
    outcome = services.queue_rank(
        customers=[customer(p) for p in _EXAMPLE_REQUEST["queue"]], trace_id="example"
    )
    assert json.loads(json.dumps(ranked_queue(outcome.queue))) == _EXAMPLE_RESPONSE["queue"]
