"""The approval's own path through routing: what it writes in how many statements, that the
strategy only runs for an approval that stands, and the member figures it reads."""

import threading
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.db import DataError, IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.models import Profile
from notifications import sending
from notifications.models import Notification, OutboxDelivery
from notifications.sending import _templates
from routing import notices
from routing import route as route_module
from routing.models import AssignmentEvent, RoutingDecision
from routing.strategies.candidates import member_rows
from sla.models import ClockSegment, SlaEvent
from sla.selectors import _enabled_rules
from tests.concurrency import run_in_parallel
from tests.factories import ApproverFactory, HandlerGroupFactory, UserFactory
from ticketing.lifecycle import IllegalTransition
from ticketing.models import ProcessStatus, Ticket, TicketRecord, TicketStatus
from workflow import services


def submit(group, applicant, **kwargs):
    return services.ticket_submit(
        creator=applicant, title="t", content="c", priority=2, handler_group_id=group.pk, **kwargs
    )


@pytest.mark.django_db
def test_an_approval_is_seven_statements_and_two_compare_and_sets_write_the_ticket(
    applicant, approver, monkeypatch, settings, request, django_capture_on_commit_callbacks
):
    settings.REFERENCE_CACHE_SECONDS = 60  # rules and templates memoised, as in production
    for memo in (_enabled_rules, _templates):
        memo.clear()
        request.addfinalizer(memo.clear)
    agents = [UserFactory(username=f"a{i}", email=f"a{i}@example.com") for i in range(3)]
    Profile.objects.create(user=agents[1], language="zh-hans", time_zone="Asia/Shanghai")
    group = HandlerGroupFactory(members=agents, assign_strategy=1)
    services.ticket_approve(ticket_id=submit(group, applicant).pk, approver=approver)  # to a0
    ticket = submit(group, applicant)
    enqueued = []
    monkeypatch.setattr(sending, "enqueue_deliveries", enqueued.extend)
    with CaptureQueriesContext(connection) as queries:
        with django_capture_on_commit_callbacks(execute=True):
            approved = services.ticket_approve(ticket_id=ticket.pk, approver=approver)
    statements = [
        q["sql"]
        for q in queries.captured_queries
        if q["sql"].split()[0] not in ("BEGIN", "COMMIT", "SAVEPOINT", "RELEASE")
    ]
    # What the clocks start from; the approval with its record, the clocks and the
    # escalation events; the group's lock; the member figures (and how to write to them);
    # the assignment with its record, the cursor, the decision, the event and the fold; the
    # agent's notice (read for them with the member figures); its e-mail delivery. The last
    # five hold the group lock.
    assert len(statements) == 7, statements
    assert statements[5].split()[:3] == ["INSERT", "INTO", "oa_notification"], statements[5]
    assert statements[6].split()[:3] == ["INSERT", "INTO", "oa_notify_outbox"], statements[6]
    assert statements[2].endswith("FROM oa_ticket_handler_group WHERE id = %s FOR NO KEY UPDATE"), (
        statements[2]
    )
    assert approved.handler_id == agents[1].pk
    assert approved.ticket_status == TicketStatus.PENDING_PROCESS
    assert approved.process_status == ProcessStatus.APPROVED
    assert approved.response_deadline is not None and approved.resolve_deadline is not None
    assert list(
        TicketRecord.objects.filter(ticket_id=ticket.pk).order_by("id").values_list("action")
    ) == [("submit",), ("approve",), ("assign",)]
    assert ClockSegment.objects.filter(ticket_id=ticket.pk, kind="start").count() == 2
    assert SlaEvent.objects.filter(ticket_id=ticket.pk, state="pending").count() == 4
    decision = RoutingDecision.objects.get(ticket_id=ticket.pk)
    assert (decision.outcome, decision.chosen_id) == ("assigned", agents[1].pk)
    assert [m["user_id"] for m in decision.members] == [a.pk for a in agents]
    event = AssignmentEvent.objects.get(ticket_id=ticket.pk)
    assert (event.user_id, event.created, event.notified) == (
        agents[1].pk,
        approved.assigned_time,
        True,
    )
    group.refresh_from_db()
    assert group.last_assign_index == 1
    # The notice, in the agent's language, and its e-mail delivery, enqueued after commit.
    (notice,) = Notification.objects.filter(ticket_id=ticket.pk)
    assert (notice.recipient_id, notice.template_code) == (agents[1].pk, "ticket-assigned")
    assert notice.title == f"工单 {ticket.bill_code} 已分配给你", notice.title
    assert notice.dedupe_key == (
        f"ticket:{ticket.pk}:assigned:{agents[1].pk}:{approved.assigned_time.isoformat()}"
    )
    (delivery,) = OutboxDelivery.objects.filter(notification=notice)
    assert (delivery.channel, delivery.target, delivery.status) == (
        "email",
        "a1@example.com",
        "pending",
    )
    assert enqueued == [delivery.pk]
    # Exactly once: the sweep finds nothing left to tell.
    assert notices.notice_sweep(now=approved.assigned_time + timedelta(minutes=5)) == 0


