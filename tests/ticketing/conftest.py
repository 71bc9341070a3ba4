import pytest

from handler_groups.models import HandlerGroup
from tests.factories import HandlerGroupFactory, UserFactory
from ticketing import services


@pytest.fixture
def handlers(db):
    return [UserFactory(username=f"handler{i}") for i in range(3)]


@pytest.fixture
def group(handlers) -> HandlerGroup:
    """A manual-strategy group: approved tickets wait in its pool."""
    leader = UserFactory(username="leader")
    return HandlerGroupFactory(name="support", leader=leader, members=handlers, assign_strategy=0)


@pytest.fixture
def submit(applicant):
    def _submit(**kwargs):
        kwargs.setdefault("title", "Printer on fire")
        kwargs.setdefault("content", "It is on fire.")
        kwargs.setdefault("priority", 3)
        return services.ticket_submit(creator=kwargs.pop("creator", applicant), **kwargs)

    return _submit


@pytest.fixture
def pooled(submit, group, approver):
    """A ticket approved into the manual group's pool (ticket_status 1)."""
    ticket = submit(handler_group_id=group.pk)
    return services.ticket_approve(ticket_id=ticket.pk, approver=approver)
