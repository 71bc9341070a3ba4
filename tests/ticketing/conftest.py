import pytest

from handler_groups.models import HandlerGroup
from tests.factories import HandlerGroupFactory, UserFactory


@pytest.fixture
def handlers(db):
    return [UserFactory(username=f"handler{i}") for i in range(3)]


@pytest.fixture
def group(handlers) -> HandlerGroup:
    """A manual-strategy group: approved tickets wait in its pool."""
    leader = UserFactory(username="leader")
    return HandlerGroupFactory(name="support", leader=leader, members=handlers, assign_strategy=0)