@pytest.mark.django_db
def test_approving_a_ticket_no_longer_approving_never_runs_the_strategy(
    applicant, approver, monkeypatch
):
    group = HandlerGroupFactory(members=[UserFactory(username="a0")], assign_strategy=4)
    ticket = submit(group, applicant)
    services.ticket_approve(ticket_id=ticket.pk, approver=approver)
    picks = []
    monkeypatch.setattr(route_module, "pick_handler", lambda **kwargs: picks.append(kwargs))
    with pytest.raises(IllegalTransition, match="approve"):
        services.ticket_approve(ticket_id=ticket.pk, approver=approver)
    assert picks == []
    assert TicketRecord.objects.filter(ticket_id=ticket.pk, action="approve").count() == 1


@pytest.mark.django_db(transaction=True)
def test_of_two_approvers_at_once_one_approves_and_routes(applicant):
    agents = [UserFactory(username=f"a{i}") for i in range(2)]
    group = HandlerGroupFactory(members=agents, assign_strategy=1)
    ticket = submit(group, applicant)
    approvers = [ApproverFactory(username=f"ap{i}") for i in range(4)]
    results = run_in_parallel(
        [lambda a=a: services.ticket_approve(ticket_id=ticket.pk, approver=a) for a in approvers]
    )
    won = [r for r in results if isinstance(r, Ticket)]
    lost = [r for r in results if isinstance(r, IllegalTransition)]
    assert (len(won), len(lost)) == (1, 3), results
    assert TicketRecord.objects.filter(ticket_id=ticket.pk, action="approve").count() == 1
    assert AssignmentEvent.objects.filter(ticket_id=ticket.pk).count() == 1
    assert RoutingDecision.objects.filter(ticket_id=ticket.pk).count() == 1
    assert Notification.objects.filter(ticket_id=ticket.pk).count() == 1
    assert SlaEvent.objects.filter(ticket_id=ticket.pk).count() == 4
    group.refresh_from_db()
    assert group.last_assign_index == 0


@pytest.mark.django_db
def test_member_figures_count_today_and_find_an_assignment_before_today(applicant, approver):
    agents = [UserFactory(username=f"a{i}") for i in range(2)]
    group = HandlerGroupFactory(members=agents, assign_strategy=1)
    now = timezone.now()
    yesterday = now - timedelta(days=1)
    first = submit(group, applicant, now=yesterday)
    services.ticket_approve(ticket_id=first.pk, approver=approver, now=yesterday)  # to a0
    services.ticket_accept(ticket_id=first.pk, handler=agents[0], now=yesterday)
    services.ticket_complete(ticket_id=first.pk, handler=agents[0], now=yesterday)
    second = submit(group, applicant, now=now)
    services.ticket_approve(ticket_id=second.pk, approver=approver, now=now)  # to a1
    rows = {row.user_id: row for row in member_rows(group=group, member_ids=[a.pk for a in agents],
                                                     now=now)}  # fmt: skip
    done, busy = rows[agents[0].pk], rows[agents[1].pk]
    assert (done.active, done.assigned_today, done.last_assigned) == (0, 0, yesterday)
    assert (busy.active, busy.open_offers, busy.assigned_today, busy.last_assigned) == (
        1,
        1,
        1,
        now,
    )


