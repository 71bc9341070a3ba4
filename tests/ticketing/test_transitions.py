"""The transition primitive: statements that go along with a transition in its own statement."""

from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from ticketing import lifecycle
from ticketing.lifecycle import IllegalTransition
from ticketing.models import TicketRecord
from ticketing.transitions import Along, apply_transition_along
from workflow import services

pytestmark = pytest.mark.django_db


@pytest.fixture
def submitted(applicant):
    return services.ticket_submit(creator=applicant, title="t", content="c", priority=2)


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
