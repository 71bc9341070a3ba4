import pytest

# The support group, its handlers and leader, and an outsider: the console tests' own.
from tests.console.conftest import group, handlers, leader, outsider  # noqa: F401, F811
from workflow import services as ticket_services


@pytest.fixture
def complete(submit, group, approver, handlers):  # noqa: F811
    """`complete(**submit_kwargs)`: a ticket of the support group, taken and completed by
    handlers[0] (its applicant asked how it went)."""

    def _complete(**kwargs):
        ticket = submit(handler_group_id=group.pk, **kwargs)
        ticket_services.ticket_approve(ticket_id=ticket.pk, approver=approver)
        ticket_services.ticket_accept(ticket_id=ticket.pk, handler=handlers[0])
        return ticket_services.ticket_complete(ticket_id=ticket.pk, handler=handlers[0])

    return _complete


@pytest.fixture
def completed(complete):
    return complete()