@pytest.mark.django_db(transaction=True)
def test_a_submission_into_a_group_never_waits_for_its_routing_lock(applicant):
    """The group lock serialises routing only: a ticket submitted into the group (whose
    foreign key check reads the group row) goes through while an approval holds the lock."""
    group = HandlerGroupFactory(members=[UserFactory(username="a0")], assign_strategy=1)
    locked, release = threading.Event(), threading.Event()

    def hold_the_routing_lock():
        with transaction.atomic():
            route_module.lock_group(group.pk)
            locked.set()
            release.wait(10)

    def submit_meanwhile():
        locked.wait(10)
        try:
            # For this transaction only: behind a transaction pooler (the PgBouncer job) a
            # session-level SET stays on whichever server connection ran it.
            with transaction.atomic():
                with connection.cursor() as cursor:
                    cursor.execute("SET LOCAL lock_timeout = '2s'")
                return submit(group, applicant)
        finally:
            release.set()

    held, submitted = run_in_parallel([hold_the_routing_lock, submit_meanwhile])
    assert held is None
    assert isinstance(submitted, Ticket), submitted
    assert Ticket.objects.filter(pk=submitted.pk, handler_group=group).exists()


@pytest.mark.django_db(transaction=True)
def test_an_approval_whose_record_names_nobody_commits_nothing(applicant):
    """Foreign keys are checked at the commit (Django declares them DEFERRABLE INITIALLY
    DEFERRED): an approval whose record names nobody fails there, and nothing of it stays."""
    group = HandlerGroupFactory(members=[UserFactory(username="a0")], assign_strategy=1)
    ticket = submit(group, applicant)
    with pytest.raises(IntegrityError, match="actor_id"):
        services.ticket_approve(ticket_id=ticket.pk, approver=User(pk=10**9))
    after = Ticket.objects.get(pk=ticket.pk)
    assert (after.process_status, after.handler_id) == (ProcessStatus.APPROVING, None)
    assert not TicketRecord.objects.filter(ticket_id=ticket.pk).exclude(action="submit").exists()
    assert not AssignmentEvent.objects.filter(ticket_id=ticket.pk).exists()
    assert not Notification.objects.filter(ticket_id=ticket.pk).exists()


@pytest.mark.django_db
def test_inside_a_callers_transaction_an_approval_leaves_its_constraints_as_they_are(
    applicant, approver
):
    group = HandlerGroupFactory(members=[UserFactory(username="a0")], assign_strategy=1)
    ticket = submit(group, applicant)
    with transaction.atomic():  # inside the test's own transaction too
        services.ticket_approve(ticket_id=ticket.pk, approver=approver)
        with connection.cursor() as cursor:
            # Still deferred: a row naming nobody is accepted until the caller commits.
            cursor.execute(
                "INSERT INTO oa_ticket_record (ticket_id, action, actor_id, from_status, "
                "to_status, created, detail) VALUES (%s, 'x', %s, 0, 0, now(), '{}')",
                [ticket.pk, 10**9],
            )
        transaction.set_rollback(True)


@pytest.mark.django_db(transaction=True)
def test_an_assignment_statement_that_fails_commits_nothing_of_the_approval(
    applicant, approver, monkeypatch
):
    group = HandlerGroupFactory(members=[UserFactory(username="a0")], assign_strategy=1)
    ticket = submit(group, applicant)
    monkeypatch.setattr(
        route_module, "EVENT_ALONG_SQL", route_module.EVENT_ALONG_SQL.replace("upd.id", "1/0")
    )
    with pytest.raises(DataError):
        services.ticket_approve(ticket_id=ticket.pk, approver=approver)
    after = Ticket.objects.get(pk=ticket.pk)
    assert (after.process_status, after.handler_id) == (ProcessStatus.APPROVING, None)
    assert not TicketRecord.objects.filter(ticket_id=ticket.pk, action="approve").exists()
    assert not ClockSegment.objects.filter(ticket_id=ticket.pk).exists()
    assert not RoutingDecision.objects.filter(ticket_id=ticket.pk).exists()
    # The connection is usable afterwards, in a transaction of its own again.
    monkeypatch.undo()
    assert services.ticket_approve(ticket_id=ticket.pk, approver=approver).handler_id
