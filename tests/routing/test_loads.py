"""Handlers' load rows (routing.loads, kept by triggers on the ticket table): the member
figures routing reads from them equal what counting the tickets gives, after every kind of
change to a ticket and under concurrent writers; folding keeps them a few rows per member."""

import io
import threading
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.db import connection, connections, transaction
from django.utils import timezone

from handler_groups.models import HandlerGroup
from routing import loads
from routing.models import HandlerLoad
from routing.offers import reclaim_offer
from routing.strategies.candidates import member_rows
from tests.concurrency import run_in_parallel
from tests.factories import ApproverFactory, HandlerGroupFactory, TicketFactory, UserFactory
from ticketing.models import Ticket, TicketStatus
from workflow import services

# The figures counted from the tickets themselves (what routing read before the load rows).
COUNTED_SQL = """
SELECT u.id,
       count(t.id) FILTER (WHERE t.ticket_status IN (2, 3)),
       count(t.id) FILTER (WHERE t.ticket_status = 2 AND t.accepted_time IS NULL
                             AND t.handler_group_id = %(group)s),
       count(t.id) FILTER (WHERE t.assigned_time >= %(day_start)s
                             AND t.handler_group_id = %(group)s)
FROM auth_user u LEFT JOIN oa_ticket_bill t ON t.handler_id = u.id
WHERE u.id = ANY(%(ids)s)
GROUP BY u.id
"""


def counted(group, member_ids, now):
    with connection.cursor() as cursor:
        cursor.execute(
            COUNTED_SQL,
            {"group": group.pk, "day_start": loads.day_start(now), "ids": member_ids},
        )
        return {row[0]: tuple(row[1:]) for row in cursor.fetchall()}


def figures(group, member_ids, now):
    return {
        row.user_id: (row.active, row.open_offers, row.assigned_today)
        for row in member_rows(group=group, member_ids=member_ids, now=now)
    }


def submit(group, applicant, **kwargs):
    return services.ticket_submit(
        creator=applicant, title="t", content="c", priority=2, handler_group_id=group.pk, **kwargs
    )


@pytest.mark.django_db
def test_every_kind_of_ticket_change_is_counted_as_counting_the_tickets_gives(
    applicant, approver, on_commit
):
    agents = [UserFactory(username=f"load{i}") for i in range(3)]
    group = HandlerGroupFactory(members=agents, assign_strategy=1)
    other = HandlerGroupFactory(members=agents[:1], assign_strategy=0)
    ids = [a.pk for a in agents]
    now = timezone.now()
    seen = []

    def check(step):
        seen.append(step)
        for g in (group, other):
            assert figures(g, ids, now) == counted(g, ids, now), seen

    tickets = [
        services.ticket_approve(ticket_id=submit(group, applicant).pk, approver=approver, now=now)
        for _ in range(6)
    ]
    check("assigned round robin")
    assert figures(group, ids, now) == {a.pk: (2, 2, 2) for a in agents}
    services.ticket_accept(ticket_id=tickets[0].pk, handler=agents[0], now=now)
    check("accepted")
    services.ticket_complete(ticket_id=tickets[0].pk, handler=agents[0], now=now)
    check("completed")
    services.ticket_close(ticket_id=tickets[0].pk, user=tickets[0].creator, now=now)
    check("closed")
    services.ticket_decline(ticket_id=tickets[1].pk, handler=agents[1], now=now)
    check("declined and routed again")
    assigned = Ticket.objects.get(pk=tickets[2].pk)
    reclaim_offer(
        ticket_id=assigned.pk,
        handler_id=assigned.handler_id,
        assigned_time=assigned.assigned_time,
        now=now,
    )
    check("reclaimed")
    services.ticket_transfer(
        ticket_id=tickets[3].pk, user=approver, handler_group_id=other.pk, now=now
    )
    check("transferred to another group")
    pooled = services.ticket_approve(
        ticket_id=submit(other, applicant).pk, approver=approver, now=now
    )
    services.ticket_accept(ticket_id=pooled.pk, handler=agents[2], now=now)
    check("taken from a manual pool")
    # Writes routing never makes: a bulk update, a ticket created holding a handler (the
    # admin, a data fix), a deleted ticket.
    Ticket.objects.filter(pk=tickets[4].pk).update(handler_id=agents[2].pk)
    check("bulk update")
    TicketFactory(
        handler=agents[1],
        handler_group=group,
        ticket_status=TicketStatus.PROCESSING,
        assigned_time=now - timedelta(minutes=5),
        accepted_time=now,
    )
    check("created holding a handler")
    for _ in range(2):  # in no group: only the sweep folds these
        TicketFactory(handler=agents[0], ticket_status=TicketStatus.PROCESSING, accepted_time=now)
    check("held in no group")
    Ticket.objects.filter(pk=tickets[5].pk).delete()
    check("deleted")
    assert loads.fold_sweep(now=now, crowded=0) > 0
    check("folded by the sweep")
    # Folded: one row per member and group left (in no group too).
    keys = list(HandlerLoad.objects.values_list("user_id", "group_id"))
    assert len(keys) == len(set(keys))
    assert HandlerLoad.objects.get(user_id=agents[0].pk, group_id=None).active == 2
    assert loads.mismatches(now=now) == []


