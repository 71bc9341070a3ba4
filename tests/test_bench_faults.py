"""The fault bench's checks can fail (bench/load.py and bench/faults.py): a world that is
consistent passes them, and the same world with a doubled notice, a retried submit that made
a second ticket, or an SLA level fired twice or not at all fails the check that names it,
with the count.

A smoke run of bench/faults.py itself (`--faults web` on a tiny world) takes about 110 s on
this machine — initdb, migrations, the stack's start, 15 s for the agents to come online,
10 s of load before the fault and the agents finishing their tickets — so it is a bench run
(docs/benchmarks.md, "Faults"), not a test."""

from datetime import timedelta

import pytest
from django.utils import timezone

from bench import faults
from bench import load as loadbench
from notifications.models import Notification
from sla import escalation
from tests.factories import ApproverFactory, HandlerGroupFactory, UserFactory
from ticketing.models import TicketRecord
from workflow import services

NOTIFIED_ONCE = "every assignment notified exactly once"
ONE_TICKET = "every submission made one ticket"


@pytest.fixture
def team(db):
    """As the bench's: people without an e-mail address (their notices are inbox rows only)."""
    agents = [UserFactory(username=f"agent{i}", email="") for i in range(2)]
    return agents, HandlerGroupFactory(members=agents, assign_strategy=1)


def approved(group, title="load 1", creator=None, **ticket):
    submitted = services.ticket_submit(
        creator=creator or UserFactory(email=""),
        title=title,
        content="c",
        priority=2,
        handler_group_id=group.pk,
        **ticket,
    )
    return services.ticket_approve(ticket_id=submitted.pk, approver=ApproverFactory(email=""))


def test_a_consistent_world_passes_every_check(team):
    _agents, group = team
    for n in range(3):
        approved(group, title=f"load {n}")
    counts: dict[str, int] = {}
    checks = loadbench.consistency_checks(counts)
    assert checks and all(checks.values()), checks
    assert not any(counts.values())


def test_a_doubled_assignment_notice_fails_the_notified_once_check(team):
    _agents, group = team
    ticket = approved(group)
    notice = Notification.objects.get(ticket_id=ticket.pk, template_code="ticket-assigned")
    # What a notice sent again under another key would leave: two for one assignment.
    Notification.objects.create(
        recipient_id=notice.recipient_id,
        template_code=notice.template_code,
        title=notice.title,
        content=notice.content,
        dedupe_key=notice.dedupe_key + ":again",
        ticket_id=ticket.pk,
        created=notice.created,
    )
    counts: dict[str, int] = {}
    checks = loadbench.consistency_checks(counts)
    assert checks[NOTIFIED_ONCE] is False
    assert counts[NOTIFIED_ONCE] == 1
    assert all(ok for name, ok in checks.items() if name != NOTIFIED_ONCE)


def test_a_retried_submit_that_made_a_second_ticket_fails_the_one_ticket_check(team):
    _agents, group = team
    approved(group, title="redis 7")
    approved(group, title="redis 7")  # the retry, without an idempotency key
    counts: dict[str, int] = {}
    checks = loadbench.consistency_checks(counts)
    assert checks[ONE_TICKET] is False
    assert counts[ONE_TICKET] == 1


def test_a_delivery_still_owed_fails_the_outbox_check(db):
    agent = UserFactory(username="agent", email="agent@example.com")
    approved(HandlerGroupFactory(members=[agent], assign_strategy=1))
    counts: dict[str, int] = {}
    checks = loadbench.consistency_checks(counts)
    assert checks["outbox drained"] is False  # no worker ran: the e-mail is still owed
    assert counts["outbox drained"] >= 1


def test_sla_levels_due_in_a_fault_must_each_fire_exactly_once(db):
    ApproverFactory()  # who is told when a ticket has neither handler nor leader
    watch = faults.build_watch()
    start = timezone.now()
    submitted = services.ticket_submit(
        creator=UserFactory(),
        title="beat sla 1",
        content="c",
        priority=2,
        category=faults.WATCH_CATEGORY,
        handler_group_id=watch.group,
        now=start,
    )
    ticket = services.ticket_approve(ticket_id=submitted.pk, approver=ApproverFactory(), now=start)
    assert ticket.handler_id is None  # nobody serves the watch group: it waits in its pool
    # Levels at 25/50/75/100 % of 36 s: due 9, 18, 27 and 36 s after approval.
    escalation.fire_due(now=start + timedelta(seconds=20))
    fired = faults.sla_window(watch.group, start, start + timedelta(seconds=20))
    assert (fired.due, fired.fired_once, fired.broken) == (2, 2, 0)

    # Level 3 is due in this window and has not fired (the fault's tick never ran).
    missed = faults.sla_window(watch.group, start, start + timedelta(seconds=30))
    assert (missed.due, missed.fired_once, missed.broken) == (3, 2, 1)

    # Level 1 fired twice: a second record of it.
    record = TicketRecord.objects.filter(ticket_id=ticket.pk, action="sla_response_level").first()
    assert record is not None
    TicketRecord.objects.create(
        ticket_id=ticket.pk, action=record.action, created=record.created, detail=record.detail
    )
    twice = faults.sla_window(watch.group, start, start + timedelta(seconds=20))
    assert (twice.due, twice.fired_once, twice.broken) == (2, 1, 1)
