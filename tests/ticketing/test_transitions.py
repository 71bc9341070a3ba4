"""The transition primitive: several transitions in one compare-and-set (an approval that
routes at once), and statements that go along with a transition in its statement."""

from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from tests.factories import UserFactory
from ticketing import lifecycle, services
from ticketing.lifecycle import IllegalTransition
from ticketing.models import ProcessStatus, Ticket, TicketRecord, TicketStatus
from ticketing.transitions import Along, Step, apply_transition_along

pytestmark = pytest.mark.django_db


@pytest.fixture
def submitted(applicant):
    return services.ticket_submit(creator=applicant, title="t", content="c", priority=2)


def test_two_transitions_apply_at_once_with_one_audit_record_each_in_order(submitted, approver):
    now = timezone.now()
    handler = UserFactory(username="h")
    with transaction.atomic():
        ticket, _ = apply_transition_along(
            ticket_id=submitted.pk,
            transition=lifecycle.ASSIGN,
            actor_id=approver.pk,
            now=now,
            values={"handler_id": handler.pk, "assigned_time": now},
            detail={"handler_id": handler.pk},
            before=[Step(lifecycle.APPROVE, {"approved_time": now})],
        )
    assert (ticket.process_status, ticket.ticket_status) == (
        ProcessStatus.APPROVED,
        TicketStatus.PENDING_PROCESS,
    )
    assert (ticket.approved_time, ticket.assigned_time, ticket.handler_id) == (now, now, handler.pk)
    records = list(
        TicketRecord.objects.filter(ticket_id=submitted.pk)
        .exclude(action="submit")
        .order_by("id")
        .values_list("action", "actor_id", "from_status", "to_status", "detail")
    )
    assert records == [
        ("approve", approver.pk, ProcessStatus.APPROVING, ProcessStatus.APPROVED,
         {"field": "process_status"}),
        ("assign", approver.pk, TicketStatus.SUBMITTED, TicketStatus.PENDING_PROCESS,
         {"field": "ticket_status", "handler_id": handler.pk}),
    ]  # fmt: skip


def test_the_first_transition_the_ticket_cannot_take_is_named_and_nothing_changes(
    submitted, approver
):
    now = timezone.now()
    services.ticket_reject(ticket_id=submitted.pk, approver=approver, reason="no")
    before = TicketRecord.objects.filter(ticket_id=submitted.pk).count()
    with pytest.raises(IllegalTransition) as raised, transaction.atomic():
        apply_transition_along(
            ticket_id=submitted.pk,
            transition=lifecycle.ENTER_POOL,
            actor_id=approver.pk,
            now=now,
            values={"queued_time": now},
            before=[Step(lifecycle.APPROVE, {"approved_time": now})],
        )
    assert raised.value.transition == lifecycle.APPROVE
    assert raised.value.current == ProcessStatus.REJECTED
    ticket = Ticket.objects.get(pk=submitted.pk)
    assert (ticket.process_status, ticket.ticket_status, ticket.queued_time) == (
        ProcessStatus.REJECTED,
        TicketStatus.SUBMITTED,
        None,
    )
    assert TicketRecord.objects.filter(ticket_id=submitted.pk).count() == before


def test_statements_along_write_only_when_the_transition_applies_and_read_back(submitted, approver):
    now = timezone.now()
    along = [
        Along(
            "note",
            "INSERT INTO oa_ticket_record (ticket_id, action, actor_id, created, detail) "
            "SELECT upd.id, %s, NULL, %s, '{}'::jsonb FROM upd RETURNING id",
            ["note", now],
            columns=["id"],
        )
    ]
    with transaction.atomic():
        ticket, read = apply_transition_along(
            ticket_id=submitted.pk,
            transition=lifecycle.APPROVE,
            actor_id=approver.pk,
            now=now,
            along=along,
        )
    (note_id,) = read["note"]
    assert TicketRecord.objects.get(pk=note_id).action == "note"
    with pytest.raises(IllegalTransition), transaction.atomic():
        apply_transition_along(  # approved already: the along writes nothing either
            ticket_id=submitted.pk,
            transition=lifecycle.APPROVE,
            actor_id=approver.pk,
            now=now + timedelta(seconds=1),
            along=along,
        )
    assert TicketRecord.objects.filter(ticket_id=submitted.pk, action="note").count() == 1
