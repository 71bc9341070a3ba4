"""Project-wide contracts: the OpenAPI schema, the demo data, the API root."""

import pytest
from django.core.management import call_command

pytestmark = pytest.mark.django_db


def test_schema_is_valid_and_documents_errors(client):
    response = client.get("/api/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    schema = response.json()
    approve = schema["paths"]["/api/tickets/{id}/approve/"]["post"]
    assert {"200", "403", "404", "409"} <= set(approve["responses"])
    submit = schema["paths"]["/api/tickets/"]["post"]
    assert "400" in submit["responses"]
    assert "/api/tickets/pool/" in schema["paths"]
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", "/dev/null")


def test_api_root_is_browsable(api, applicant):
    response = api.as_user(applicant).get("/api/")
    assert response.status_code == 200
    assert "tickets" in response.json()


def test_docs_page(client):
    assert client.get("/api/docs/").status_code == 200


def test_seed_demo_is_idempotent(capsys):
    from django.contrib.auth import get_user_model

    from handler_groups.models import HandlerGroup

    call_command("seed_demo")
    call_command("seed_demo")
    out = capsys.readouterr().out
    assert "approver" in out and "password" in out
    assert HandlerGroup.objects.count() == 2
    rr = HandlerGroup.objects.get(assign_strategy=1)
    ll = HandlerGroup.objects.get(assign_strategy=2)
    assert len(rr.member_ids) == 3 and len(ll.member_ids) == 2
    assert rr.leader and ll.leader
    assert get_user_model().objects.get(username="approver").has_perm("ticketing.approve_ticket")
    assert get_user_model().objects.filter(username__startswith="applicant").count() == 2


@pytest.mark.parametrize(
    "path",
    [
        "/api/tickets/abc/",
        "/api/tickets/1e3/",
        "/api/tickets/abc/approve/",
        "/api/notifications/x/read/",
        "/api/handler-groups/x/",
        "/api/nope/",
    ],
)
def test_non_numeric_ids_and_unknown_api_paths_are_json_404s(api, applicant, path):
    client = api.as_user(applicant)
    response = client.post(path) if path.endswith(("approve/", "read/")) else client.get(path)
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"


def test_bad_page_numbers_are_400(api, applicant):
    response = api.as_user(applicant).get("/api/tickets/?page=abc")
    assert response.status_code == 400
    assert "page" in response.json()["errors"]
    assert api.as_user(applicant).get("/api/tickets/?page=99").status_code == 404


@pytest.mark.parametrize("page", ["%E2%82%84", "%C2%B2", "0", "-1"])
def test_odd_page_numbers_are_400_not_500(api, applicant, page):
    response = api.as_user(applicant).get(f"/api/tickets/?page={page}")
    assert response.status_code == 400


@pytest.mark.parametrize(
    "query",
    ["to=0001-01-10", "to=0001-01-10T00:00:00Z", "from=0001-01-01&to=0001-01-02", "to=9999-12-31"],
)
def test_far_report_dates_are_not_500(api, staff, query):
    response = api.as_user(staff).get(f"/api/sla/report/?{query}")
    assert response.status_code in (200, 400)


def test_commit_subjects_are_checked_for_shape_and_length():
    from devserver import commits

    assert commits.problems([("a1", "routing: drain a group's pool")]) == []
    long = "routing: " + "x" * 70
    assert commits.problems([("b2", long)]) == [
        f"b2: subject is {len(long)} characters (at most 72)"
    ]
    assert commits.problems([("c3", "Fixed the pool drain")]) == [
        "c3: subject does not read `area: what changed`: 'Fixed the pool drain'"
    ]


def test_the_commits_since_the_rule_follow_it():
    from devserver import commits

    found = commits.subjects()
    assert found is None or commits.problems(found) == []
