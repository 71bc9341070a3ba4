"""A believable past for the demo groups (`seed_demo --history-days N`).

Written in bulk, not through the services: replaying a few hundred tickets through submit →
approve → accept → complete with the live Redis idle pools, locks and notifications takes
minutes and would send e-mails for the past. Instead a small discrete-event simulation plays
each demo group's month — arrivals shaped by weekday and hour, an approver who works office
hours, agents' shifts with breaks (presence spans), per-agent accept delays and lognormal
handle times, some waits on the applicant — routing each approved ticket with the group's
strategy (round robin or least load) among the members available at that instant, and
queuing it in the pool when nobody is. The outcome is written as the services would have
written it: tickets, audit records (submit, approve, enter_pool, assign, accept, sla_pause,
sla_resume, complete, close, SLA levels and timeouts), assignment events, clock segments, SLA
events (fired / void / pending) and outcomes with the same deadline arithmetic as sla.services,
presence spans, and the conversations (demo/conversations.py): both sides' replies and notes
to the team, with their reply records and counts; a question from the agent pauses the clock
and the applicant's answer resumes it, as ticket_reply does. No notifications and no outbox
rows: nothing is e-mailed for the past.

On top of the past, a handful of tickets staged around now so the console shows every state:
awaiting approval, waiting in a pool, offered, in progress, waiting on the applicant,
completed, closed, and breached (open past a deadline, its timeout and levels fired).

Deterministic for a seed and a `now`."""

from __future__ import annotations

import math
import random
import time
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import TypedDict
from zoneinfo import ZoneInfo

from django.conf import settings
from django.db import connection

from handler_groups.models import HandlerGroup
from routing.models import AgentPresence, AssignmentEvent, PresenceSpan, PresenceState
from sla.calendars import business_calendar
from sla.deadlines import deadline_with_pauses, hours_to_timedelta, running_time
from sla.escalation import planned_events
from sla.models import (
    Clock,
    ClockResult,
    ClockSegment,
    EventState,
    SegmentKind,
    SlaEvent,
    SlaOutcome,
)
from sla.selectors import match_rule
from ticketing.models import (
    Category,
    ProcessStatus,
    ReplyType,
    Ticket,
    TicketRecord,
    TicketReply,
    TicketStatus,
)

from . import conversations

DEFAULT_SEED = 13

# Relative arrival rate by weekday (Monday first) and by local hour: quiet weekends and
# nights, peaks at 10:00 and 14:00.
WEEKDAY_FACTOR = (1.15, 1.05, 1.0, 0.95, 0.85, 0.18, 0.12)
HOUR_WEIGHTS = (
    0.05, 0.03, 0.02, 0.02, 0.03, 0.05, 0.15, 0.4, 0.9, 1.5, 2.0, 1.7,
    1.0, 1.3, 1.9, 1.6, 1.2, 0.8, 0.45, 0.3, 0.2, 0.15, 0.1, 0.07,
)  # fmt: skip


class GroupSpec(TypedDict):
    per_day: int  # tickets on an average weekday
    titles: list[str]
    categories: list[str]


class AgentSpec(TypedDict):
    shift: tuple[float, float]  # hours of the day
    accept: float  # minutes, median
    handle: float  # minutes, median


# Per demo group: tickets on an average weekday, titles, categories.
GROUPS: dict[str, GroupSpec] = {
    "IT support": {
        "per_day": 26,
        "titles": [
            "Laptop will not boot",
            "VPN drops every few minutes",
            "Password reset",
            "New starter needs an account",
            "Printer on floor 3 jams",
            "Outlook keeps asking for the password",
            "Monitor flickers",
            "Access to the finance share",
            "Install the statistics package",
            "Phone not syncing mail",
            "打印机无法连接",
            "邮箱空间已满",
        ],
        "categories": ["hardware", "network", "access", "software"],
    },
    "HR services": {
        "per_day": 10,
        "titles": [
            "Payslip question",
            "Holiday balance looks wrong",
            "Change of address",
            "Parental leave request",
            "Employment certificate needed",
            "Expense claim not paid",
            "工资条有疑问",
        ],
        "categories": ["payroll", "leave", "records"],
    },
}

