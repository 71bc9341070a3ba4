"""Presence-aware strategies, capacity, offers and reclaim, draining and overflow."""

from datetime import timedelta

import pytest
from django.utils import timezone

from handler_groups.models import MemberCapacity
from notifications.models import Notification
from routing import drain, idle_pool, offers, overflow, presence
from routing.models import AssignmentEvent
from tests.factories import HandlerGroupFactory, UserFactory
from ticketing.models import Ticket, TicketStatus
from workflow import services

pytestmark = pytest.mark.django_db


@pytest.fixture
def agents():
    return [UserFactory(username=f"agent{i}") for i in range(4)]


@pytest.fixture
def submit_approve(applicant, approver, on_commit):
    def make(group, now=None, priority=2):
        now = now or timezone.now()
        ticket = services.ticket_submit(
            creator=applicant,
            title="t",
            content="c",
            priority=priority,
            handler_group_id=group.pk,
            now=now,
        )
        with on_commit(execute=True):
            return services.ticket_approve(ticket_id=ticket.pk, approver=approver, now=now)

    return make


def online(users, on_commit, now=None):
    with on_commit(execute=True):
        for user in users:
            presence.heartbeat(user=user, now=now or timezone.now())


@pytest.mark.parametrize("strategy", [1, 2, 3, 4])
def test_every_strategy_skips_members_who_are_not_available(
    strategy, agents, submit_approve, on_commit
):
    group = HandlerGroupFactory(members=agents, assign_strategy=strategy, requires_presence=True)
    online([agents[2]], on_commit)
    for _ in range(3):
        assert submit_approve(group).handler_id == agents[2].pk
    presence.set_state(user=agents[2], state="busy")
    assert submit_approve(group).ticket_status == TicketStatus.PENDING_ASSIGN


def test_groups_without_presence_treat_every_member_as_available(agents, submit_approve):
    group = HandlerGroupFactory(members=agents, assign_strategy=4)  # longest idle, no presence
    picked = [submit_approve(group).handler_id for _ in range(8)]
    assert sorted(picked) == sorted([a.pk for a in agents] * 2)


def test_round_robin_cursor_moves_to_the_member_actually_chosen(agents, submit_approve, on_commit):
    group = HandlerGroupFactory(members=agents, assign_strategy=1, requires_presence=True)
    online([agents[0], agents[2]], on_commit)
    assert [submit_approve(group).handler_id for _ in range(4)] == [
        agents[0].pk,
        agents[2].pk,
        agents[0].pk,
        agents[2].pk,
    ]
    group.refresh_from_db()
    assert group.last_assign_index == 2


def test_online_priority_prefers_the_agent_online_longest(agents, submit_approve, on_commit):
    group = HandlerGroupFactory(members=agents, assign_strategy=3, requires_presence=True)
    now = timezone.now()
    online([agents[3]], on_commit, now - timedelta(hours=2))
    online([agents[1]], on_commit, now - timedelta(hours=1))
    presence.heartbeat(user=agents[3], now=now)
    presence.heartbeat(user=agents[1], now=now)
    assert {submit_approve(group).handler_id for _ in range(3)} == {agents[3].pk}


def test_longest_idle_picks_by_idle_time_with_warmup(agents, submit_approve, on_commit):
    group = HandlerGroupFactory(
        members=agents[:3], assign_strategy=4, requires_presence=True, warmup_seconds=600
    )
    now = timezone.now()
    online([agents[0]], on_commit, now - timedelta(minutes=30))  # idle since -20 min
    online([agents[1]], on_commit, now - timedelta(minutes=5))  # warm-up: idle from +5 min
    online([agents[2]], on_commit, now - timedelta(minutes=15))  # idle since -5 min
    for agent in agents[:3]:
        presence.heartbeat(user=agent, now=now)
    picks = [submit_approve(group, now=now).handler_id for _ in range(2)]
    assert picks == [agents[0].pk, agents[2].pk]
    # Both are idle again from "now"; the newcomer still warms up until +5 min, so the next
    # ticket goes to one of the others, not to them.
    assert submit_approve(group, now=now).handler_id in (agents[0].pk, agents[2].pk)
    # At +10 min the others (idle since "now") go first; then the newcomer, idle since +5 min,
    # is the longest idle: each of the three gets one.
    later = now + timedelta(minutes=10)
    for agent in agents[:3]:
        presence.heartbeat(user=agent, now=later)
    picks = [submit_approve(group, now=later).handler_id for _ in range(3)]
    assert picks[2] == agents[1].pk and set(picks) == {a.pk for a in agents[:3]}


