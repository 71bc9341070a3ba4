"""Throttles (429 in the error shape with Retry-After) and the lock-out after repeated failed
passwords on the login page, the admin login and the token endpoint (django-axes)."""

import pytest
from axes.models import AccessAttempt
from django.core.cache import cache
from django.core.management import call_command
from knox.models import AuthToken
from rest_framework.test import APIClient

from tests.factories import StaffFactory, UserFactory

STRONG = "correct-horse-battery-staple-42"


def _forget_throttle_histories():
    """Throttle histories live in the shared Redis cache: delete those keys only (clearing the
    whole database would take other state with it)."""
    client = cache._cache.get_client(write=True)
    keys = list(client.scan_iter(match=f"*{cache.key_prefix}*throttle_*"))
    if keys:
        client.delete(*keys)


@pytest.fixture(autouse=True)
def _fresh_counters():
    _forget_throttle_histories()
    yield
    _forget_throttle_histories()


@pytest.fixture
def rates(settings):
    def _rates(**rates):
        settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, **rates}

    return _rates


def token_login(password, username="alice", client=None):
    client = client or APIClient()
    return client.post(
        "/api/auth/token/", {"username": username, "password": password}, format="json"
    )


def test_the_token_endpoint_is_throttled_per_address_even_for_the_right_password(db, rates):
    rates(login="5/min")
    UserFactory(username="alice", password=STRONG)
    UserFactory(username="bob", password=STRONG)
    statuses = [
        token_login("wrong", username=("alice", "bob")[i % 2]).status_code for i in range(5)
    ]
    assert statuses == [400] * 5
    response = token_login(STRONG)
    assert response.status_code == 429
    assert response.json()["code"] == "throttled"
    assert "detail" in response.json()
    assert 0 < int(response["Retry-After"]) <= 60
    assert not AuthToken.objects.exists()


def test_anonymous_and_per_user_rates_come_from_settings(db, rates):
    rates(anon="2/min", user="3/min")
    anonymous = APIClient()  # on an endpoint open to anonymous callers (DRF throttles after auth)
    statuses = [anonymous.get("/api/schema/?format=json").status_code for _ in range(3)]
    assert statuses == [200, 200, 429]
    user = UserFactory(username="carol")
    client = APIClient()
    client.force_authenticate(user)
    assert [client.get("/api/tickets/").status_code for _ in range(4)] == [200, 200, 200, 429]
    other = APIClient()
    other.force_authenticate(UserFactory(username="dave"))
    assert other.get("/api/tickets/").status_code == 200  # per user, not global


def test_failed_passwords_lock_the_token_endpoint_until_cleared(db, settings):
    settings.AXES_FAILURE_LIMIT = 3
    alice = UserFactory(username="alice", password=STRONG)
    assert [token_login("wrong").status_code for _ in range(2)] == [400, 400]
    locked = token_login("wrong")
    assert locked.status_code == 429
    assert locked.json()["code"] == "locked_out"
    assert int(locked["Retry-After"]) > 0
    # The right password does not get through while locked out.
    assert token_login(STRONG).status_code == 429
    assert not AuthToken.objects.filter(user=alice).exists()
    # Another account from the same address is not locked.
    UserFactory(username="bob", password=STRONG)
    assert token_login(STRONG, username="bob").status_code == 200
    call_command("axes_reset_username", "alice")
    assert token_login(STRONG).status_code == 200


def test_the_login_page_locks_out_after_the_configured_failures(db, client, settings):
    settings.AXES_FAILURE_LIMIT = 3
    alice = UserFactory(username="alice", password=STRONG)
    for _ in range(2):
        response = client.post("/accounts/login/", {"username": "alice", "password": "nope"})
        assert response.status_code == 200  # the form again, with its error
    response = client.post("/accounts/login/", {"username": "alice", "password": "nope"})
    assert response.status_code == 429
    assert "Too many failed logins" in response.content.decode()
    response = client.post("/accounts/login/", {"username": "alice", "password": STRONG})
    assert response.status_code == 429
    assert "_auth_user_id" not in client.session
    assert AccessAttempt.objects.get(username="alice").failures_since_start >= 3
    # Cleared by an administrator: the right password works again.
    AccessAttempt.objects.filter(username="alice").delete()
    response = client.post("/accounts/login/", {"username": "alice", "password": STRONG})
    assert response.status_code == 302
    assert client.session["_auth_user_id"] == str(alice.pk)


def test_the_admin_login_locks_out_and_lockouts_are_listed_and_cleared_in_admin(
    db, client, settings
):
    settings.AXES_FAILURE_LIMIT = 3
    StaffFactory(username="ops", password=STRONG)
    for _ in range(3):
        response = client.post("/admin/login/", {"username": "ops", "password": "nope"})
    assert response.status_code == 429
    response = client.post("/admin/login/", {"username": "ops", "password": STRONG})
    assert response.status_code == 429

    admin = APIClient()  # a superuser's browser elsewhere
    root = UserFactory(username="root", password=STRONG)
    root.is_staff = root.is_superuser = True
    root.save()
    admin.force_login(root)
    listing = admin.get("/admin/axes/accessattempt/")
    assert listing.status_code == 200
    assert "ops" in listing.content.decode()
    attempt = AccessAttempt.objects.get(username="ops")
    response = admin.post(f"/admin/axes/accessattempt/{attempt.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not AccessAttempt.objects.filter(username="ops").exists()
    response = client.post("/admin/login/", {"username": "ops", "password": STRONG})
    assert response.status_code == 302