# Per agent: shift (local hours, weekdays), median accept delay and handle time (minutes).
AGENTS: dict[str, AgentSpec] = {
    "it_alice": {"shift": (8.0, 16.5), "accept": 2.0, "handle": 25.0},
    "it_bob": {"shift": (9.0, 17.5), "accept": 4.0, "handle": 40.0},
    "it_carol": {"shift": (10.0, 18.5), "accept": 7.0, "handle": 30.0},
    "hr_dave": {"shift": (8.5, 17.0), "accept": 5.0, "handle": 45.0},
    "hr_erin": {"shift": (9.0, 17.5), "accept": 3.0, "handle": 60.0},
}
# Saturday rota (IT only): these agents take turns, 10:00-14:00.
SATURDAY_ROTA = ["it_alice", "it_bob"]
SIM_MAX_ACTIVE = 3  # tickets in hand per agent in the simulation when the group has no limit


@dataclass
class Plan:
    """One ticket's life as instants (None: did not happen)."""

    group: HandlerGroup
    creator_id: int
    title: str
    category: str
    priority: int
    submitted: datetime
    approved: datetime | None = None
    rejected: datetime | None = None
    queued: datetime | None = None  # entered the pool without an assignment
    assigned: datetime | None = None
    handler_id: int | None = None
    routed: bool = True  # assigned by routing (an AssignmentEvent), not taken from the pool
    accepted: datetime | None = None
    pauses: list[tuple[datetime, datetime | None]] = field(default_factory=list)
    completed: datetime | None = None
    closed: datetime | None = None
    staged: bool = False  # one of the tickets staged around now


# The tickets staged around now (_staged), by title: tests tell them from the simulated past.
STAGED_TITLES = frozenset(
    {
        "Docking station missing",
        "Cannot open the CRM",
        "Keyboard replacement",
        "Sick note upload fails",
        "Teams camera black",
        "Overtime not on payslip",
        "Shared mailbox access",
        "Pension enrolment",
        "Which laptop model do you have?",
        "Wi-Fi password for guests",
        "Holiday request approved?",
        "Mouse not working",
        "Server room badge reader broken",
        "Contract amendment",
    }
)


@dataclass
class Summary:
    tickets: int = 0
    states: Counter = field(default_factory=Counter)
    assignments: int = 0
    records: int = 0
    spans: int = 0
    sla_events: int = 0
    outcomes: int = 0
    response_breaches: int = 0
    resolve_breaches: int = 0
    per_agent: Counter = field(default_factory=Counter)
    seconds: float = 0.0


class Schedule:
    """An agent's presence as contiguous spans, and their available intervals for routing."""

    def __init__(self, spans: list[tuple[str, datetime, datetime]]):
        self.spans = spans
        self.available = [(s, e) for state, s, e in spans if state == PresenceState.AVAILABLE]
        self.starts = [s for s, _ in self.available]

    def next_available(self, t: datetime) -> datetime | None:
        """t if available at t, else the start of the next available stretch."""
        i = bisect_right(self.starts, t) - 1
        if i >= 0 and self.available[i][0] <= t < self.available[i][1]:
            return t
        return self.available[i + 1][0] if i + 1 < len(self.available) else None


def history_present(groups: list[HandlerGroup]) -> bool:
    return Ticket.objects.filter(handler_group__in=groups).exists()


