"""SLA clocks: deadlines at approval, pauses ("waiting on applicant"), final outcomes and
recomputation. The scanner that warns and times out lives in scanner.py."""

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from config.errors import ConflictError
from ticketing.models import OPEN_STATUSES, ProcessStatus, Ticket
from ticketing.transitions import Along, record

from . import escalation
from .calendars import business_calendar
from .deadlines import deadline_with_pauses, hours_to_timedelta, pauses_from_events, running_time
from .models import (
    Clock,
    ClockResult,
    ClockSegment,
    EventState,
    SegmentKind,
    SlaEvent,
    SlaOutcome,
    SlaRule,
)
from .selectors import match_rule


def _deadlines(ticket: Ticket, rule: SlaRule | None, pauses) -> tuple[datetime | None, ...]:
    if rule is None:
        return None, None
    calendar = business_calendar(rule.calendar)
    response_budget = hours_to_timedelta(rule.response_hours)
    resolve_budget = hours_to_timedelta(rule.resolve_hours)
    response = (
        deadline_with_pauses(
            start=ticket.submitted_time, budget=response_budget, pauses=[], calendar=calendar
        )
        if response_budget
        else None
    )
    resolve = (
        deadline_with_pauses(
            start=ticket.submitted_time, budget=resolve_budget, pauses=pauses, calendar=calendar
        )
        if resolve_budget
        else None
    )
    return response, resolve


CLOCK_STARTS_SQL = """
    INSERT INTO oa_sla_clock_segment (ticket_id, clock, kind, at, actor_id, created)
    SELECT upd.id, s.clock, %s, %s, NULL, %s
      FROM upd, unnest(%s::varchar[]) AS s(clock)
"""
"""The start of each clock in the clock-segment log (parameters: the kind START, the instant
the clock starts from, now, the clocks), run in the approval's statement as an Along that
reads the approved ticket `upd`: it writes only new rows and locks nothing beyond them."""


@dataclass(frozen=True)
class ClockStart:
    """What an approval writes to start the SLA clocks: the ticket's fields (rule and both
    deadlines), and the statements that go with the approval's own (ticketing.transitions
    .Along, reading the approved ticket as `upd`): the start of each clock in the
    clock-segment log, and the ticket's escalation events, one per level."""

    fields: dict[str, object]
    along: tuple[Along, ...]


def sla_start_clocks(*, ticket: Ticket, now: datetime) -> ClockStart:
    """Approval hook, before anything is written (no query: the rules are memoised): match
    the rule and compute both deadlines from submitted_time (the customer has been waiting
    since submission), the clocks to open and every escalation level's instant. The caller
    sets `fields` with the approval and runs `along` in the approval's statement."""
    rule = match_rule(priority=ticket.priority, category=ticket.category)
    response, resolve = _deadlines(ticket, rule, [])
    clocks = [
        clock
        for clock, deadline in ((Clock.RESPONSE, response), (Clock.RESOLVE, resolve))
        if deadline is not None
    ]
    planned = escalation.planned_events(
        ticket, rule, response_deadline=response, resolve_deadline=resolve, pauses=[]
    )
    along = []
    if clocks:
        along.append(
            Along(
                "sla_clocks",
                CLOCK_STARTS_SQL,
                [SegmentKind.START.value, ticket.submitted_time, timezone.now(), clocks],
            )
        )
    if planned:
        along.append(Along("sla_events", *escalation.start_events(planned)))
    return ClockStart(
        fields={"sla_rule": rule, "response_deadline": response, "resolve_deadline": resolve},
        along=tuple(along),
    )


def _pauses(ticket_id: int):
    events = ClockSegment.objects.filter(ticket_id=ticket_id, clock=Clock.RESOLVE).values_list(
        "kind", "at"
    )
    return pauses_from_events(events)


def sla_pause(*, ticket_id: int, user, now: datetime | None = None) -> Ticket:
    """Waiting on applicant: stop the resolve clock. Compare-and-set on the pause flag; an
    already paused or no longer open ticket is a conflict."""
    now = now or timezone.now()
    with transaction.atomic():
        claimed = Ticket.objects.filter(
            pk=ticket_id,
            process_status=ProcessStatus.APPROVED,
            ticket_status__in=OPEN_STATUSES,
            sla_paused=False,
        ).update(sla_paused=True, sla_paused_at=now)
        if not claimed:
            raise ConflictError(
                gettext(
                    "Cannot pause: the ticket is already waiting on the applicant or is not open."
                )
            )
        ClockSegment.objects.create(
            ticket_id=ticket_id, clock=Clock.RESOLVE, kind=SegmentKind.PAUSE, at=now, actor=user
        )
        escalation.pause_events(ticket_id)
        record(ticket_id=ticket_id, action="sla_pause", actor_id=user.pk if user else None, now=now)
        return Ticket.objects.select_related("handler_group").get(pk=ticket_id)


