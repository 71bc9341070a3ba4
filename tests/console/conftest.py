import pytest

from tests.factories import HandlerGroupFactory, UserFactory


@pytest.fixture
def handlers(db):
    return [UserFactory(username=f"handler{i}") for i in range(2)]


@pytest.fixture
def leader(db):
    return UserFactory(username="leader")


@pytest.fixture
def group(handlers, leader):
    """A manual-strategy group: approved tickets wait in its pool."""
    return HandlerGroupFactory(name="support", leader=leader, members=handlers, assign_strategy=0)


@pytest.fixture
def outsider(db):
    """A handler of another group: may not see the support group's tickets."""
    user = UserFactory(username="outsider")
    HandlerGroupFactory(name="facilities", members=[user], assign_strategy=0)
    return user


@pytest.fixture
def as_user(client):
    """`as_user(user)`: the test client, logged in as `user`."""

    def _as_user(user):
        client.force_login(user)
        return client

    return _as_user