def generate(
    *,
    days: int,
    users: dict,
    seed: int = DEFAULT_SEED,
    now: datetime,
    progress: Callable[[str], None] = lambda line: None,
) -> Summary:
    started_clock = time.monotonic()
    rng = random.Random(seed)
    tz = ZoneInfo(settings.TIME_ZONE)
    local_now = now.astimezone(tz)
    today = local_now.date()
    first_day = today - timedelta(days=days)
    groups = {g.name: g for g in HandlerGroup.objects.filter(name__in=GROUPS)}
    applicants = [users["applicant1"].pk, users["applicant2"].pk]
    approver_id = users["approver"].pk

    def at(day: date, hours: float) -> datetime:
        return datetime.combine(day, datetime.min.time(), tzinfo=tz) + timedelta(hours=hours)

    # Presence: shifts with a coffee break and lunch; one day beyond today so a ticket
    # waiting now has somewhere to go in the simulation (spans are cut at now when written).
    schedules: dict[int, Schedule] = {}
    for username, agent_spec in AGENTS.items():
        user = users[username]
        spans: list[tuple[str, datetime, datetime]] = []
        cursor = at(first_day, 0)
        for offset in range(days + 2):
            day = first_day + timedelta(days=offset)
            weekday = day.weekday()
            if weekday < 5:
                if rng.random() < 0.06:
                    continue  # a day off
                begin, end = agent_spec["shift"]
                begin += rng.uniform(-0.15, 0.25)
                end += rng.uniform(-0.2, 0.3)
                coffee = begin + 2 + rng.uniform(0, 0.5)
                lunch = begin + 4 + rng.uniform(0, 0.5)
                breaks = [(coffee, coffee + rng.uniform(0.15, 0.25))]
                breaks.append((lunch, lunch + rng.uniform(0.5, 0.75)))
            elif weekday == 5 and username in SATURDAY_ROTA:
                if SATURDAY_ROTA[day.isocalendar().week % len(SATURDAY_ROTA)] != username:
                    continue
                begin, end, breaks = 10.0, 14.0, []
            else:
                continue
            points = [begin, *[h for pair in breaks for h in pair], end]
            spans.append((PresenceState.OFFLINE, cursor, at(day, begin)))
            for i in range(len(points) - 1):
                state = PresenceState.AVAILABLE if i % 2 == 0 else PresenceState.BUSY
                spans.append((state, at(day, points[i]), at(day, points[i + 1])))
            cursor = at(day, end)
        spans.append((PresenceState.OFFLINE, cursor, at(today + timedelta(days=3), 0)))
        schedules[user.pk] = Schedule(spans)

    def approver_time(submitted: datetime) -> datetime:
        """The approver works weekdays 08:00-18:00: a few minutes then, else next morning."""
        local = submitted.astimezone(tz)
        if local.weekday() < 5 and 8 <= local.hour < 18:
            return submitted + timedelta(minutes=rng.lognormvariate(math.log(6), 0.7))
        day = local.date() + timedelta(days=0 if local.hour < 8 else 1)
        while day.weekday() >= 5:
            day += timedelta(days=1)
        return at(day, 8 + rng.uniform(0, 0.7))

    plans: list[Plan] = []
    for done, (name, spec) in enumerate(GROUPS.items()):
        if done:
            elapsed = time.monotonic() - started_clock
            eta = elapsed / done * (len(GROUPS) - done) + elapsed * 0.5  # + writing
            progress(
                f"simulated {done}/{len(GROUPS)} groups, {len(plans)} tickets "
                f"({elapsed:.1f}s, ETA {eta:.0f}s)"
            )
        group = groups[name]
        members = [m for m in group.member_ids if m in schedules]
        busy: dict[int, list[tuple[datetime, datetime]]] = {m: [] for m in members}
        cursor_index = -1
        cap = group.max_active or SIM_MAX_ACTIVE

        def active(member: int, t: datetime, busy=busy) -> int:
            return sum(1 for s, e in busy[member] if s <= t < e)

        arrivals: list[datetime] = []
        for offset in range(days):
            day = first_day + timedelta(days=offset)
            rate = spec["per_day"] * WEEKDAY_FACTOR[day.weekday()]
            for _ in range(_poisson(rng, rate)):
                hour = rng.choices(range(24), weights=HOUR_WEIGHTS)[0]
                arrivals.append(at(day, hour + rng.random()))
        arrivals.sort()
        for submitted in arrivals:
            plan = Plan(
                group=group,
                creator_id=rng.choice(applicants),
                title=rng.choice(spec["titles"]),
                category=rng.choice(spec["categories"]),
                priority=rng.choices((1, 2, 3, 4), weights=(25, 50, 20, 5))[0],
                submitted=submitted,
            )
            plans.append(plan)
            decided = approver_time(submitted)
            if rng.random() < 0.03:
                plan.rejected = decided
                continue
            plan.approved = decided
            # Routing: the members available and under capacity at each instant from the
            # approval on; the first instant someone is, the strategy picks among them.
            t = decided
            chosen = None
            for _ in range(200):
                eligible = [
                    m for m in members if schedules[m].next_available(t) == t and active(m, t) < cap
                ]
                if eligible:
                    if group.assign_strategy == 1:  # round robin: next after the cursor
                        ordered = members[cursor_index + 1 :] + members[: cursor_index + 1]
                        chosen = next(m for m in ordered if m in eligible)
                        cursor_index = members.index(chosen)
                    else:  # least load (and the rest): fewest active, then member order
                        chosen = min(eligible, key=lambda m: (active(m, t), members.index(m)))
                    break
                # Next instant anything changes: someone's shift or break ends, or a ticket
                # in hand is done.
                starts = [schedules[m].next_available(t) for m in members]
                ends = [e for m in members for s, e in busy[m] if e > t]
                nexts = [x for x in [*starts, *ends] if x is not None and x > t]
                if not nexts:
                    break
                t = min(nexts)
            if chosen is None:
                plan.queued = decided
                continue
            if t > decided:
                plan.queued = decided
            plan.assigned, plan.handler_id = t, chosen
            username = next(u for u, user in users.items() if user.pk == chosen)
            agent = AGENTS[username]
            schedule = schedules[chosen]
            delay = rng.lognormvariate(math.log(agent["accept"]), 0.8)
            plan.accepted = schedule.next_available(t + timedelta(minutes=delay))
            if plan.accepted is None:
                continue
            handle = rng.lognormvariate(math.log(agent["handle"]), 0.6)
            if rng.random() < 0.02:
                handle *= 4  # the hard one
            work_from = plan.accepted
            if rng.random() < 0.12:  # asks the applicant something halfway
                paused = work_from + timedelta(minutes=handle * 0.4)
                resumed = paused + timedelta(minutes=rng.lognormvariate(math.log(90), 0.8))
                plan.pauses.append((paused, resumed))
                work_from, handle = resumed, handle * 0.6
            # Worked on in one go (through a break, past the shift's end if need be).
            plan.completed = work_from + timedelta(minutes=handle)
            busy[chosen].append((t, plan.completed))
            if rng.random() < 0.75:
                plan.closed = plan.completed + timedelta(hours=rng.uniform(0.3, 30))
    progress(f"simulated {len(plans)} tickets over {days} days; writing")

    plans.extend(_staged(groups, users, now, rng))
    talk = random.Random(seed * 7919 + 1)  # its own stream: the simulation stays as it was
    summary = _write(plans, schedules, users, approver_id, now, progress, started_clock, talk)
    summary.seconds = time.monotonic() - started_clock
    return summary


