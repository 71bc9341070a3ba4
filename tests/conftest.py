import pytest
from rest_framework.test import APIClient

from tests.factories import ApproverFactory, StaffFactory, UserFactory


@pytest.fixture
def api():
    """An API client; `api.as_user(user)` authenticates with the user's token."""
    from rest_framework.authtoken.models import Token

    client = APIClient()

    def as_user(user):
        token, _ = Token.objects.get_or_create(user=user)
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
        return client

    client.as_user = as_user
    return client


@pytest.fixture
def applicant(db):
    return UserFactory(username="applicant")


@pytest.fixture
def approver(db):
    return ApproverFactory(username="approver")


@pytest.fixture
def staff(db):
    return StaffFactory(username="staff")
