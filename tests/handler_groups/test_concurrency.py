"""Races that must be safe on real PostgreSQL with real parallel connections."""

from collections import Counter

import pytest

from config.errors import ConflictError
from tests.concurrency import run_in_parallel
from tests.factories import ApproverFactory, HandlerGroupFactory, UserFactory
from ticketing.models import Ticket, TicketRecord
from workflow import services

pytestmark = pytest.mark.django_db(transaction=True)


def submit_many(group, n):
    applicant = UserFactory(username="applicant")
    return [
        services.ticket_submit(
            creator=applicant, title=f"t{i}", content="c", priority=2, handler_group_id=group.pk
        ).pk
        for i in range(n)
    ]


def test_parallel_accepts_of_one_ticket_have_exactly_one_winner():
    handlers = [UserFactory(username=f"h{i}") for i in range(8)]
    group = HandlerGroupFactory(members=handlers, assign_strategy=0)
    (ticket_id,) = submit_many(group, 1)
    services.ticket_approve(ticket_id=ticket_id, approver=ApproverFactory())

    results = run_in_parallel(
        [lambda h=h: services.ticket_accept(ticket_id=ticket_id, handler=h) for h in handlers]
    )

    winners = [r for r in results if isinstance(r, Ticket)]
    losers = [r for r in results if isinstance(r, ConflictError)]
    assert len(winners) == 1 and len(losers) == 7, results
    ticket = Ticket.objects.get(pk=ticket_id)
    assert ticket.handler_id == winners[0].handler_id
    assert ticket.records.filter(action="accept").count() == 1


def test_parallel_accepts_over_http_one_200_rest_409(live_server):
    import requests
    from knox.models import AuthToken

    handlers = [UserFactory(username=f"h{i}") for i in range(6)]
    group = HandlerGroupFactory(members=handlers, assign_strategy=0)
    (ticket_id,) = submit_many(group, 1)
    services.ticket_approve(ticket_id=ticket_id, approver=ApproverFactory())
    tokens = [AuthToken.objects.create(user=h)[1] for h in handlers]
    url = f"{live_server.url}/api/tickets/{ticket_id}/accept/"

    statuses = run_in_parallel(
        [
            lambda t=t: requests.post(url, headers={"Authorization": f"Token {t}"}, timeout=30)
            for t in tokens
        ]
    )
    assert sorted(r.status_code for r in statuses) == [200, 409, 409, 409, 409, 409]


def test_parallel_round_robin_approvals_share_evenly_and_lose_no_update():
    members = [UserFactory(username=f"m{i}") for i in range(5)]
    group = HandlerGroupFactory(members=members, assign_strategy=1)
    ticket_ids = submit_many(group, 40)
    approvers = [ApproverFactory(username=f"a{i}") for i in range(8)]
    chunks = [ticket_ids[i::8] for i in range(8)]

    def approve_chunk(approver, chunk):
        return [services.ticket_approve(ticket_id=t, approver=approver).handler_id for t in chunk]

    results = run_in_parallel(
        [lambda a=a, c=c: approve_chunk(a, c) for a, c in zip(approvers, chunks, strict=True)]
    )
    assert not [r for r in results if isinstance(r, BaseException)], results
    shares = Counter(Ticket.objects.values_list("handler_id", flat=True))
    assert set(shares) == {m.pk for m in members}
    assert max(shares.values()) - min(shares.values()) <= 1
    # Every approval advanced the cursor exactly once: 40 picks over 5 members.
    group.refresh_from_db()
    assert group.last_assign_index == (40 - 1) % 5
    # Consecutive assignments, in the order they took the group lock (their audit records'
    # ids), never repeat a member.
    ordered = list(
        TicketRecord.objects.filter(action="assign")
        .order_by("id")
        .values_list("detail__handler_id", flat=True)
    )
    assert len(ordered) == 40
    assert all(a != b for a, b in zip(ordered, ordered[1:], strict=False))


def test_parallel_least_load_approvals_stay_balanced():
    members = [UserFactory(username=f"m{i}") for i in range(4)]
    group = HandlerGroupFactory(members=members, assign_strategy=2)
    ticket_ids = submit_many(group, 24)
    approvers = [ApproverFactory(username=f"a{i}") for i in range(6)]
    chunks = [ticket_ids[i::6] for i in range(6)]
    results = run_in_parallel(
        [
            lambda a=a, c=c: [services.ticket_approve(ticket_id=t, approver=a) for t in c]
            for a, c in zip(approvers, chunks, strict=True)
        ]
    )
    assert not [r for r in results if isinstance(r, BaseException)], results
    shares = Counter(Ticket.objects.values_list("handler_id", flat=True))
    assert sorted(shares.values()) == [6, 6, 6, 6]
