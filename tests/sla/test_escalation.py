"""Escalation ladders: levels per rule on both clocks, each fired once, in order, to the right
people, with their actions; pauses; the ticket API's `sla_events`. Time is explicit: the scan
runs `now=`; HTTP requests run under time-machine."""

from datetime import timedelta
from decimal import Decimal

import pytest
import time_machine

from handler_groups.models import HandlerGroup
from notifications.models import Notification
from sla import ladder
from sla.models import SlaEvent
from sla.rules import rule_save, set_levels
from sla.scanner import sla_scan
from tests.factories import HandlerGroupFactory, UserFactory
from tests.sla.conftest import T0
from ticketing.models import Ticket
from workflow import services

pytestmark = pytest.mark.django_db

L = ladder.Level


def inbox(ticket) -> list[tuple[str, str, int]]:
    """(recipient, template, level) of the ticket's SLA notices, oldest first."""
    return [
        (n.recipient.username, n.template_code, n.params["level"])
        for n in Notification.objects.filter(ticket=ticket, template_code__startswith="ticket-sla")
        .select_related("recipient")
        .order_by("id")
    ]


@pytest.fixture
def boss(people):
    boss = UserFactory(username="boss")
    group = people["group"]
    group.escalation_contact = boss
    group.save()
    return boss


@pytest.fixture
def three_level_rule(rule):
    """Response 1 h and resolve 4 h, each with: 50 % → handler; 10 min before → handler and
    leader; 15 min after → escalation contact."""
    set_levels(
        rule,
        [
            L(1, "response", ladder.PERCENT_ELAPSED, Decimal(50), ("handler",)),
            L(2, "response", ladder.MINUTES_BEFORE, Decimal(10), ("handler", "leader")),
            L(3, "response", ladder.MINUTES_AFTER, Decimal(15), ("escalation_contact",)),
            L(4, "resolve", ladder.PERCENT_ELAPSED, Decimal(50), ("handler",)),
            L(5, "resolve", ladder.MINUTES_BEFORE, Decimal(10), ("handler", "leader")),
            L(6, "resolve", ladder.MINUTES_AFTER, Decimal(15), ("escalation_contact",)),
        ],
    )
    return rule


def test_a_new_rule_gets_the_default_ladder(rule):
    levels = [
        (lv.position, lv.clock, lv.trigger, lv.value, lv.notify)
        for lv in rule.levels.order_by("position")
    ]
    assert levels == [
        (1, "response", "minutes_before", Decimal(15), ["handler", "leader"]),
        (2, "response", "minutes_after", Decimal(0), ["handler", "leader"]),
        (3, "resolve", "minutes_before", Decimal(15), ["handler", "leader"]),
        (4, "resolve", "minutes_after", Decimal(0), ["handler", "leader"]),
    ]
    rule_save(rule=rule, warn_before_minutes=20)  # only the warning time: the ladder follows
    assert [lv.value for lv in rule.levels.order_by("position")] == [20, 0, 20, 0]


