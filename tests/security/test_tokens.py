"""API tokens: hashed, expiring, revocable one by one or all at once, revoked by a password
change; the token endpoint takes and documents JSON only."""

from datetime import timedelta

import pytest
import time_machine
from django.db import connection
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from knox.models import AuthToken
from rest_framework.test import APIClient

from accounts.auth import _token_query
from tests.factories import UserFactory

STRONG = "correct-horse-battery-staple-42"


@pytest.fixture
def alice(db):
    return UserFactory(username="alice", password=STRONG)


def login(client: APIClient, username="alice", password=STRONG):
    return client.post(
        "/api/auth/token/", {"username": username, "password": password}, format="json"
    )


def authed(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client


def test_login_returns_a_token_and_its_iso_expiry_and_stores_only_a_digest(alice, settings):
    before = timezone.now()
    response = login(APIClient())
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"token", "expiry"}
    expiry = parse_datetime(body["expiry"])
    assert expiry is not None and expiry.tzinfo is not None
    ttl = settings.REST_KNOX["TOKEN_TTL"]
    assert before + ttl <= expiry <= timezone.now() + ttl
    stored = AuthToken.objects.get(user=alice)
    assert body["token"] not in (stored.digest, stored.token_key)
    assert len(stored.digest) == 128  # sha512 hex digest, not the token
    assert authed(body["token"]).get("/api/tickets/").status_code == 200


def test_a_token_stops_working_when_it_expires(alice):
    token = login(APIClient()).json()["token"]
    with time_machine.travel(timezone.now() + timedelta(hours=9, minutes=59), tick=False):
        assert authed(token).get("/api/tickets/").status_code == 200
    with time_machine.travel(timezone.now() + timedelta(hours=10, minutes=1), tick=False):
        response = authed(token).get("/api/tickets/")
    assert response.status_code == 401
    assert response.json()["code"] == "not_authenticated"
    assert not AuthToken.objects.filter(user=alice).exists()


def test_token_ttl_comes_from_settings(alice, settings):
    settings.REST_KNOX = {**settings.REST_KNOX, "TOKEN_TTL": timedelta(hours=1)}
    token = login(APIClient()).json()["token"]
    with time_machine.travel(timezone.now() + timedelta(minutes=61), tick=False):
        assert authed(token).get("/api/tickets/").status_code == 401


def test_logout_revokes_only_the_presented_token(alice):
    first = login(APIClient()).json()["token"]
    second = login(APIClient()).json()["token"]
    assert authed(first).post("/api/auth/logout/").status_code == 204
    assert authed(first).get("/api/tickets/").status_code == 401
    assert authed(second).get("/api/tickets/").status_code == 200
    assert AuthToken.objects.filter(user=alice).count() == 1


def test_logout_all_revokes_every_token_of_the_user_and_no_one_elses(alice):
    bob = UserFactory(username="bob", password=STRONG)
    mine = [login(APIClient()).json()["token"] for _ in range(3)]
    bobs = login(APIClient(), "bob").json()["token"]
    assert authed(mine[0]).post("/api/auth/logout-all/").status_code == 204
    for token in mine:
        assert authed(token).get("/api/tickets/").status_code == 401
    assert authed(bobs).get("/api/tickets/").status_code == 200
    assert AuthToken.objects.filter(user=bob).count() == 1


def test_logout_without_a_token_is_a_401_and_revokes_nothing(alice):
    token = login(APIClient()).json()["token"]
    assert APIClient().post("/api/auth/logout/").status_code == 401
    assert APIClient().post("/api/auth/logout-all/").status_code == 401
    assert authed(token).get("/api/tickets/").status_code == 200


