"""The OpenAPI schema is exact enough to generate a client from: ids are integers, each
operation lists only the parameters it honours and has its own summary, pages start at 1."""

from collections import Counter

import pytest
from django.urls.converters import IntConverter
from drf_spectacular.generators import SchemaGenerator

from config.pagination import Pagination
from config.urls import router

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def schema():
    return SchemaGenerator().get_schema(request=None, public=True)


def _operations(schema):
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            yield path, method, operation


def test_every_path_id_is_an_integer(schema):
    ids = [
        (path, method, parameter["schema"])
        for path, method, operation in _operations(schema)
        for parameter in operation.get("parameters", [])
        # (a tag is its name, not an id: DELETE /api/tickets/{id}/tags/{tag}/)
        if parameter["in"] == "path" and parameter["name"] != "tag"
    ]
    assert len(ids) >= 18  # a ticket and its actions, a handler group, a notification
    assert {(path, method): s for path, method, s in ids if s != {"type": "integer"}} == {}
    assert all("{id}" in path for path, _, _ in ids)


def test_every_registered_viewset_routes_ids_through_the_int_converter():
    """A viewset registered without `lookup_value_converter = "int"` would route any text as
    its id (DRF's default converter) into views that expect a number."""
    converters = {
        name: type(converter)
        for pattern in router.urls
        for name, converter in getattr(pattern.pattern, "converters", {}).items()
        if name != "format"
    }
    assert converters == {"pk": IntConverter}
    for prefix, viewset, _ in router.registry:
        if any(action.detail for action in viewset.get_extra_actions()) or hasattr(
            viewset, "retrieve"
        ):
            assert viewset.lookup_value_converter == "int", prefix


def test_no_format_suffix_twins_are_documented(schema):
    assert [path for path in schema["paths"] if "{format}" in path] == []


@pytest.mark.parametrize("path", ["/api/tickets/{id}/replies/", "/api/tickets/{id}/records/"])
def test_a_tickets_replies_and_records_list_only_the_ticket_id(schema, path):
    parameters = schema["paths"][path]["get"]["parameters"]
    assert [(p["name"], p["in"], p["schema"]) for p in parameters] == [
        ("id", "path", {"type": "integer"})
    ]


def test_every_operation_has_its_own_summary(schema):
    summaries = {
        (method.upper(), path): (operation.get("summary") or "").strip()
        for path, method, operation in _operations(schema)
    }
    assert [key for key, summary in summaries.items() if not summary] == []
    repeated = [s for s, n in Counter(summaries.values()).items() if n > 1]
    assert repeated == []
    # One line each; the longer story stays in the description.
    assert [s for s in summaries.values() if "\n" in s or len(s) > 80] == []


def test_action_docstrings_stay_as_descriptions(schema):
    pause = schema["paths"]["/api/tickets/{id}/pause/"]["post"]
    assert pause["summary"] == "Pause the resolve clock: waiting on the applicant"
    assert pause["description"].startswith("Waiting on applicant")


def test_pages_start_at_1_and_page_sizes_are_bounded(schema):
    paged = {
        path: {p["name"]: p["schema"] for p in operation["parameters"]}
        for path, method, operation in _operations(schema)
        if any(p["name"] == "page" for p in operation.get("parameters", []))
    }
    assert {
        "/api/tickets/",
        "/api/tickets/pool/",
        "/api/tickets/awaiting-approval/",
        "/api/handler-groups/",
        "/api/notifications/",
    } <= set(paged)
    for path, parameters in paged.items():
        assert parameters["page"] == {"type": "integer", "minimum": 1}, path
        assert parameters["page_size"] == {
            "type": "integer",
            "minimum": 1,
            "maximum": Pagination.max_page_size,
        }, path


def test_the_served_schema_is_the_one_tested(client):
    served = client.get("/api/schema/?format=json").json()
    approve = served["paths"]["/api/tickets/{id}/approve/"]["post"]
    assert approve["summary"] == "Approve a submitted ticket"
    assert approve["parameters"][0]["schema"] == {"type": "integer"}


@pytest.mark.parametrize(
    "path",
    [
        "/api/tickets/99999999999999999999999/",
        "/api/tickets/99999999999999999999999/replies/",
        "/api/handler-groups/99999999999999999999999/",
        "/api/notifications/99999999999999999999999/",
        "/api/tickets/%EF%BC%91/",  # a fullwidth digit one: a digit, but not 0-9
        "/api/tickets/-1/",
    ],
)
def test_ids_out_of_range_or_outside_0_to_9_are_json_404s(api, applicant, path):
    response = api.as_user(applicant).get(path)
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"