@pytest.mark.django_db
def test_an_assignment_folds_the_members_rows_so_figures_stay_a_few_rows_each(applicant, approver):
    agents = [UserFactory(username=f"fold{i}") for i in range(2)]
    group = HandlerGroupFactory(members=agents, assign_strategy=1)
    now = timezone.now()
    for _ in range(20):
        ticket = services.ticket_approve(
            ticket_id=submit(group, applicant).pk, approver=approver, now=now
        )
        services.ticket_accept(ticket_id=ticket.pk, handler=ticket.handler, now=now)
    for agent in agents:
        # The rows folded with the member's last assignment, then its own difference and
        # the acceptance's.
        assert HandlerLoad.objects.filter(user_id=agent.pk, group_id=group.pk).count() <= 3
    assert figures(group, [a.pk for a in agents], now) == {a.pk: (10, 0, 10) for a in agents}


@pytest.mark.django_db
def test_assigned_today_counts_from_the_days_start_and_yesterday_folds_away(
    applicant, approver, settings
):
    settings.TIME_ZONE = "Asia/Shanghai"
    agent = UserFactory()
    group = HandlerGroupFactory(members=[agent], assign_strategy=1, daily_cap=5)
    today = timezone.make_aware(timezone.datetime(2026, 12, 1, 0, 30))
    yesterday = today - timedelta(hours=1)  # 23:30 the day before, in Shanghai
    services.ticket_approve(ticket_id=submit(group, applicant).pk, approver=approver, now=yesterday)
    assert figures(group, [agent.pk], yesterday) == {agent.pk: (1, 1, 1)}
    assert figures(group, [agent.pk], today) == {agent.pk: (1, 1, 0)}
    # Assigned again today: the fold keeps what was assigned since today's start only.
    services.ticket_approve(ticket_id=submit(group, applicant).pk, approver=approver, now=today)
    assert figures(group, [agent.pk], today) == {agent.pk: (2, 2, 1)}
    loads.fold_sweep(now=today, crowded=0)
    assert figures(group, [agent.pk], today) == {agent.pk: (2, 2, 1)}
    assert HandlerLoad.objects.filter(user_id=agent.pk).count() == 1
    tomorrow = today + timedelta(days=1)
    assert figures(group, [agent.pk], tomorrow) == {agent.pk: (2, 2, 0)}


