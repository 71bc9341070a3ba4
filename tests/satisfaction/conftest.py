import importlib

import pytest
from django.apps import apps

from tests.factories import HandlerGroupFactory, UserFactory
from workflow import services as ticket_services

SURVEY_TEMPLATES = "notifications.migrations.0011_survey_template"


@pytest.fixture(autouse=True)
def _survey_templates(_reference_data, request):
    """The survey's notification templates, put back after a transactional test's flush
    (as tests/conftest.py's reference data)."""
    names = request.fixturenames
    if "db" in names or "transactional_db" in names or request.node.get_closest_marker("django_db"):
        importlib.import_module(SURVEY_TEMPLATES).install(apps, None)


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
def complete(submit, group, approver, handlers):
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
