"""The login form carries the browser's zone (static/js/login.js fills the hidden field):
the first page after login already shows times in it, a zone the person chose is kept, and
a name the server does not know never stands in the way of logging in."""

import pytest

from accounts.models import Profile
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def log_in(client, user, **extra):
    return client.post(
        "/accounts/login/", {"username": user.username, "password": "pw-123456", **extra}
    )


@pytest.fixture
def person():
    return UserFactory(username="zoned", password="pw-123456")


def test_the_login_page_has_the_zone_field_and_its_script(client):
    page = client.get("/accounts/login/").content.decode()
    assert 'name="time_zone"' in page and "js/login.js" in page


def test_the_browser_zone_sent_with_the_login_is_the_first_page_zone(client, person):
    response = log_in(client, person, time_zone="Asia/Shanghai")
    assert response.status_code == 302
    assert Profile.objects.get(user=person).time_zone == "Asia/Shanghai"
    page = client.get(response["Location"], follow=True).content.decode()
    assert "Asia/Shanghai" in page and "data-detect-time-zone-url" not in page


def test_a_chosen_zone_is_not_replaced_by_the_browser(client, person):
    Profile.objects.create(user=person, time_zone="Europe/Berlin")
    assert log_in(client, person, time_zone="Asia/Shanghai").status_code == 302
    assert Profile.objects.get(user=person).time_zone == "Europe/Berlin"


@pytest.mark.parametrize("zone", ["Mars/Olympus", ""])
def test_an_unknown_or_missing_zone_still_logs_in_and_stores_nothing(client, person, zone):
    response = log_in(client, person, time_zone=zone)
    assert response.status_code == 302
    assert not Profile.objects.filter(user=person).exclude(time_zone="").exists()


def test_a_wrong_password_stores_no_zone(client, person):
    response = client.post(
        "/accounts/login/",
        {"username": person.username, "password": "wrong", "time_zone": "Asia/Shanghai"},
    )
    assert response.status_code == 200
    assert not Profile.objects.filter(user=person).exclude(time_zone="").exists()
