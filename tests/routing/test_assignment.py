"""Assignment at approval: round robin and least load, on real PostgreSQL."""

import pytest

from routing.strategies.registry import get_strategy, strategy_choices
from tests.factories import ApproverFactory, HandlerGroupFactory, UserFactory
from ticketing.models import Ticket, TicketStatus
from workflow import services

pytestmark = pytest.mark.django_db


@pytest.fixture
def members(db):
    return [UserFactory(username=f"m{i}") for i in range(3)]


def approve_n(group, n, approver, applicant):
    handlers = []
    for i in range(n):
        ticket = services.ticket_submit(
            creator=applicant, title=f"t{i}", content="c", priority=2, handler_group_id=group.pk
        )
        handlers.append(services.ticket_approve(ticket_id=ticket.pk, approver=approver).handler_id)
    return handlers


def test_registry_derives_the_choices():
    assert strategy_choices()[:3] == [(0, "manual"), (1, "round robin"), (2, "least load")]
    with pytest.raises(LookupError):
        get_strategy(99)


def test_round_robin_starts_at_the_first_member_and_cycles(members, approver, applicant):
    group = HandlerGroupFactory(members=members, assign_strategy=1)
    ids = [m.pk for m in members]
    assert approve_n(group, 7, approver, applicant) == ids + ids + ids[:1]
    group.refresh_from_db()
    assert group.last_assign_index == 0


def test_round_robin_survives_members_leaving_and_joining(members, approver, applicant):
    group = HandlerGroupFactory(members=members, assign_strategy=1)
    approve_n(group, 2, approver, applicant)  # m0, m1; cursor at index 1
    group.refresh_from_db()
    group.member_ids = [members[0].pk]  # shrink below the cursor
    group.save()
    assert approve_n(group, 2, approver, applicant) == [members[0].pk, members[0].pk]
    newcomer = UserFactory(username="newcomer")
    group.refresh_from_db()
    group.member_ids = [members[0].pk, newcomer.pk]
    group.save()
    assert approve_n(group, 2, approver, applicant) == [newcomer.pk, members[0].pk]


def test_round_robin_skips_deactivated_accounts(members, approver, applicant):
    group = HandlerGroupFactory(members=members, assign_strategy=1)
    members[1].is_active = False
    members[1].save()
    assert approve_n(group, 3, approver, applicant) == [members[0].pk, members[2].pk, members[0].pk]


def test_assigned_ticket_is_pending_process_with_handler_and_time(members, approver, applicant):
    group = HandlerGroupFactory(members=members, assign_strategy=1)
    ticket = services.ticket_submit(
        creator=applicant, title="t", content="c", priority=2, handler_group_id=group.pk
    )
    ticket = services.ticket_approve(ticket_id=ticket.pk, approver=approver)
    assert ticket.ticket_status == TicketStatus.PENDING_PROCESS
    assert ticket.assigned_time is not None
    assert ticket.records.filter(action="assign", detail__strategy=1).exists()


def test_least_load_picks_the_member_with_fewest_active_tickets(members, approver, applicant):
    group = HandlerGroupFactory(members=members, assign_strategy=2)
    first = approve_n(group, 3, approver, applicant)
    # Nobody had a ticket: ties go to the member never assigned, in member order.
    assert first == [m.pk for m in members]
    # m0 completes theirs: now m0 has the least load.
    ticket = Ticket.objects.get(handler=members[0])
    services.ticket_accept(ticket_id=ticket.pk, handler=members[0])
    services.ticket_complete(ticket_id=ticket.pk, handler=members[0])
    assert approve_n(group, 1, approver, applicant) == [members[0].pk]


def test_least_load_ties_go_to_the_member_assigned_longest_ago(members, approver, applicant):
    group = HandlerGroupFactory(members=members[:2], assign_strategy=2)
    approve_n(group, 2, approver, applicant)  # m0 then m1, one each
    for member in members[:2]:
        ticket = Ticket.objects.get(handler=member)
        services.ticket_accept(ticket_id=ticket.pk, handler=member)
        services.ticket_complete(ticket_id=ticket.pk, handler=member)
    # Both at 0 active; m0 was assigned longer ago.
    assert approve_n(group, 1, approver, applicant) == [members[0].pk]


def test_member_figures_come_from_one_query(approver, applicant, django_assert_num_queries):
    """Least load (and every strategy) gets loads, offers, today's count, last assignment and
    capacity of all members from one query, not one COUNT per member."""
    from django.utils import timezone

    from routing.strategies.candidates import member_rows

    many = [UserFactory(username=f"x{i}") for i in range(15)]
    group = HandlerGroupFactory(members=many, assign_strategy=2)
    approve_n(group, 20, approver, applicant)
    with django_assert_num_queries(1):
        rows = member_rows(group=group, member_ids=[m.pk for m in many], now=timezone.now())
    assert len(rows) == 15
    assert sum(row.active for row in rows) == 20
    assert max(row.active for row in rows) - min(row.active for row in rows) <= 1


def test_empty_group_and_no_group_leave_the_ticket_in_the_pool(approver, applicant):
    empty = HandlerGroupFactory(members=[], assign_strategy=1)
    assert approve_n(empty, 1, approver, applicant) == [None]
    ticket = services.ticket_submit(creator=applicant, title="t", content="c", priority=2)
    ticket = services.ticket_approve(ticket_id=ticket.pk, approver=approver)
    assert ticket.ticket_status == TicketStatus.PENDING_ASSIGN


def test_a_failing_strategy_does_not_block_approval(members, approver, applicant, monkeypatch):
    from routing.strategies import round_robin

    def explode(self, ctx):
        raise RuntimeError("strategy bug")

    monkeypatch.setattr(round_robin.RoundRobin, "pick", explode)
    group = HandlerGroupFactory(members=members, assign_strategy=1)
    ticket = services.ticket_submit(
        creator=applicant, title="t", content="c", priority=2, handler_group_id=group.pk
    )
    ticket = services.ticket_approve(ticket_id=ticket.pk, approver=approver)
    assert ticket.process_status == 2
    assert ticket.ticket_status == TicketStatus.PENDING_ASSIGN


def test_disabled_group_assigns_nobody(members, approver, applicant):
    group = HandlerGroupFactory(members=members, assign_strategy=1, status=0)
    ticket = services.ticket_submit(
        creator=applicant, title="t", content="c", priority=2, handler_group_id=None
    )
    ticket.handler_group = group
    ticket.save()
    assert services.ticket_approve(ticket_id=ticket.pk, approver=approver).handler_id is None


def test_approver_factory_has_permission():
    assert ApproverFactory().has_perm("ticketing.approve_ticket")