def sla_resume(*, ticket_id: int, user, now: datetime | None = None) -> Ticket:
    """Resume the resolve clock; the resolve deadline moves later by the paused business
    time (recomputed from the segment log)."""
    now = now or timezone.now()
    with transaction.atomic():
        claimed = Ticket.objects.filter(pk=ticket_id, sla_paused=True).update(
            sla_paused=False, sla_paused_at=None
        )
        if not claimed:
            raise ConflictError(
                gettext("Cannot resume: the ticket is not waiting on the applicant.")
            )
        ClockSegment.objects.create(
            ticket_id=ticket_id, clock=Clock.RESOLVE, kind=SegmentKind.RESUME, at=now, actor=user
        )
        ticket = Ticket.objects.select_related("sla_rule__calendar", "handler_group").get(
            pk=ticket_id
        )
        before = ticket.resolve_deadline
        pauses = _pauses(ticket_id)
        _, ticket.resolve_deadline = _deadlines(ticket, ticket.sla_rule, pauses)
        ticket.save(update_fields=["resolve_deadline"])
        escalation.sync_events(
            ticket,
            ticket.sla_rule,
            response_deadline=ticket.response_deadline,
            resolve_deadline=ticket.resolve_deadline,
            pauses=pauses,
            now=now,
            resumed=True,
        )
        record(
            ticket_id=ticket_id,
            action="sla_resume",
            actor_id=user.pk if user else None,
            now=now,
            detail={
                "resolve_deadline_before": before.isoformat() if before else None,
                "resolve_deadline": (
                    ticket.resolve_deadline.isoformat() if ticket.resolve_deadline else None
                ),
            },
        )
        return ticket


def sla_finalize(*, ticket: Ticket, now: datetime, merged: bool = False) -> SlaOutcome:
    """The SLA outcome is final: on completion, or, inside the close's transaction, when the
    ticket is closed unfinished (no completed_time: closed from pending assign, pending
    process or processing). Business minutes to the first response (acceptance) and to
    resolution (pauses excluded); a clock still running at the close runs until the close.
    Per clock a result: met or breached; for a clock still running at the close, breached if
    it is past its deadline by then, otherwise closed before due (neither met nor breached);
    none when the rule has no such clock. A ticket finalised while waiting on the applicant
    stops its pause then. `merged`: a duplicate merged into another ticket (unfinished; its
    caller keeps a completed ticket's outcome): each clock of its rule is `merged`, neither
    met nor breached, whatever it stood at (the minutes are kept)."""
    unfinished = ticket.completed_time is None
    if ticket.sla_paused:
        Ticket.objects.filter(pk=ticket.pk).update(sla_paused=False, sla_paused_at=None)
        ticket.sla_paused, ticket.sla_paused_at = False, None
        ClockSegment.objects.create(
            ticket_id=ticket.pk, clock=Clock.RESOLVE, kind=SegmentKind.STOP, at=now
        )
    rule = ticket.sla_rule
    calendar = business_calendar(rule.calendar if rule else None)
    start = ticket.submitted_time
    responded = ticket.responded_time or ticket.accepted_time
    response_end = responded or (now if unfinished else None)
    response_ran = (
        running_time(start=start, end=response_end, pauses=[], calendar=calendar)
        if response_end
        else None
    )
    resolved = ticket.completed_time or now
    resolve_ran = running_time(
        start=start, end=resolved, pauses=_pauses(ticket.pk), calendar=calendar
    )
    response_result = ClockResult.NONE
    if ticket.response_deadline is not None:
        if responded is None and unfinished and not ticket.response_timeout:
            still_due = now <= ticket.response_deadline
            response_result = ClockResult.CLOSED_BEFORE_DUE if still_due else ClockResult.BREACHED
        else:
            met = (
                not ticket.response_timeout
                and responded is not None
                and responded <= ticket.response_deadline
            )
            response_result = ClockResult.MET if met else ClockResult.BREACHED
    resolve_result = ClockResult.NONE
    resolve_budget = hours_to_timedelta(rule.resolve_hours) if rule else None
    if resolve_budget is not None:
        # Compared on the clock itself, so a pause still open at the end counts as stopped.
        within = not ticket.resolve_timeout and resolve_ran <= resolve_budget
        if not within:
            resolve_result = ClockResult.BREACHED
        else:
            resolve_result = ClockResult.CLOSED_BEFORE_DUE if unfinished else ClockResult.MET
    if merged:
        # The work goes on in the other ticket: counted apart (sla.reports), not judged here.
        if response_result != ClockResult.NONE:
            response_result = ClockResult.MERGED
        if resolve_result != ClockResult.NONE:
            resolve_result = ClockResult.MERGED
    outcome, _ = SlaOutcome.objects.update_or_create(
        ticket=ticket,
        defaults={
            "rule": rule,
            "response_minutes": _minutes(response_ran) if response_ran is not None else None,
            "resolve_minutes": _minutes(resolve_ran),
            "response_met": _met(response_result),
            "resolve_met": _met(resolve_result),
            "response_result": response_result,
            "resolve_result": resolve_result,
            "closed_before_completion": unfinished,
            "completed_time": resolved,
        },
    )
    return outcome