def _staged(groups: dict, users: dict, now: datetime, rng: random.Random) -> list[Plan]:
    """Tickets around now, one or more in each state the console shows."""
    it, hr = groups["IT support"], groups["HR services"]
    applicant = users["applicant1"].pk

    def ago(minutes: float) -> datetime:
        return now - timedelta(minutes=minutes)

    def plan(group, title, priority=2, **times) -> Plan:
        return Plan(group=group, creator_id=applicant, title=title, category="",
                    priority=priority, staged=True, **times)  # fmt: skip

    alice, bob, carol = users["it_alice"].pk, users["it_bob"].pk, users["it_carol"].pk
    dave, erin = users["hr_dave"].pk, users["hr_erin"].pk
    return [
        # awaiting approval
        plan(it, "Docking station missing", submitted=ago(5)),
        # waiting in the pools
        plan(it, "Cannot open the CRM", submitted=ago(12), approved=ago(10), queued=ago(10)),
        plan(it, "Keyboard replacement", 1, submitted=ago(4), approved=ago(3), queued=ago(3)),
        plan(hr, "Sick note upload fails", submitted=ago(9), approved=ago(7), queued=ago(7)),
        # offered (auto-assigned, not accepted yet)
        plan(
            it,
            "Teams camera black",
            submitted=ago(20),
            approved=ago(18),
            assigned=ago(18),
            handler_id=bob,
        ),  # fmt: skip
        plan(
            hr,
            "Overtime not on payslip",
            3,
            submitted=ago(25),
            approved=ago(22),
            assigned=ago(22),
            handler_id=erin,
        ),  # fmt: skip
        # in progress
        plan(
            it,
            "Shared mailbox access",
            submitted=ago(50),
            approved=ago(45),
            assigned=ago(45),
            handler_id=alice,
            accepted=ago(40),
        ),  # fmt: skip
        plan(
            hr,
            "Pension enrolment",
            submitted=ago(90),
            approved=ago(80),
            assigned=ago(80),
            handler_id=dave,
            accepted=ago(70),
        ),  # fmt: skip
        # waiting on the applicant (paused)
        plan(
            it,
            "Which laptop model do you have?",
            submitted=ago(180),
            approved=ago(170),
            assigned=ago(170),
            handler_id=carol,
            accepted=ago(160),
            pauses=[(ago(60), None)],
        ),  # fmt: skip
        # completed today, not closed yet
        plan(
            it,
            "Wi-Fi password for guests",
            1,
            submitted=ago(200),
            approved=ago(195),
            assigned=ago(195),
            handler_id=alice,
            accepted=ago(190),
            completed=ago(120),
        ),  # fmt: skip
        plan(
            hr,
            "Holiday request approved?",
            submitted=ago(240),
            approved=ago(230),
            assigned=ago(230),
            handler_id=erin,
            accepted=ago(225),
            completed=ago(150),
        ),  # fmt: skip
        # closed today
        plan(
            it,
            "Mouse not working",
            1,
            submitted=ago(150),
            approved=ago(140),
            assigned=ago(140),
            handler_id=bob,
            accepted=ago(130),
            completed=ago(100),
            closed=ago(30),
        ),  # fmt: skip
        # breached: waiting in the pool past the response deadline …
        plan(
            it,
            "Server room badge reader broken",
            3,
            submitted=ago(27 * 60),
            approved=ago(26.5 * 60),
            queued=ago(26.5 * 60),
        ),  # fmt: skip
        # … and in progress past the resolve deadline (accepted late too)
        plan(
            hr,
            "Contract amendment",
            submitted=ago(75 * 60),
            approved=ago(74 * 60),
            assigned=ago(74 * 60),
            handler_id=dave,
            accepted=ago(49 * 60),
        ),  # fmt: skip
    ]


