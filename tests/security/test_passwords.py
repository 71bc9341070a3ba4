"""Django's standard password validators are on: similarity, minimum length, common and
numeric passwords are refused wherever a password is set through a form."""

import pytest
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError

from tests.factories import UserFactory

OLD = "correct-horse-battery-staple-42"


@pytest.mark.parametrize(
    "weak", ["12345678", "password", "password123", "1234567890123", "short1!", "dana.scully1"]
)
def test_weak_passwords_are_refused(db, weak):
    user = UserFactory(username="dana.scully", email="dana.scully@example.test")
    with pytest.raises(ValidationError):
        validate_password(weak, user)


def test_the_password_change_page_refuses_a_common_password_and_keeps_the_old_one(db, client):
    user = UserFactory(username="mulder", password=OLD)
    client.force_login(user)
    response = client.post(
        "/accounts/password_change/",
        {"old_password": OLD, "new_password1": "password", "new_password2": "password"},
    )
    assert response.status_code == 200
    assert "too common" in response.content.decode()
    user.refresh_from_db()
    assert user.check_password(OLD)


def test_a_long_uncommon_password_is_accepted(db):
    validate_password("violet-lighthouse-harbour-1987", UserFactory(username="scully"))


def test_admin_user_creation_applies_the_validators(db, client, django_user_model):
    admin = django_user_model.objects.create_superuser("root", "root@example.test", OLD)
    client.force_login(admin)
    response = client.post(
        "/admin/auth/user/add/",
        {
            "username": "newbie",
            "password1": "12345678",
            "password2": "12345678",
            "usable_password": "true",
        },
    )
    assert response.status_code == 200
    assert not django_user_model.objects.filter(username="newbie").exists()