def sla_reopen(
    *, ticket: Ticket, completed_time: datetime | None, now: datetime, user=None
) -> Ticket:
    """A completed ticket reopened (inside the reopen's transaction, which holds the
    ticket's row lock): its resolve clock runs on from where it stopped at `completed_time`.
    The time between completion and reopen does not count — a pause from the completion to
    now in the segment log — so the resolve deadline moves later by that span in business
    time (recomputed from the log, as at resume). The outcome written at completion is no
    longer final and is removed; `sla_finalize` writes it again at the next completion or
    at the close. The resolve clock's escalation levels that came due while the ticket was
    completed (void: the clock had stopped) are pending again, and every pending level is
    re-timed from the moved deadline (`escalation.sync_events`). A deadline reached before
    the completion stays reached (resolve_timeout). The response clock ended at acceptance
    and does not move."""
    SlaOutcome.objects.filter(ticket_id=ticket.pk).delete()
    if completed_time is not None and completed_time < now:
        ClockSegment.objects.bulk_create(
            [
                ClockSegment(
                    ticket_id=ticket.pk,
                    clock=Clock.RESOLVE,
                    kind=SegmentKind.PAUSE,
                    at=completed_time,
                    actor=user,
                ),
                ClockSegment(
                    ticket_id=ticket.pk,
                    clock=Clock.RESOLVE,
                    kind=SegmentKind.RESUME,
                    at=now,
                    actor=user,
                ),
            ]
        )
        SlaEvent.objects.filter(
            ticket_id=ticket.pk,
            clock=Clock.RESOLVE,
            state=EventState.VOID,
            due_at__gte=completed_time,
        ).update(state=EventState.PENDING, fired_at=None)
    rule = ticket.sla_rule
    before = ticket.resolve_deadline
    pauses = _pauses(ticket.pk)
    _, ticket.resolve_deadline = _deadlines(ticket, rule, pauses)
    Ticket.objects.filter(pk=ticket.pk).update(resolve_deadline=ticket.resolve_deadline)
    escalation.sync_events(
        ticket,
        rule,
        response_deadline=ticket.response_deadline,
        resolve_deadline=ticket.resolve_deadline,
        pauses=pauses,
        now=now,
        resumed=True,
    )
    record(
        ticket_id=ticket.pk,
        action="sla_resume",
        actor_id=user.pk if user else None,
        now=now,
        detail={
            "reopen": True,
            "resolve_deadline_before": before.isoformat() if before else None,
            "resolve_deadline": (
                ticket.resolve_deadline.isoformat() if ticket.resolve_deadline else None
            ),
        },
    )
    return ticket


def _met(result: str) -> bool | None:
    """The result as the met boolean: null when the clock was neither met nor breached."""
    met: dict[str, bool] = {ClockResult.MET: True, ClockResult.BREACHED: False}
    return met.get(result)


def _minutes(duration: timedelta) -> Decimal:
    return Decimal(duration.total_seconds() / 60).quantize(Decimal("0.01"))


@dataclass
class RecomputeResult:
    examined: int = 0
    moved: int = 0
    newly_breached: int = 0
    events_changed: int = 0
    changes: list[dict] = field(default_factory=list)