def _poisson(rng: random.Random, lam: float) -> int:
    if lam <= 0:
        return 0
    limit, k, p = math.exp(-lam), 0, 1.0
    while True:
        p *= rng.random()
        if p <= limit:
            return k
        k += 1


def _bill_codes(submitted: list[datetime]) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval('ticket_bill_code_seq') FROM generate_series(1, %s)", [len(submitted)]
        )
        numbers = [row[0] for row in cursor.fetchall()]
    return [f"TK{s:%Y%m%d}{n:06d}" for s, n in zip(submitted, numbers, strict=True)]


def _cut(plan: Plan, now: datetime) -> None:
    """Forget whatever had not happened by now (and everything after it)."""
    order = ["approved", "rejected", "assigned", "accepted", "completed", "closed"]
    gone = False
    for name in order:
        value = getattr(plan, name)
        if gone or (value is not None and value > now):
            if name == "assigned":
                plan.handler_id = None
            setattr(plan, name, None)
            gone = gone or name in ("approved", "assigned", "accepted", "completed")
    if plan.approved is None:
        plan.queued = None
    elif plan.assigned is None and plan.queued is None:
        plan.queued = plan.approved
    stop = plan.completed or now
    plan.pauses = [
        (p, r if r is not None and r <= stop else None) for p, r in plan.pauses if p <= stop
    ]


# The demo's categories in Chinese (the console shows a category in the reader's language).
CATEGORY_NAMES_ZH = {
    "hardware": "硬件",
    "network": "网络",
    "access": "账号与权限",
    "software": "软件",
    "payroll": "工资",
    "leave": "休假",
    "records": "人事档案",
}


def _categories(plans) -> None:
    """A Category for each name the plans use (the submit form offers them), with the group
    whose tickets use it."""
    groups: dict = {}
    for plan in plans:
        if plan.category:
            groups.setdefault(plan.category, plan.group)
    for order, (name, group) in enumerate(sorted(groups.items())):
        zh = CATEGORY_NAMES_ZH.get(name)
        Category.objects.get_or_create(
            name=name,
            defaults={
                "handler_group": group,
                "translations": {"zh-hans": zh} if zh else {},
                "order": order,
            },
        )