def test_max_active_caps_each_member(agents, submit_approve):
    group = HandlerGroupFactory(members=agents[:2], assign_strategy=1, max_active=2)
    MemberCapacity.objects.create(group=group, user=agents[1], max_active=1)
    picks = [submit_approve(group).handler_id for _ in range(5)]
    assert picks == [agents[0].pk, agents[1].pk, agents[0].pk, None, None]


def test_daily_cap_is_soft(agents, submit_approve):
    group = HandlerGroupFactory(members=agents[:2], assign_strategy=2, daily_cap=1)
    picks = [submit_approve(group).handler_id for _ in range(4)]
    assert picks[:2] == [agents[0].pk, agents[1].pk]
    assert set(picks[2:]) == {agents[0].pk, agents[1].pk}  # over the cap: nobody else is left


def test_waiting_tickets_drain_to_an_agent_who_comes_online_most_urgent_first(
    agents, submit_approve, on_commit
):
    from sla.models import SlaRule

    SlaRule.objects.create(name="urgent", priority=4, response_hours=1, resolve_hours=2, sort=1)
    group = HandlerGroupFactory(
        members=agents[:1], assign_strategy=1, requires_presence=True, max_active=2
    )
    now = timezone.now()
    low = submit_approve(group, now=now - timedelta(minutes=30), priority=1)
    urgent = submit_approve(group, now=now - timedelta(minutes=10), priority=4)
    medium = submit_approve(group, now=now - timedelta(minutes=20), priority=2)
    assert {t.ticket_status for t in (low, urgent, medium)} == {TicketStatus.PENDING_ASSIGN}
    # The heartbeat itself drains the queue, in its own transaction: no worker involved.
    presence.heartbeat(user=agents[0], now=now)
    handled = set(Ticket.objects.filter(handler=agents[0]).values_list("pk", flat=True))
    assert handled == {urgent.pk, low.pk}  # up to capacity, by SLA urgency
    assert Ticket.objects.get(pk=medium.pk).ticket_status == TicketStatus.PENDING_ASSIGN
    # Completing one frees capacity: the last waiting ticket is drained at once.
    services.ticket_accept(ticket_id=urgent.pk, handler=agents[0])
    with on_commit(execute=True):
        services.ticket_complete(ticket_id=urgent.pk, handler=agents[0])
    assert Ticket.objects.get(pk=medium.pk).handler_id == agents[0].pk


def test_unaccepted_offer_is_reclaimed_and_reassigned_excluding_who_missed_it(
    agents, submit_approve, on_commit
):
    group = HandlerGroupFactory(members=agents[:2], assign_strategy=1, offer_timeout_seconds=120)
    now = timezone.now()
    ticket = submit_approve(group, now=now)
    first = ticket.handler_id
    assert Notification.objects.filter(recipient_id=first, template_code="ticket-offered").exists()
    # The delayed task fires early or the ticket was accepted: nothing happens.
    assert offers.offer_sweep(now=now + timedelta(seconds=60)) == 0
    assert offers.offer_sweep(now=now + timedelta(seconds=121)) == 1
    ticket.refresh_from_db()
    assert ticket.handler_id not in (None, first)
    assert ticket.ticket_status == TicketStatus.PENDING_PROCESS
    assert AssignmentEvent.objects.filter(kind="missed", user_id=first).count() == 1
    assert ticket.records.filter(action="reclaim").count() == 1
    assert Notification.objects.filter(
        recipient_id=first, template_code="ticket-reclaimed"
    ).exists()
    # The second agent misses it too: nobody is left who has not missed it.
    later = ticket.assigned_time + timedelta(seconds=121)
    assert offers.offer_sweep(now=later) == 1
    ticket.refresh_from_db()
    assert ticket.ticket_status == TicketStatus.PENDING_ASSIGN and ticket.handler_id is None