def sla_recompute(
    *, dry_run: bool = False, rule_id: int | None = None, now: datetime | None = None
) -> RecomputeResult:
    """After a rule, ladder or calendar change: re-match the rule of every open approved
    ticket, recompute its deadlines from the segment log and re-time its pending escalation
    levels. With `rule_id`, only tickets on that rule now or after re-matching. A dry run
    reports what would change (per ticket, in `changes`), writing nothing."""
    now = now or timezone.now()
    result = RecomputeResult()
    with transaction.atomic():
        tickets = list(
            Ticket.objects.filter(
                process_status=ProcessStatus.APPROVED, ticket_status__in=OPEN_STATUSES
            )
            .select_for_update(of=("self",))
            .order_by("id")
        )
        ids = [t.pk for t in tickets]
        pauses_by_ticket: dict[int, list] = {}
        for ticket_id, kind, at in ClockSegment.objects.filter(
            clock=Clock.RESOLVE, ticket_id__in=ids
        ).values_list("ticket_id", "kind", "at"):
            pauses_by_ticket.setdefault(ticket_id, []).append((kind, at))
        pending: dict[int, dict] = {}
        for ticket_id, clock, level, due, level_id in SlaEvent.objects.filter(
            ticket_id__in=ids, state=EventState.PENDING
        ).values_list("ticket_id", "clock", "level", "due_at", "escalation_level_id"):
            pending.setdefault(ticket_id, {})[(clock, level)] = (due, level_id)
        fired: dict[int, set] = {}
        for ticket_id, clock, level in (
            SlaEvent.objects.filter(ticket_id__in=ids)
            .exclude(state=EventState.PENDING)
            .values_list("ticket_id", "clock", "level")
        ):
            fired.setdefault(ticket_id, set()).add((clock, level))
        rules: dict[tuple[int, str], SlaRule | None] = {}
        for ticket in tickets:
            key = (ticket.priority, ticket.category)
            if key not in rules:
                rules[key] = match_rule(priority=ticket.priority, category=ticket.category)
            rule = rules[key]
            if rule_id is not None and rule_id not in (ticket.sla_rule_id, rule and rule.pk):
                continue
            result.examined += 1
            pauses = pauses_from_events(pauses_by_ticket.get(ticket.pk, []))
            response, resolve = _deadlines(ticket, rule, pauses)
            if ticket.sla_paused:
                resolve = ticket.resolve_deadline if resolve is None else resolve
            moved = (response, resolve, rule.pk if rule else None) != (
                ticket.response_deadline,
                ticket.resolve_deadline,
                ticket.sla_rule_id,
            )
            planned = escalation.planned_events(
                ticket,
                rule,
                response_deadline=response,
                resolve_deadline=None if ticket.sla_paused else resolve,
                pauses=pauses,
            )
            done = fired.get(ticket.pk, set())
            planned = {k: v for k, v in planned.items() if k not in done}
            events_changed = planned != pending.get(ticket.pk, {})
            if not (moved or events_changed):
                continue
            result.moved += moved
            result.events_changed += events_changed
            breached = _newly_breached(ticket, response, resolve, now)
            result.newly_breached += breached
            result.changes.append(
                {
                    "ticket_id": ticket.pk,
                    "bill_code": ticket.bill_code,
                    "rule_id": {"from": ticket.sla_rule_id, "to": rule.pk if rule else None},
                    "response_deadline": {"from": ticket.response_deadline, "to": response},
                    "resolve_deadline": {"from": ticket.resolve_deadline, "to": resolve},
                    "newly_breached": breached,
                    "levels": [
                        {"clock": clock, "level": level, "due_at": due}
                        for (clock, level), (due, _id) in sorted(planned.items())
                    ],
                }
            )
            if not dry_run:
                ticket.sla_rule = rule
                ticket.response_deadline, ticket.resolve_deadline = response, resolve
                ticket.save(update_fields=["sla_rule", "response_deadline", "resolve_deadline"])
                escalation.sync_events(
                    ticket,
                    rule,
                    response_deadline=response,
                    resolve_deadline=None if ticket.sla_paused else resolve,
                    pauses=pauses,
                    now=now,
                )
        if dry_run:
            transaction.set_rollback(True)
    return result


def _newly_breached(ticket: Ticket, response, resolve, now: datetime) -> bool:
    response_now = (
        ticket.responded_time is None
        and not ticket.response_timeout
        and response is not None
        and response <= now
        and not (ticket.response_deadline and ticket.response_deadline <= now)
    )
    resolve_now = (
        not ticket.resolve_timeout
        and not ticket.sla_paused
        and resolve is not None
        and resolve <= now
        and not (ticket.resolve_deadline and ticket.resolve_deadline <= now)
    )
    return response_now or resolve_now


def import_holidays(*, calendar, country: str, year: int) -> int:
    """Public holidays of `country` in `year` from the `holidays` package; returns how many
    were new."""
    import holidays as holiday_data

    from .calendars import touch
    from .models import Holiday

    try:
        days = holiday_data.country_holidays(country.upper(), years=year)
    except NotImplementedError as exc:
        raise ValueError(f"no holiday data for country {country!r}") from exc
    before = calendar.holidays.count()
    Holiday.objects.bulk_create(
        [
            Holiday(calendar=calendar, date=day, name=name[:200])
            for day, name in sorted(days.items())
        ],
        ignore_conflicts=True,
    )
    touch(calendar)
    return calendar.holidays.count() - before