def _write(plans, schedules, users, approver_id, now, progress, started_clock, talk) -> Summary:
    summary = Summary()
    rules: dict = {}
    calendars: dict = {}
    _categories(plans)
    for plan in plans:
        _cut(plan, now)
    plans.sort(key=lambda p: p.submitted)
    codes = _bill_codes([p.submitted for p in plans])
    tickets, extras = [], []
    for plan, code in zip(plans, codes, strict=True):
        ticket = Ticket(
            bill_code=code,
            title=plan.title,
            content=conversations.body(plan.title),
            priority=plan.priority,
            category=plan.category,
            creator_id=plan.creator_id,
            handler_group=plan.group,
            submitted_time=plan.submitted,
        )
        extra: dict = {
            "records": [],
            "segments": [],
            "events": [],
            "outcome": None,
            "replies": [],
        }
        rec = extra["records"]
        rec.append(("submit", plan.creator_id, None, TicketStatus.SUBMITTED, plan.submitted, {}))
        if plan.rejected:
            ticket.process_status = ProcessStatus.REJECTED
            rec.append(
                ("reject", approver_id, ProcessStatus.APPROVING, ProcessStatus.REJECTED,
                 plan.rejected, {"field": "process_status", "reason": "Not an IT/HR matter."})
            )  # fmt: skip
        if plan.approved:
            ticket.process_status = ProcessStatus.APPROVED
            ticket.approved_time = plan.approved
            key = (plan.priority, plan.category)
            if key not in rules:
                rules[key] = match_rule(priority=plan.priority, category=plan.category)
            rule = rules[key]
            ticket.sla_rule = rule
            rec.append(
                ("approve", approver_id, ProcessStatus.APPROVING, ProcessStatus.APPROVED,
                 plan.approved, {"field": "process_status"})
            )  # fmt: skip
            status = TicketStatus.SUBMITTED
            if plan.queued:
                rec.append(("enter_pool", approver_id, status, TicketStatus.PENDING_ASSIGN,
                            plan.queued, {}))  # fmt: skip
                status = TicketStatus.PENDING_ASSIGN
                ticket.queued_time = plan.queued
            if plan.assigned:
                detail = {"handler_id": plan.handler_id, "strategy": plan.group.assign_strategy}
                actor = None if plan.queued else approver_id
                rec.append(("assign", actor, status, TicketStatus.PENDING_PROCESS,
                            plan.assigned, detail))  # fmt: skip
                status = TicketStatus.PENDING_PROCESS
                ticket.handler_id, ticket.assigned_time = plan.handler_id, plan.assigned
                ticket.queued_time = None
            if plan.accepted:
                rec.append(("accept", plan.handler_id, status, TicketStatus.PROCESSING,
                            plan.accepted, {}))  # fmt: skip
                status = TicketStatus.PROCESSING
                ticket.accepted_time = ticket.responded_time = plan.accepted
            # Before the pause records: an answer and the resume it causes share an instant,
            # and the stable sort below keeps the reply first, as ticket_reply writes them.
            for line in conversations.conversation(
                talk,
                title=plan.title,
                accepted=plan.accepted,
                pauses=plan.pauses,
                completed=plan.completed,
                closed=plan.closed,
                now=now,
            ):
                author = plan.handler_id if line.by_agent else plan.creator_id
                reply = TicketReply(
                    author_id=author, reply_type=line.reply_type, content=line.content
                )
                reply.created = line.at
                kind = ReplyType(line.reply_type).name.lower()
                detail = {"reply_type": kind}  # + reply_id once written
                extra["replies"].append((reply, detail))
                rec.append(("reply", author, None, None, line.at, detail))
                ticket.reply_count += 1
                ticket.public_reply_count += line.reply_type == ReplyType.PUBLIC
            for paused, resumed in plan.pauses:
                rec.append(("sla_pause", plan.handler_id, None, None, paused, {}))
                extra["segments"].append((Clock.RESOLVE, SegmentKind.PAUSE, paused))
                if resumed:
                    rec.append(("sla_resume", plan.creator_id, None, None, resumed, {}))
                    extra["segments"].append((Clock.RESOLVE, SegmentKind.RESUME, resumed))
                else:
                    ticket.sla_paused, ticket.sla_paused_at = True, paused
            if plan.completed:
                rec.append(("complete", plan.handler_id, status, TicketStatus.COMPLETED,
                            plan.completed, {}))  # fmt: skip
                status = TicketStatus.COMPLETED
                ticket.completed_time = plan.completed
            if plan.closed:
                rec.append(("close", plan.creator_id, status, TicketStatus.CLOSED,
                            plan.closed, {}))  # fmt: skip
                status = TicketStatus.CLOSED
                ticket.closed_time = plan.closed
            ticket.ticket_status = status
            _sla(ticket, plan, rule, calendars, extra, now, summary)
        tickets.append(ticket)
        extras.append(extra)
    Ticket.objects.bulk_create(tickets, batch_size=500)
    progress(f"{len(tickets)} tickets written ({time.monotonic() - started_clock:.1f}s)")
    _write_replies(tickets, extras)

    records, segments, events, outcomes, assignments = [], [], [], [], []
    for ticket, plan, extra in zip(tickets, plans, extras, strict=True):
        for action, actor, before, after, created, detail in sorted(
            extra["records"], key=lambda r: r[4]
        ):
            field_name = "process_status" if action in ("approve", "reject") else "ticket_status"
            detail = {"field": field_name, **detail} if after is not None else detail
            records.append(
                TicketRecord(ticket_id=ticket.pk, actor_id=actor, action=action,
                             from_status=before, to_status=after, created=created, detail=detail)
            )  # fmt: skip
        if plan.approved:
            segments += [
                ClockSegment(ticket_id=ticket.pk, clock=clock, kind=SegmentKind.START,
                             at=plan.submitted)
                for clock, deadline in ((Clock.RESPONSE, ticket.response_deadline),
                                        (Clock.RESOLVE, ticket.resolve_deadline))
                if deadline is not None or (clock == Clock.RESOLVE and ticket.sla_paused)
            ]  # fmt: skip
        segments += [
            ClockSegment(ticket_id=ticket.pk, clock=clock, kind=kind, at=at_)
            for clock, kind, at_ in extra["segments"]
        ]
        for clock, level, level_id, due, state, fired_at in extra["events"]:
            events.append(
                SlaEvent(ticket_id=ticket.pk, clock=clock, level=level,
                         escalation_level_id=level_id, due_at=due, state=state,
                         fired_at=fired_at)
            )  # fmt: skip
        if extra["outcome"] is not None:
            outcomes.append(SlaOutcome(ticket_id=ticket.pk, **extra["outcome"]))
        if plan.assigned and plan.routed:
            assignments.append(
                AssignmentEvent(group=plan.group, ticket_id=ticket.pk, user_id=plan.handler_id,
                                kind=AssignmentEvent.Kind.ASSIGNED,
                                strategy=plan.group.assign_strategy,
                                pick_ms=round(0.3 + (ticket.pk % 7) * 0.1, 2),
                                created=plan.assigned)
            )  # fmt: skip
            summary.per_agent[plan.handler_id] += 1
        summary.states[_state(ticket, now)] += 1
    TicketRecord.objects.bulk_create(records, batch_size=2000)
    ClockSegment.objects.bulk_create(segments, batch_size=2000)
    SlaEvent.objects.bulk_create(events, batch_size=2000)
    SlaOutcome.objects.bulk_create(outcomes, batch_size=2000)
    AssignmentEvent.objects.bulk_create(assignments, batch_size=2000)
    progress(
        f"{len(records)} records, {len(events)} SLA events, {len(assignments)} assignments "
        f"written ({time.monotonic() - started_clock:.1f}s)"
    )

    summary.spans = _write_presence(schedules, now)
    summary.tickets = len(tickets)
    summary.assignments = len(assignments)
    summary.records = len(records)
    summary.sla_events = len(events)
    summary.outcomes = len(outcomes)
    names = {user.pk: name for name, user in users.items()}
    summary.per_agent = Counter({names[k]: v for k, v in summary.per_agent.items()})
    return summary