@pytest.mark.django_db(transaction=True)
def test_emptying_the_ticket_table_empties_the_load_rows(applicant, approver):
    agent = UserFactory()
    group = HandlerGroupFactory(members=[agent], assign_strategy=1)
    services.ticket_approve(ticket_id=submit(group, applicant).pk, approver=approver)
    assert HandlerLoad.objects.exists()
    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE oa_ticket_bill CASCADE")
    assert not HandlerLoad.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_concurrent_approvals_acceptances_and_completions_never_deadlock_or_miscount(
    applicant,
):
    approvers = [ApproverFactory() for _ in range(3)]
    agents = [UserFactory(username=f"busy{i}") for i in range(4)]
    groups = [
        HandlerGroupFactory(members=agents, assign_strategy=1),
        HandlerGroupFactory(members=agents[1:], assign_strategy=2),
    ]
    held = [
        services.ticket_approve(
            ticket_id=submit(groups[i % 2], applicant).pk, approver=approvers[0]
        )
        for i in range(8)
    ]
    waiting = [submit(groups[i % 2], applicant).pk for i in range(24)]

    def approve(chunk, who):
        return lambda: [services.ticket_approve(ticket_id=t, approver=who) for t in chunk]

    def work(ticket):
        def run():
            services.ticket_accept(ticket_id=ticket.pk, handler=ticket.handler)
            return services.ticket_complete(ticket_id=ticket.pk, handler=ticket.handler)

        return run

    results = run_in_parallel(
        [approve(waiting[i::3], approvers[i]) for i in range(3)] + [work(t) for t in held]
    )
    assert not [r for r in results if isinstance(r, BaseException)], results
    now = timezone.now()
    ids = [a.pk for a in agents]
    for group in groups:
        assert figures(group, ids, now) == counted(group, ids, now)
    assert sum(f[0] for f in figures(groups[0], ids, now).values()) == 24


@pytest.mark.django_db(transaction=True)
def test_the_sweep_folds_a_group_only_under_its_lock(applicant, approver):
    agent = UserFactory()
    group = HandlerGroupFactory(members=[agent], assign_strategy=0)
    now = timezone.now()
    for _ in range(3):
        ticket = services.ticket_approve(ticket_id=submit(group, applicant).pk, approver=approver)
        services.ticket_accept(ticket_id=ticket.pk, handler=agent, now=now)
    before = HandlerLoad.objects.count()
    assert before > 1
    done = threading.Event()

    def sweep():
        try:
            loads.fold_sweep(now=now, crowded=0)
        finally:
            connections.close_all()
            done.set()

    with transaction.atomic():
        # Routing holds the group's lock (here: this transaction): the sweep waits for it.
        list(HandlerGroup.objects.select_for_update(no_key=True).filter(pk=group.pk))
        thread = threading.Thread(target=sweep)
        thread.start()
        assert not done.wait(0.5)
    assert done.wait(10)
    thread.join()
    assert HandlerLoad.objects.count() == 1
    assert figures(group, [agent.pk], now) == counted(group, [agent.pk], now)


@pytest.mark.django_db
def test_the_command_finds_figures_the_tickets_disagree_with_and_rebuilds_them(applicant, approver):
    agents = [UserFactory(username=f"cmd{i}") for i in range(2)]
    group = HandlerGroupFactory(members=agents, assign_strategy=1)
    now = timezone.now()
    tickets = [
        services.ticket_approve(ticket_id=submit(group, applicant).pk, approver=approver, now=now)
        for _ in range(4)
    ]
    out = io.StringIO()
    call_command("routing_loads", stdout=out)
    assert "load rows match the tickets" in out.getvalue()
    # A change the triggers never saw (they were disabled, or the tickets were restored
    # without them).
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # no check pending before ALTER TABLE
        cursor.execute("ALTER TABLE oa_ticket_bill DISABLE TRIGGER oa_ticket_load_update")
        cursor.execute(
            "UPDATE oa_ticket_bill SET ticket_status = 4, completed_time = now() WHERE id = %s",
            [tickets[0].pk],
        )
        cursor.execute("ALTER TABLE oa_ticket_bill ENABLE TRIGGER oa_ticket_load_update")
    rows_before = list(HandlerLoad.objects.order_by("id").values_list())
    with pytest.raises(CommandError, match="1 handler/group figures differ"):
        call_command("routing_loads", stdout=(out := io.StringIO()))
    assert f"user {tickets[0].handler_id} group {group.pk}" in out.getvalue()
    assert "(2, 2, 2), the tickets (1, 1, 2)" in out.getvalue()
    assert list(HandlerLoad.objects.order_by("id").values_list()) == rows_before  # only read
    call_command("routing_loads", "--rebuild", stdout=(out := io.StringIO()))
    assert "rebuilt: 2 load rows" in out.getvalue()
    assert "load rows match the tickets" in out.getvalue()
    ids = [a.pk for a in agents]
    assert figures(group, ids, now) == counted(group, ids, now)