def test_reclaim_revalidates_the_offer(agents, submit_approve):
    group = HandlerGroupFactory(members=agents[:2], assign_strategy=1, offer_timeout_seconds=60)
    ticket = submit_approve(group)
    services.ticket_accept(ticket_id=ticket.pk, handler=ticket.handler)
    assert (
        offers.reclaim_offer(
            ticket_id=ticket.pk, handler_id=ticket.handler_id, assigned_time=ticket.assigned_time
        )
        is False
    )
    ticket.refresh_from_db()
    assert ticket.ticket_status == TicketStatus.PROCESSING


def test_offer_timeout_task_is_scheduled_with_a_countdown(
    agents, applicant, approver, on_commit, monkeypatch
):
    from celery import current_app

    from routing import tasks

    calls = []
    monkeypatch.setattr(
        current_app,
        "send_task",
        lambda name, args, countdown: calls.append((name, args, countdown)),
    )
    group = HandlerGroupFactory(members=agents[:1], assign_strategy=1, offer_timeout_seconds=90)
    ticket = services.ticket_submit(
        creator=applicant, title="t", content="c", priority=2, handler_group_id=group.pk
    )
    with on_commit(execute=True):
        ticket = services.ticket_approve(ticket_id=ticket.pk, approver=approver)
    assert calls == [
        ("ticketing.reclaim_offer", (ticket.pk, agents[0].pk, ticket.assigned_time.isoformat()), 90)
    ]
    # The task itself re-validates: run it as the worker would, after the timeout.
    assert tasks.reclaim_offer.name == calls[0][0]
    assert tasks.reclaim_offer.run(*calls[0][1]) is True


def test_a_member_holding_an_offer_gets_no_second_one(agents, submit_approve):
    group = HandlerGroupFactory(members=agents[:2], assign_strategy=2, offer_timeout_seconds=300)
    picks = [submit_approve(group).handler_id for _ in range(3)]
    assert picks == [agents[0].pk, agents[1].pk, None]


def test_failed_offer_push_reclaims_at_once(agents, submit_approve, monkeypatch):
    from notifications import delivery, sending
    from notifications.models import NotifyTemplate, OutboxDelivery, Webhook

    monkeypatch.setattr(sending, "enqueue_deliveries", lambda ids: None)
    NotifyTemplate.objects.filter(code="ticket-offered").update(channels=["in_app", "webhook"])
    Webhook.objects.create(
        name="pusher", url="http://127.0.0.1:9/push", secret="s", timeout_seconds=0.5
    )
    group = HandlerGroupFactory(members=agents[:2], assign_strategy=1, offer_timeout_seconds=600)
    ticket = submit_approve(group)
    first = ticket.handler_id
    pushed = OutboxDelivery.objects.get(notification__recipient_id=first)
    # The first failed attempt (a transient one, to be retried) reclaims the offer at once.
    assert delivery.delivery_attempt(delivery_id=pushed.pk) == "pending"
    ticket.refresh_from_db()
    assert ticket.handler_id == agents[1].pk
    assert ticket.records.get(action="reclaim").detail["reason"] == "offer push failed"