def _write_replies(tickets: list[Ticket], extras: list[dict]) -> None:
    """The conversations, at their own instants (`created` is set on insert, so it is written
    again), and each reply's id into its audit record's detail."""
    replies = []
    for ticket, extra in zip(tickets, extras, strict=True):
        for reply, _detail in extra["replies"]:
            reply.ticket_id = ticket.pk
            replies.append(reply)
    instants = [reply.created for reply in replies]
    TicketReply.objects.bulk_create(replies, batch_size=2000)
    for reply, at in zip(replies, instants, strict=True):
        reply.created = at
    TicketReply.objects.bulk_update(replies, ["created"], batch_size=2000)
    for extra in extras:
        for reply, detail in extra["replies"]:
            detail["reply_id"] = reply.pk


def _sla(ticket: Ticket, plan: Plan, rule, calendars: dict, extra: dict, now, summary) -> None:
    """Deadlines, timeouts, ladder events and the outcome, as sla.services and the scanner
    would have left them by now."""
    if rule is None:
        return
    if rule.calendar_id not in calendars:
        calendars[rule.calendar_id] = business_calendar(rule.calendar)
    calendar = calendars[rule.calendar_id]
    start = plan.submitted
    response_budget = hours_to_timedelta(rule.response_hours)
    resolve_budget = hours_to_timedelta(rule.resolve_hours)
    closed_pauses = [(p, r) for p, r in plan.pauses if r is not None]
    response = (
        deadline_with_pauses(start=start, budget=response_budget, pauses=[], calendar=calendar)
        if response_budget
        else None
    )
    resolve = (
        deadline_with_pauses(
            start=start, budget=resolve_budget, pauses=closed_pauses, calendar=calendar
        )
        if resolve_budget
        else None
    )
    ticket.response_deadline, ticket.resolve_deadline = response, resolve
    open_pause = ticket.sla_paused_at
    finished = plan.completed or plan.closed
    response_stop = plan.accepted or finished or now
    resolve_stop = finished or now
    if response is not None and response <= response_stop and response <= now:
        ticket.response_timeout = True
        extra["records"].append(
            ("sla_response_timeout", None, None, None, response + timedelta(seconds=20),
             {"deadline": response.isoformat()})
        )  # fmt: skip
    if (
        resolve is not None
        and resolve <= resolve_stop
        and resolve <= now
        and not (open_pause and open_pause <= resolve)
    ):
        ticket.resolve_timeout = True
        extra["records"].append(
            ("sla_resolve_timeout", None, None, None, resolve + timedelta(seconds=20),
             {"deadline": resolve.isoformat()})
        )  # fmt: skip
    planned = planned_events(
        ticket,  # submitted at `start`
        rule,
        response_deadline=response,
        resolve_deadline=resolve,
        pauses=closed_pauses,
    )
    stops: dict[str, datetime | None] = {
        Clock.RESPONSE: plan.accepted or finished,
        Clock.RESOLVE: finished,
    }
    deadlines: dict[str, datetime | None] = {Clock.RESPONSE: response, Clock.RESOLVE: resolve}
    for (clock, level), (due, level_id) in sorted(planned.items()):
        stop = stops[clock]
        paused_since = open_pause if clock == Clock.RESOLVE else None
        deadline = deadlines[clock]
        if due is not None and stop is not None and stop <= due:
            state, fired_at = EventState.VOID, None
        elif due is not None and due <= now and not (paused_since and paused_since <= due):
            state, fired_at = EventState.FIRED, due + timedelta(seconds=1)
            if deadline is not None and due < deadline:
                setattr(ticket, f"{clock}_warned", True)
            extra["records"].append(
                (f"sla_{clock}_level", None, None, None, fired_at,
                 {"clock": clock, "level": level, "due_at": due.isoformat()})
            )  # fmt: skip
        else:
            state, fired_at = EventState.PENDING, None
            if paused_since:
                due = None
        extra["events"].append((clock, level, level_id, due, state, fired_at))
    if plan.completed is None or plan.accepted is None:
        return  # (a completed plan was accepted first)
    response_ran = running_time(start=start, end=plan.accepted, pauses=[], calendar=calendar)
    resolve_ran = running_time(
        start=start, end=plan.completed, pauses=closed_pauses, calendar=calendar
    )
    response_result = ClockResult.NONE
    if response is not None:
        met = not ticket.response_timeout and plan.accepted <= response
        response_result = ClockResult.MET if met else ClockResult.BREACHED
    resolve_result = ClockResult.NONE
    if resolve_budget is not None:
        within = not ticket.resolve_timeout and resolve_ran <= resolve_budget
        resolve_result = ClockResult.MET if within else ClockResult.BREACHED
    summary.response_breaches += response_result == ClockResult.BREACHED
    summary.resolve_breaches += resolve_result == ClockResult.BREACHED
    met_of = {ClockResult.MET: True, ClockResult.BREACHED: False}
    extra["outcome"] = {
        "rule": rule,
        "response_minutes": _minutes(response_ran),
        "resolve_minutes": _minutes(resolve_ran),
        "response_met": met_of.get(response_result),
        "resolve_met": met_of.get(resolve_result),
        "response_result": response_result,
        "resolve_result": resolve_result,
        "closed_before_completion": False,
        "completed_time": plan.completed,
    }