def test_a_password_change_through_the_page_revokes_every_token(alice, client):
    tokens = [login(APIClient()).json()["token"] for _ in range(2)]
    client.force_login(alice)
    new = "another-long-passphrase-77"
    response = client.post(
        "/accounts/password_change/",
        {"old_password": STRONG, "new_password1": new, "new_password2": new},
    )
    assert response.status_code == 302
    for token in tokens:
        assert authed(token).get("/api/tickets/").status_code == 401
    assert not AuthToken.objects.filter(user=alice).exists()
    assert login(APIClient(), password=new).status_code == 200


def test_a_password_change_anywhere_else_revokes_tokens_too(alice):
    token = login(APIClient()).json()["token"]
    alice.set_password("yet-another-passphrase-9")
    alice.save()
    assert authed(token).get("/api/tickets/").status_code == 401


def test_saving_a_user_without_changing_the_password_keeps_tokens(alice):
    token = login(APIClient()).json()["token"]
    alice.first_name = "Alice"
    alice.save()
    alice.save(update_fields=["last_login"])
    assert authed(token).get("/api/tickets/").status_code == 200


def test_a_wrong_password_is_a_400_naming_no_field_and_creates_no_token(alice):
    response = login(APIClient(), password="wrong")
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_argument"
    assert "non_field_errors" in response.json()["errors"]
    assert not AuthToken.objects.exists()


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("application/x-www-form-urlencoded", "username=alice&password=" + STRONG),
        ("multipart/form-data; boundary=xyz", "--xyz--"),
        ("text/plain", "alice"),
    ],
)
def test_the_token_endpoint_takes_json_only(alice, content_type, body):
    response = APIClient().generic("POST", "/api/auth/token/", body, content_type=content_type)
    assert response.status_code == 415
    assert response.json()["code"] == "unsupported_media_type"
    assert not AuthToken.objects.exists()


def test_the_schema_documents_json_only_for_the_token_endpoint(client):
    schema = client.get("/api/schema/?format=json").json()
    operation = schema["paths"]["/api/auth/token/"]["post"]
    assert list(operation["requestBody"]["content"]) == ["application/json"]
    assert operation.get("security") in (None, [], [{}])  # no credentials needed
    response_schema = operation["responses"]["200"]["content"]["application/json"]["schema"]
    ref = response_schema["$ref"].rsplit("/", 1)[-1]
    assert set(schema["components"]["schemas"][ref]["properties"]) == {"token", "expiry"}
    for path in ("/api/auth/logout/", "/api/auth/logout-all/"):
        assert "204" in schema["paths"][path]["post"]["responses"]


def test_no_plaintext_token_table_is_used(db):
    from django.apps import apps

    assert not apps.is_installed("rest_framework.authtoken")


def test_authenticating_a_token_costs_one_query_and_expired_ones_go_at_login(alice):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    old = login(APIClient()).json()["token"]
    AuthToken.objects.filter(user=alice).update(expiry=timezone.now() - timedelta(minutes=1))
    token = login(APIClient()).json()["token"]
    assert AuthToken.objects.filter(user=alice).count() == 1  # the expired one went at login
    assert authed(old).get("/api/tickets/").status_code == 401
    client = authed(token)
    with CaptureQueriesContext(connection) as queries:
        assert client.get("/api/auth/logout/").status_code == 405  # authenticates, does no work
    knox_queries = [q["sql"] for q in queries.captured_queries if "knox_authtoken" in q["sql"]]
    assert len(knox_queries) == 1


def test_a_token_is_looked_up_by_its_key_through_the_index(alice):
    """TOKEN_SQL runs on every API request: on a large token table it finds the key's rows
    through knox's token_key index (EXPLAIN, not timing)."""
    AuthToken.objects.bulk_create(
        [AuthToken(digest=f"{i:0128x}", token_key=f"{i:015x}", user=alice) for i in range(50_000)]
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE knox_authtoken")
        cursor.execute("EXPLAIN " + _token_query().sql, [f"{7:015x}"])
        found = "\n".join(row[0] for row in cursor.fetchall())
    assert "knox_authtoken_token_key" in found, found
    assert "Seq Scan on knox_authtoken" not in found, found