def test_three_levels_on_both_clocks_fire_in_order_to_the_right_people(
    approved, three_level_rule, people, boss, api
):
    ticket = approved()  # submitted and approved at T0; the handler is assigned
    events = {(e.clock, e.level): e.due_at for e in SlaEvent.objects.filter(ticket=ticket)}
    assert events == {
        ("response", 1): T0 + timedelta(minutes=30),
        ("response", 2): T0 + timedelta(minutes=50),
        ("response", 3): T0 + timedelta(minutes=75),
        ("resolve", 4): T0 + timedelta(hours=2),
        ("resolve", 5): T0 + timedelta(hours=3, minutes=50),
        ("resolve", 6): T0 + timedelta(hours=4, minutes=15),
    }
    moments = [
        T0 + timedelta(minutes=29),  # nothing yet
        T0 + timedelta(minutes=30),
        T0 + timedelta(minutes=50),
        T0 + timedelta(minutes=75),
        T0 + timedelta(hours=2),
        T0 + timedelta(hours=3, minutes=50),
        T0 + timedelta(hours=4, minutes=15),
    ]
    fired = []
    for moment in moments:
        result = sla_scan(now=moment)
        fired.append(result.counts)
        sla_scan(now=moment)  # a second scan at the same moment fires nothing more
    assert inbox(ticket) == [
        ("handler", "ticket-sla-warn", 1),
        ("handler", "ticket-sla-warn", 2),
        ("leader", "ticket-sla-warn", 2),
        ("boss", "ticket-sla-timeout", 3),
        ("handler", "ticket-sla-warn", 4),
        ("handler", "ticket-sla-warn", 5),
        ("leader", "ticket-sla-warn", 5),
        ("boss", "ticket-sla-timeout", 6),
    ]
    ticket.refresh_from_db()
    assert ticket.response_warned and ticket.response_timeout  # the design's mirror flags
    assert ticket.resolve_warned and ticket.resolve_timeout
    records = list(
        ticket.records.filter(action__endswith="_level").values_list("detail__level", flat=True)
    )
    assert records == [1, 2, 3, 4, 5, 6]

    # The team sees each level with its due and fired instants through the API.
    body = api.as_user(people["handler"]).get(f"/api/tickets/{ticket.pk}/").json()
    assert [(e["clock"], e["level"], e["state"]) for e in body["sla_events"]] == [
        ("response", 1, "fired"),
        ("response", 2, "fired"),
        ("response", 3, "fired"),
        ("resolve", 4, "fired"),
        ("resolve", 5, "fired"),
        ("resolve", 6, "fired"),
    ]
    assert body["sla_events"][2]["due_at"] == "2026-03-02T10:15:00Z"
    assert body["sla_events"][2]["fired_at"] == "2026-03-02T10:15:00Z"
    # Never the applicant (nor an approver): the public story has no SLA internals.
    public = api.as_user(people["applicant"]).get(f"/api/tickets/{ticket.pk}/").json()
    assert public["sla_events"] is None


def test_a_stopped_clock_fires_nothing_more(approved, three_level_rule, people):
    ticket = approved()
    sla_scan(now=T0 + timedelta(minutes=30))  # response level 1 fires
    services.ticket_accept(
        ticket_id=ticket.pk, handler=people["handler"], now=T0 + timedelta(minutes=31)
    )
    sla_scan(now=T0 + timedelta(hours=1, minutes=30))
    states = dict(
        SlaEvent.objects.filter(ticket=ticket, clock="response").values_list("level", "state")
    )
    assert states == {1: "fired", 2: "void", 3: "void"}
    assert [n[2] for n in inbox(ticket)] == [1]


def test_raise_priority_and_reassign_move_the_ticket_once(approved, rule, people, api):
    other_agent = UserFactory(username="other")
    tier2 = HandlerGroupFactory(name="tier 2", members=[other_agent], assign_strategy=1)
    set_levels(
        rule,
        [
            L(1, "response", ladder.MINUTES_BEFORE, Decimal(30), ("leader",), raise_priority=True),
            L(
                2,
                "response",
                ladder.MINUTES_AFTER,
                Decimal(0),
                ("leader",),
                reassign_group_id=tier2.pk,
            ),
        ],
    )
    ticket = approved(priority=3)
    sla_scan(now=T0 + timedelta(minutes=30))
    ticket.refresh_from_db()
    assert ticket.priority == 4  # one step more urgent
    sla_scan(now=T0 + timedelta(hours=1))
    ticket.refresh_from_db()
    assert ticket.handler_group_id == tier2.pk  # unanswered: moved, and routed by tier 2
    assert ticket.handler_id == other_agent.pk and ticket.ticket_status == 2
    level = ticket.records.get(action="sla_response_level", detail__level=2)
    assert level.detail["reassign"] == {"group_id": tier2.pk, "moved": True}
    assert ticket.records.filter(action="transfer").count() == 1
    sla_scan(now=T0 + timedelta(hours=2))
    ticket.refresh_from_db()
    assert ticket.priority == 4 and ticket.handler_group_id == tier2.pk  # never twice


def test_priority_never_passes_the_most_urgent(approved, rule):
    set_levels(rule, [L(1, "response", ladder.MINUTES_BEFORE, Decimal(30), raise_priority=True)])
    rule.priority = 4
    rule.save()
    ticket = approved(priority=4)
    sla_scan(now=T0 + timedelta(minutes=30))
    ticket.refresh_from_db()
    assert ticket.priority == 4
    assert "priority" not in ticket.records.get(action="sla_response_level").detail


