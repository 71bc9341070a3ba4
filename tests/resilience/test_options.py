"""OPTIONS on every API route, in every format, by every kind of caller: never a 500."""

import re

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from tests.factories import StaffFactory, UserFactory


def _routes(patterns, prefix: str = "") -> list[str]:
    found: list[str] = []
    for entry in patterns:
        route = prefix + str(entry.pattern).lstrip("^").rstrip("$")
        if isinstance(entry, URLResolver):
            found += _routes(entry.url_patterns, route)
        elif isinstance(entry, URLPattern):
            found.append(route)
    return found


def _api_routes(pk: int = 1) -> list[str]:
    """Every route under /api/ as a path, its parameters filled (ids `pk`, other text 'x')."""
    paths = set()
    for route in _routes(get_resolver().url_patterns):
        if not route.startswith("api/") or "format" in route:
            continue  # the .json suffix twins of the routes kept
        route = re.sub(r"<int:\w+>|\(\?P<\w+>\[0-9\][^)]*\)", str(pk), route)
        route = re.sub(r"<(?:str:|slug:)?\w+>|\(\?P<\w+>[^)]*\)", "x", route)
        paths.add("/" + route)
    return sorted(paths)


def test_the_walk_finds_the_routes_it_names():
    routes = _api_routes()
    assert "/api/sla/report/" in routes
    assert "/api/tickets/1/replies/" in routes
    assert len(routes) > 30


@pytest.mark.django_db
@pytest.mark.parametrize("who", ["anonymous", "applicant", "staff"])
def test_options_is_never_a_server_error_on_any_api_route(api, who, submit):
    ticket = submit()  # the ids in the routes are the ticket's
    if who != "anonymous":
        api.as_user(StaffFactory() if who == "staff" else UserFactory())
    api.raise_request_exception = False
    answered = {}
    for route in _api_routes(ticket.pk):
        for query in ("", "?format=csv", "?format=json"):
            response = api.options(route + query)
            answered[route + query] = response.status_code
    failures = {route: code for route, code in answered.items() if code >= 500}
    assert failures == {}


@pytest.mark.django_db
def test_options_on_the_csv_report_describes_the_view_in_json(api):
    response = api.as_user(StaffFactory()).options("/api/sla/report/?format=csv")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["name"]
