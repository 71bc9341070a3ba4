"""Who may rank a queue, decided on every request from the database: the token (a revoked one
is refused at once), its person's permission (their own or a group's; taken away, refused at
once), staff and superusers; a browser session only with its CSRF token. The permission comes
with the token's own query (accounts/auth.py)."""

import json

import pytest
from django.contrib.auth.models import Group, Permission
from django.db import connection
from django.test.utils import CaptureQueriesContext
from knox.crypto import hash_token
from knox.models import AuthToken
from rest_framework.test import APIClient

from tests.factories import UserFactory

from .helpers import person

URL = "/api/queueing/rank/"


def rank_permission() -> Permission:
    return Permission.objects.get(content_type__app_label="queueing", codename="rank_queue")


def token_client(user) -> tuple[APIClient, str]:
    token = AuthToken.objects.create(user=user)[1]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client, token


def rank(client, queue=None):
    body = {"queue": queue if queue is not None else [person("a")]}
    return client.post(URL, data=json.dumps(body), content_type="application/json")


@pytest.fixture
def jumpy_queue(queue_cache):
    """A queue whose ranking appends a jump (low is passed by vip), and the cache before it."""
    queue_cache.set_rr("low", "R7")
    queue_cache.set_rr("vip", "R1")
    queue_cache.set_jumps("low", ["someone"])
    return [person("low", already_wait_time=600), person("vip")], queue_cache


def test_a_user_without_the_permission_is_403_and_nothing_changes(db, jumpy_queue):
    queue, cache = jumpy_queue
    before = cache.snapshot()
    client, _ = token_client(UserFactory())
    response = rank(client, queue)
    assert response.status_code == 403
    assert response.json()["code"] == "permission_denied"
    assert cache.snapshot() == before
    # The same queue, ranked by someone allowed, does append (so the 403 above changed nothing).
    allowed = UserFactory()
    allowed.user_permissions.add(rank_permission())
    assert rank(token_client(allowed)[0], queue).status_code == 200
    assert cache.jumps("low") == ["someone", "vip"]


def test_the_permission_through_a_group_is_enough(db, queue_cache):
    group = Group.objects.create(name="ranking services")
    group.permissions.add(rank_permission())
    user = UserFactory()
    user.groups.add(group)
    assert rank(token_client(user)[0]).status_code == 200


def test_a_superuser_may_rank(db, queue_cache):
    user = UserFactory(is_superuser=True)
    assert rank(token_client(user)[0]).status_code == 200


@pytest.mark.parametrize("through_group", [False, True])
def test_a_permission_taken_away_is_refused_at_once(db, queue_cache, through_group):
    user = UserFactory()
    if through_group:
        group = Group.objects.create(name="ranking services")
        group.permissions.add(rank_permission())
        user.groups.add(group)
    else:
        user.user_permissions.add(rank_permission())
    client, _ = token_client(user)
    assert rank(client).status_code == 200
    if through_group:
        user.groups.clear()
    else:
        user.user_permissions.clear()
    assert rank(client).status_code == 403


def test_a_revoked_token_is_refused_at_once(db, ranker, queue_cache):
    client, token = token_client(ranker)
    assert rank(client).status_code == 200
    AuthToken.objects.filter(digest=hash_token(token)).delete()  # as logout does
    response = rank(client)
    assert response.status_code == 401
    assert response.json()["code"] == "not_authenticated"


def test_a_deactivated_account_is_refused_at_once(db, ranker, queue_cache):
    client, _ = token_client(ranker)
    assert rank(client).status_code == 200
    ranker.is_active = False
    ranker.save(update_fields=["is_active"])
    assert rank(client).status_code == 401


def test_the_permission_is_read_with_the_token_in_one_query(db, ranker, queue_cache):
    client, _ = token_client(ranker)
    rank(client)  # warm-up
    with CaptureQueriesContext(connection) as queries:
        assert rank(client).status_code == 200
    reading_permissions = [q["sql"] for q in queries if "auth_permission" in q["sql"]]
    assert len(reading_permissions) == 1
    assert "knox_authtoken" in reading_permissions[0]


def test_a_browser_session_needs_its_csrf_token(db, ranker, queue_cache):
    browser = APIClient(enforce_csrf_checks=True)
    browser.force_login(ranker)
    refused = rank(browser)
    assert refused.status_code == 403
    assert "CSRF" in refused.json()["detail"]
    browser.get("/accounts/login/")  # sets the CSRF cookie
    csrf = browser.cookies["csrftoken"].value
    body = json.dumps({"queue": [person("a")]})
    allowed = browser.post(URL, data=body, content_type="application/json", HTTP_X_CSRFTOKEN=csrf)
    assert allowed.status_code == 200


@pytest.mark.django_db(transaction=True)
def test_a_database_connection_closed_between_requests_is_replaced_not_failed(queue_cache):
    """CONN_HEALTH_CHECKS: the token's query, the request's first, runs on a connection the
    database closed since the last request (a restart, an idle timeout): it is replaced."""
    user = UserFactory()
    user.user_permissions.add(rank_permission())
    client, _ = token_client(user)
    assert rank(client).status_code == 200
    backend = connection.connection.info.backend_pid
    other = connection.copy()
    try:
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s)", [backend])
    finally:
        other.close()
    connection.health_check_done = False  # a new request (the test client skips the signal)
    assert rank(client).status_code == 200