def test_overflow_to_another_group_then_the_leader(agents, submit_approve):
    leader = UserFactory(username="lead")
    backup = HandlerGroupFactory(name="backup", members=[agents[3]], assign_strategy=1)
    group = HandlerGroupFactory(
        name="front",
        members=agents[:1],
        assign_strategy=1,
        requires_presence=True,
        overflow_group=backup,
        overflow_after_seconds=300,
        leader=leader,
    )
    now = timezone.now()
    ticket = submit_approve(group, now=now)
    assert ticket.ticket_status == TicketStatus.PENDING_ASSIGN  # nobody online in front
    assert overflow.overflow_sweep(now=now + timedelta(seconds=200)) == 0
    assert overflow.overflow_sweep(now=now + timedelta(seconds=301)) == 1
    ticket.refresh_from_db()
    assert ticket.handler_group_id == backup.pk and ticket.handler_id == agents[3].pk
    assert ticket.records.get(action="overflow").detail == {
        "field": "ticket_status",
        "from_group_id": group.pk,
        "to_group_id": backup.pk,
    }
    # No overflow group: the leader hears about it, once.
    group.overflow_group = None
    group.save()
    stuck = submit_approve(group, now=now)
    overflow.overflow_sweep(now=now + timedelta(seconds=400))
    overflow.overflow_sweep(now=now + timedelta(seconds=500))
    notices = Notification.objects.filter(recipient=leader, template_code="ticket-overflow")
    assert [n.ticket_id for n in notices] == [stuck.pk]


def test_assignment_metrics_api(api, agents, submit_approve, staff):
    group = HandlerGroupFactory(members=agents[:2], assign_strategy=1)
    for _ in range(3):
        submit_approve(group)
    body = api.as_user(staff).get(f"/api/metrics/assignment/?group={group.pk}").json()
    assert [(a["user_id"], a["assigned"]) for a in body["agents"]] == [
        (agents[0].pk, 2),
        (agents[1].pk, 1),
    ]
    assert body["stddev_assigned"] == pytest.approx(0.5)
    assert body["pick_ms_p50"] is not None and body["pick_ms_p95"] >= body["pick_ms_p50"]
    assert (
        api.as_user(agents[0]).get(f"/api/metrics/assignment/?group={group.pk}").status_code == 403
    )
    assert api.as_user(staff).get("/api/metrics/assignment/?group=abc").status_code == 400
    assert api.as_user(staff).get("/api/metrics/assignment/?group=999999").status_code == 404


def test_prometheus_metrics_endpoint(client, agents, submit_approve, settings):
    settings.METRICS_TOKEN = "scrape-me"
    group = HandlerGroupFactory(members=agents[:1], assign_strategy=1)
    submit_approve(group)
    body = client.get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-me").content.decode()
    assert "assignment_pick_seconds_bucket" in body
    assert "notifications_sent_total" in body


def test_pool_snapshot_marks_offers(agents, submit_approve, on_commit):
    group = HandlerGroupFactory(
        members=agents[:2], assign_strategy=4, requires_presence=True, offer_timeout_seconds=60
    )
    online(agents[:2], on_commit)
    ticket = submit_approve(group)
    assert ticket.handler_id in idle_pool.snapshot(group.pk)["offered"]


def test_online_priority_without_presence_spreads_by_last_assignment(agents, submit_approve):
    group = HandlerGroupFactory(members=agents[:3], assign_strategy=3)
    picks = [submit_approve(group).handler_id for _ in range(6)]
    assert picks == [a.pk for a in agents[:3]] * 2


@pytest.mark.parametrize("strategy", [1, 2, 3, 4])
def test_a_heartbeat_over_the_api_takes_a_waiting_ticket(
    api, agents, applicant, approver, strategy
):
    group = HandlerGroupFactory(
        members=agents[:2], assign_strategy=strategy, requires_presence=True
    )
    ticket = services.ticket_submit(
        creator=applicant, title="t", content="c", priority=2, handler_group_id=group.pk
    )
    assert services.ticket_approve(ticket_id=ticket.pk, approver=approver).ticket_status == 1
    assert api.as_user(agents[1]).post("/api/presence/heartbeat/").status_code == 200
    ticket.refresh_from_db()
    assert (ticket.ticket_status, ticket.handler_id) == (TicketStatus.PENDING_PROCESS, agents[1].pk)


def test_a_drain_with_nobody_free_stops_after_one_decision(
    agents, submit_approve, django_assert_max_num_queries
):
    group = HandlerGroupFactory(members=agents[:2], assign_strategy=1, requires_presence=True)
    for _ in range(30):
        submit_approve(group)
    # Lock, queue, exclusions, one routing decision (its savepoint): not one per ticket.
    with django_assert_max_num_queries(8):
        assert drain.drain_group(group_id=group.pk) == 0