def test_reassign_to_a_group_disabled_since_records_why_and_moves_nothing(approved, rule):
    tier2 = HandlerGroupFactory(name="tier 2", members=[UserFactory()], assign_strategy=1)
    set_levels(
        rule, [L(1, "response", ladder.MINUTES_AFTER, Decimal(0), reassign_group_id=tier2.pk)]
    )
    ticket = approved()
    HandlerGroup.objects.filter(pk=tier2.pk).update(status=0)
    sla_scan(now=T0 + timedelta(hours=1))
    ticket.refresh_from_db()
    assert ticket.handler_group_id != tier2.pk
    detail = ticket.records.get(action="sla_response_level").detail
    assert detail["reassign"]["moved"] is False


def test_pause_across_a_level_holds_it_and_resume_re_times_it(approved, rule, people, api):
    """Resolve 4 h with a level at 50 % (2 h of running time). Paused from 1 h to 3 h: the
    level is not due during the pause and fires 2 h after the pause ended... minus the hour
    that had run: at 4 h."""
    set_levels(rule, [L(1, "resolve", ladder.PERCENT_ELAPSED, Decimal(50), ("handler",))])
    ticket = approved()
    services.ticket_accept(ticket_id=ticket.pk, handler=people["handler"], now=T0)
    handler = api.as_user(people["handler"])
    with time_machine.travel(T0 + timedelta(hours=1), tick=False):
        assert handler.post(f"/api/tickets/{ticket.pk}/pause/").status_code == 200
    assert SlaEvent.objects.get(ticket=ticket).due_at is None  # paused: no instant
    assert sla_scan(now=T0 + timedelta(hours=2, minutes=30)).total == 0
    with time_machine.travel(T0 + timedelta(hours=3), tick=False):
        assert handler.post(f"/api/tickets/{ticket.pk}/resume/").status_code == 200
    event = SlaEvent.objects.get(ticket=ticket)
    assert event.due_at == T0 + timedelta(hours=4)  # 1 h ran before, 1 h more after resume
    assert sla_scan(now=T0 + timedelta(hours=3, minutes=59)).total == 0
    assert sla_scan(now=T0 + timedelta(hours=4)).counts["resolve_warn"] == 1
    assert inbox(ticket) == [("handler", "ticket-sla-warn", 1)]


def test_a_level_past_its_deadline_that_passed_while_paused_is_skipped(approved, rule, people):
    """The deadline was reached before the pause; a level 30 min after it falls inside the
    pause: at resume it is skipped, never fired late. The level at the deadline had fired."""
    set_levels(
        rule,
        [
            L(1, "resolve", ladder.MINUTES_AFTER, Decimal(0), ("handler",)),
            L(2, "resolve", ladder.MINUTES_AFTER, Decimal(30), ("leader",)),
        ],
    )
    ticket = approved()
    services.ticket_accept(ticket_id=ticket.pk, handler=people["handler"], now=T0)
    sla_scan(now=T0 + timedelta(hours=4))  # the deadline: level 1 fires
    from sla.services import sla_pause, sla_resume

    sla_pause(ticket_id=ticket.pk, user=people["handler"], now=T0 + timedelta(hours=4, minutes=10))
    sla_scan(now=T0 + timedelta(hours=4, minutes=40))  # level 2's moment, paused: nothing
    sla_resume(ticket_id=ticket.pk, user=people["handler"], now=T0 + timedelta(hours=5))
    sla_scan(now=T0 + timedelta(hours=5))
    states = dict(SlaEvent.objects.filter(ticket=ticket).values_list("level", "state"))
    assert states == {1: "fired", 2: "skipped"}
    assert inbox(ticket) == [("handler", "ticket-sla-timeout", 1)]


def test_a_warning_whose_deadline_passed_before_any_scan_is_void(approved, rule):
    ticket = approved()
    sla_scan(now=T0 + timedelta(hours=1, minutes=2))  # ticks were down across the warning
    states = dict(
        SlaEvent.objects.filter(ticket=ticket, clock="response").values_list("level", "state")
    )
    assert states == {1: "void", 2: "fired"}


def test_a_closed_ticket_fires_nothing(approved, rule, people):
    ticket = approved()
    Ticket.objects.filter(pk=ticket.pk).update(ticket_status=5)  # closed, however it happened
    assert sla_scan(now=T0 + timedelta(hours=10)).counts.get("response_escalation") == 0
    assert set(SlaEvent.objects.filter(ticket=ticket).values_list("state", flat=True)) == {"void"}