def _minutes(duration: timedelta) -> Decimal:
    return Decimal(duration.total_seconds() / 60).quantize(Decimal("0.01"))


def _state(ticket: Ticket, now: datetime) -> str:
    """The console's word for the ticket's state now."""
    if ticket.process_status == ProcessStatus.APPROVING:
        return "awaiting approval"
    if ticket.process_status == ProcessStatus.REJECTED:
        return "rejected"
    status = ticket.ticket_status
    if status in (
        TicketStatus.PENDING_ASSIGN,
        TicketStatus.PENDING_PROCESS,
        TicketStatus.PROCESSING,
    ):
        if ticket.response_timeout or ticket.resolve_timeout:
            return "breached"
        if ticket.sla_paused:
            return "paused"
    return {
        TicketStatus.PENDING_ASSIGN: "waiting",
        TicketStatus.PENDING_PROCESS: "offered",
        TicketStatus.PROCESSING: "in progress",
        TicketStatus.COMPLETED: "completed",
        TicketStatus.CLOSED: "closed",
    }[TicketStatus(status)]


def _write_presence(schedules: dict[int, Schedule], now: datetime) -> int:
    """The spans up to now; the one running now stays open (an agent on shift now is logged
    off at now: the live presence starts when they sign in to the console)."""
    rows = []
    already_open = set(
        PresenceSpan.objects.filter(user_id__in=schedules, ended__isnull=True).values_list(
            "user_id", flat=True
        )
    )
    for user_id, schedule in schedules.items():
        last_end = None
        for state, started, span_end in schedule.spans:
            ended: datetime | None = span_end
            if started >= now:
                break
            if span_end > now:
                if state != PresenceState.OFFLINE:
                    rows.append(PresenceSpan(user_id=user_id, state=state, started=started,
                                             ended=now))  # fmt: skip
                    started = now
                state, ended = PresenceState.OFFLINE, None
            if ended is None and user_id in already_open:
                ended = now
            rows.append(PresenceSpan(user_id=user_id, state=state, started=started, ended=ended))
            last_end = ended or started
        AgentPresence.objects.get_or_create(
            pk=user_id, defaults={"state": PresenceState.OFFLINE, "state_since": last_end or now}
        )
    PresenceSpan.objects.bulk_create(rows, batch_size=2000)
    return len(rows)
