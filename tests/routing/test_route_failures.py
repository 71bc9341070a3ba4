"""A strategy that fails never loses an approval: a Python-level failure leaves the ticket in
the pool; a failed SQL statement rolls the whole approval back (nothing half-done)."""

import pytest
from django.db import connection

from routing import route as route_module
from routing.models import AssignmentEvent
from tests.factories import ApproverFactory, HandlerGroupFactory, UserFactory
from ticketing.models import ProcessStatus, Ticket, TicketStatus
from workflow import services


@pytest.fixture
def submitted(db):
    group = HandlerGroupFactory(members=[UserFactory(username="a0")], assign_strategy=1)
    return services.ticket_submit(
        creator=UserFactory(), title="t", content="c", priority=2, handler_group_id=group.pk
    )


def test_a_strategy_raising_leaves_the_ticket_waiting_in_the_pool(submitted, monkeypatch):
    def broken(**kwargs):
        raise RuntimeError("strategy bug")

    monkeypatch.setattr(route_module, "pick_handler", broken)
    ticket = services.ticket_approve(ticket_id=submitted.pk, approver=ApproverFactory())
    assert ticket.process_status == ProcessStatus.APPROVED
    assert ticket.ticket_status == TicketStatus.PENDING_ASSIGN
    assert ticket.handler_id is None


def test_a_failed_statement_in_the_pick_rolls_the_approval_back(submitted, monkeypatch):
    def bad_sql(**kwargs):
        with connection.cursor() as cursor:
            cursor.execute("SELECT no_such_column FROM oa_ticket_handler_group")

    monkeypatch.setattr(route_module, "pick_handler", bad_sql)
    with pytest.raises(Exception, match="no_such_column"):
        services.ticket_approve(ticket_id=submitted.pk, approver=ApproverFactory())
    ticket = Ticket.objects.get(pk=submitted.pk)
    assert (ticket.process_status, ticket.ticket_status) == (
        ProcessStatus.APPROVING,
        TicketStatus.SUBMITTED,
    )
    assert not ticket.records.filter(action="approve").exists()
    assert not AssignmentEvent.objects.exists()
