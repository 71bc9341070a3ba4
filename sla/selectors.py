from datetime import datetime, timedelta

from config.memo import ProcessMemo
from ticketing.models import OPEN_STATUSES, ProcessStatus, Ticket

from .deadlines import pauses_from_events
from .models import (
    Calendar,
    Clock,
    ClockResult,
    ClockSegment,
    EscalationLevel,
    RuleStatus,
    SegmentKind,
    SlaEvent,
    SlaOutcome,
    SlaRule,
)
from .tracks import ClockTrack, LevelMark

DEFAULT_WARN_MINUTES = 30


_enabled_rules = ProcessMemo("sla rules").clear_on_change(SlaRule, Calendar, EscalationLevel)


def enabled_rules() -> list[SlaRule]:
    """Enabled rules by ascending sort, with their calendars (memoised per process: read on
    every approval, changed rarely; see config/memo.py)."""
    return _enabled_rules.get(
        "enabled",
        lambda: list(
            SlaRule.objects.filter(status=RuleStatus.ENABLED)
            .select_related("calendar")
            .prefetch_related("levels")
            .order_by("sort", "id")
        ),
    )


def match_rule(*, priority: int, category: str) -> SlaRule | None:
    """Enabled rules by ascending sort; the first whose priority equals the ticket's (or is
    empty: any) and whose category is blank or equal wins."""
    category = category or ""
    for rule in enabled_rules():
        if rule.priority in (None, priority) and rule.category in ("", category):
            return rule
    return None


def sla_badge(ticket: Ticket, now: datetime) -> dict:
    """What the console shows for the ticket's running clock: the response clock until the
    ticket is first accepted, then the resolve clock. state: ok | warning | breached | paused |
    none."""
    none = {"state": "none", "clock": None, "deadline": None, "seconds_left": None}
    if ticket.process_status != ProcessStatus.APPROVED or ticket.ticket_status not in OPEN_STATUSES:
        return none
    warn = timedelta(
        minutes=ticket.sla_rule.warn_before_minutes if ticket.sla_rule else DEFAULT_WARN_MINUTES
    )
    if ticket.responded_time is None and ticket.response_deadline is not None:
        clock, deadline, breached = "response", ticket.response_deadline, ticket.response_timeout
    elif ticket.resolve_deadline is not None:
        clock, deadline, breached = "resolve", ticket.resolve_deadline, ticket.resolve_timeout
    else:
        return none
    left = int((deadline - now).total_seconds())
    if clock == "resolve" and ticket.sla_paused:
        state = "paused"
    elif breached or left <= 0:
        state = "breached"
    elif deadline - now <= warn:
        state = "warning"
    else:
        state = "ok"
    return {"state": state, "clock": clock, "deadline": deadline, "seconds_left": left}


def sla_timeline(ticket: Ticket, *, outcome: SlaOutcome | None) -> list[ClockTrack]:
    """The ticket's clocks, one track each (sla/tracks.py): start and pauses from the segment
    log, deadlines from the ticket, levels from its escalation events, the stop (response
    given; completed, or closed unfinished) and the outcome's result. Two queries, however
    many levels and pauses; the caller passes the outcome it has read (or None). A clock the
    ticket's rule does not have, or a ticket without SLA, gives no track."""
    segments: dict[str, list[tuple[str, datetime]]] = {}
    for clock, kind, at in ClockSegment.objects.filter(ticket_id=ticket.pk).values_list(
        "clock", "kind", "at"
    ):  # ordered by at, id (the model's ordering)
        segments.setdefault(clock, []).append((kind, at))
    levels: dict[str, list[LevelMark]] = {}
    for clock, level, due_at, fired_at, state in (
        SlaEvent.objects.filter(ticket_id=ticket.pk)
        .order_by("level")
        .values_list("clock", "level", "due_at", "fired_at", "state")
    ):
        levels.setdefault(clock, []).append(LevelMark(level, due_at, fired_at, state))
    closed_at = outcome.completed_time if outcome else ticket.closed_time
    clocks = {
        Clock.RESPONSE: (
            ticket.response_deadline,
            ticket.responded_time or ticket.accepted_time or closed_at,
            outcome.response_result if outcome else None,
        ),
        Clock.RESOLVE: (
            ticket.resolve_deadline,
            ticket.completed_time or closed_at,
            outcome.resolve_result if outcome else None,
        ),
    }
    tracks = []
    for clock, (deadline, stop, result) in clocks.items():
        log = segments.get(clock, [])
        starts = [at for kind, at in log if kind == SegmentKind.START]
        if result == ClockResult.NONE or (not starts and deadline is None):
            continue
        tracks.append(
            ClockTrack(
                clock=str(clock),
                start=starts[0] if starts else ticket.submitted_time,
                deadline=deadline,
                stop=stop,
                pauses=tuple(pauses_from_events(log)),
                levels=tuple(levels.get(clock, ())),
                result=result,
            )
        )
    return tracks
