"""seed_demo --history-days: a believable, consistent past for the demo groups and tickets in
every console state now (demo/history.py)."""

import time
from collections import Counter
from datetime import UTC, datetime
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import transaction

from demo import history as demo_history
from handler_groups.models import HandlerGroup
from routing.models import AgentPresence, AssignmentEvent, PresenceSpan, PresenceState
from sla.models import ClockResult, SlaEvent, SlaOutcome
from ticketing.models import ProcessStatus, Ticket, TicketRecord, TicketStatus

pytestmark = pytest.mark.django_db

# A Thursday afternoon: the week before it has five weekdays and a weekend.
NOW = datetime(2026, 11, 26, 15, 0, tzinfo=UTC)


def _seed(*args: str) -> str:
    out = StringIO()
    call_command("seed_demo", *args, stdout=out)
    return out.getvalue()


def _generate(days: int, seed: int = demo_history.DEFAULT_SEED):
    _seed()  # users and groups only
    from django.contrib.auth import get_user_model

    users = {u.username: u for u in get_user_model().objects.all()}
    return demo_history.generate(days=days, users=users, seed=seed, now=NOW)


def test_command_seeds_history_with_every_console_state_once():
    started = time.monotonic()
    out = _seed("--history-days", "3")
    assert time.monotonic() - started < 30
    assert "Demo history:" in out and "tickets" in out and "ETA" in out
    tickets = Ticket.objects.all()
    assert tickets.count() > 20

    def open_(**kw):
        return tickets.filter(process_status=ProcessStatus.APPROVED, **kw)

    assert tickets.filter(process_status=ProcessStatus.APPROVING).exists()
    assert open_(ticket_status=TicketStatus.PENDING_ASSIGN, response_timeout=False).exists()
    assert open_(ticket_status=TicketStatus.PENDING_PROCESS, accepted_time=None).exists()
    assert open_(ticket_status=TicketStatus.PROCESSING, sla_paused=False).exists()
    assert open_(ticket_status=TicketStatus.PROCESSING, sla_paused=True).exists()
    assert open_(ticket_status=TicketStatus.COMPLETED).exists()
    assert open_(ticket_status=TicketStatus.CLOSED).exists()
    breached = open_(ticket_status__in=[1, 2, 3], response_timeout=True)
    assert breached.exists()
    assert SlaEvent.objects.filter(ticket__in=breached, state="fired").exists()
    assert open_(ticket_status__in=[1, 2, 3], resolve_timeout=True).exists()

    # Running it again (make run's every start) adds nothing.
    counts = (Ticket.objects.count(), TicketRecord.objects.count(), PresenceSpan.objects.count())
    out = _seed("--history-days", "3")
    assert "none added" in out
    assert counts == (
        Ticket.objects.count(),
        TicketRecord.objects.count(),
        PresenceSpan.objects.count(),
    )
    assert HandlerGroup.objects.count() == 2


def test_arrivals_are_shaped_by_weekday_and_hour():
    summary = _generate(days=7)
    assert 100 < summary.tickets < 400
    history = Ticket.objects.filter(submitted_time__lt=datetime(2026, 11, 26, tzinfo=UTC))
    by_weekday = Counter(t.submitted_time.weekday() for t in history)
    by_hour = Counter(t.submitted_time.hour for t in history)
    weekday_mean = sum(by_weekday[d] for d in range(5)) / 5
    weekend_mean = (by_weekday[5] + by_weekday[6]) / 2
    assert weekday_mean > 3 * weekend_mean
    business = sum(by_hour[h] for h in (9, 10, 11, 13, 14, 15))
    night = sum(by_hour[h] for h in (0, 1, 2, 3, 4, 5))
    assert business > 8 * max(night, 1)
    assert by_hour[10] > by_hour[12] < by_hour[14]


def test_every_ticket_is_consistent():
    summary = _generate(days=7)
    assert summary.response_breaches + summary.resolve_breaches >= 1
    events = {e.ticket_id: e for e in AssignmentEvent.objects.all()}
    for ticket in Ticket.objects.select_related("handler_group"):
        actions = list(ticket.records.values_list("action", flat=True))
        assert actions[0] == "submit"
        if ticket.process_status == ProcessStatus.APPROVED:
            assert ticket.handler_group_id and ticket.sla_rule_id and "approve" in actions
            assert ticket.response_deadline and ticket.resolve_deadline
            assert ticket.approved_time >= ticket.submitted_time
        if ticket.handler_id:
            assert ticket.handler_id in ticket.handler_group.member_ids
            assert events[ticket.pk].user_id == ticket.handler_id
            assert events[ticket.pk].created == ticket.assigned_time >= ticket.approved_time
        else:
            assert ticket.pk not in events
        if ticket.accepted_time:
            assert ticket.accepted_time >= ticket.assigned_time
            assert ticket.responded_time == ticket.accepted_time
        if ticket.completed_time:
            assert ticket.completed_time > ticket.accepted_time
            outcome = SlaOutcome.objects.get(ticket=ticket)
            assert outcome.response_result in (ClockResult.MET, ClockResult.BREACHED)
            assert (outcome.response_result == ClockResult.BREACHED) == ticket.response_timeout
        else:
            assert not SlaOutcome.objects.filter(ticket=ticket).exists()
        if ticket.ticket_status == TicketStatus.CLOSED:
            assert ticket.closed_time >= ticket.completed_time
        times = list(ticket.records.values_list("created", flat=True))
        assert times == sorted(times)
    # Handlers were on shift (available) when their tickets were assigned.
    available = list(
        PresenceSpan.objects.filter(state=PresenceState.AVAILABLE).values_list(
            "user_id", "started", "ended"
        )
    )
    simulated = AssignmentEvent.objects.exclude(ticket__title__in=demo_history.STAGED_TITLES)
    for event in simulated:
        assert any(
            u == event.user_id and s <= event.created < (e or NOW) for u, s, e in available
        ), event
    # Presence: contiguous spans per agent, one open, with a presence row.
    for presence in AgentPresence.objects.all():
        spans = list(PresenceSpan.objects.filter(user_id=presence.pk).order_by("started"))
        assert spans and spans[-1].ended is None
        assert all(a.ended == b.started for a, b in zip(spans, spans[1:], strict=False))
        assert {s.state for s in spans} >= {PresenceState.AVAILABLE, PresenceState.BUSY}


def test_deterministic_for_a_seed():
    def run(seed):
        with transaction.atomic():
            _generate(days=4, seed=seed)
            rows = list(
                Ticket.objects.order_by("submitted_time", "title").values_list(
                    "submitted_time", "title", "handler__username", "ticket_status"
                )
            )
            transaction.set_rollback(True)
        return rows

    assert run(5) == run(5)
    assert run(5) != run(6)


def test_the_history_has_real_conversations():
    _generate(days=7)
    from ticketing.models import ReplyType, TicketReply

    replies = TicketReply.objects.select_related("ticket")
    public = replies.filter(reply_type=ReplyType.PUBLIC)
    # Both sides: tickets with the applicant's and the agent's public replies.
    both = [
        t
        for t in Ticket.objects.filter(public_reply_count__gte=2)
        if {r.author_id for r in t.replies.filter(reply_type=ReplyType.PUBLIC)}
        >= {t.creator_id, t.handler_id}
    ]
    assert len(both) >= 5
    notes = replies.filter(reply_type=ReplyType.INTERNAL)
    assert notes.count() >= 5
    # Notes are written by the ticket's handler, never by the applicant.
    assert all(n.author_id == n.ticket.handler_id for n in notes)
    # Paused and resumed: the agent's question just before the pause, the applicant's answer
    # at the resume, which the applicant's reply caused (same instant, reply first).
    resumed = Ticket.objects.filter(records__action="sla_resume", sla_paused=False).distinct()
    assert resumed.exists()
    for ticket in resumed:
        records = list(ticket.records.order_by("created", "id"))
        resume = next(i for i, r in enumerate(records) if r.action == "sla_resume")
        answer = records[resume - 1]
        assert answer.action == "reply" and answer.actor_id == ticket.creator_id
        assert answer.created == records[resume].created
        assert TicketReply.objects.get(pk=answer.detail["reply_id"]).author_id == ticket.creator_id
    # Counts and records agree with the rows; bodies are people's words, no staging text.
    for ticket in Ticket.objects.filter(reply_count__gt=0):
        assert ticket.reply_count == ticket.replies.count()
        assert ticket.public_reply_count == ticket.replies.filter(reply_type=1).count()
        ids = set(ticket.records.filter(action="reply").values_list("detail__reply_id", flat=True))
        assert ids == set(ticket.replies.values_list("pk", flat=True))
        times = [r.created for r in ticket.replies.order_by("id")]
        assert times == sorted(times) and all(t <= NOW for t in times)
    texts = [
        *Ticket.objects.values_list("content", flat=True),
        *replies.values_list("content", flat=True),
    ]
    assert not [t for t in texts if "demo" in t.lower()]
    assert len(set(Ticket.objects.values_list("content", flat=True))) >= 15
    assert public.filter(content__regex=r"[\u4e00-\u9fff]").exists()  # a few in Chinese
