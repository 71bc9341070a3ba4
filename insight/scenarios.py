"""The simulator's input (simulator.Scenario): a group's record between two dates, or a
synthetic day described by key=value parameters (the call-centre seed's small store: 4
agents, about 80 calls a day, longest idle with a 60 s wrap-up)."""

import math
import random
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext

from handler_groups.models import HandlerGroup, MemberCapacity
from routing.models import PresenceSpan, PresenceState
from ticketing.models import Ticket

from .simulator import Scenario, SimAgent, SimTicket

MAX_RECORDED_DAYS = 92
DEFAULT_HANDLE_SECONDS = 600.0  # when the group has no completed ticket at all
# Spans that count as on shift: available, and wrap-up (the recorded wrap-ups followed the
# recorded assignments; the simulation makes its own). Busy (a break) and offline do not.
ON_SHIFT_STATES = (PresenceState.AVAILABLE, PresenceState.WRAP_UP)


# --- synthetic ----------------------------------------------------------------------------


@dataclass(frozen=True)
class SyntheticParams:
    agents: int = 4
    calls: int = 80
    hours: float = 8.0
    aht: float = 300.0  # mean handle seconds
    wrap_up: int = 60
    max_active: int = 1
    speeds: tuple[float, ...] | None = None  # per agent; default 0.6 … 1.6, evenly spaced
    dist: str = "lognormal"  # or exponential
    sigma: float = 0.5  # lognormal shape
    sla: float = 60.0  # response budget, seconds (the seed's 60 s queue limit)
    warmup: int = 0
    daily_cap: int | None = None

    def agent_speeds(self) -> tuple[float, ...]:
        if self.speeds is not None:
            return self.speeds
        if self.agents == 1:
            return (1.0,)
        return tuple(round(0.6 + i / (self.agents - 1), 4) for i in range(self.agents))

    def as_dict(self) -> dict:
        return {
            "agents": self.agents,
            "calls": self.calls,
            "hours": self.hours,
            "aht": self.aht,
            "wrap_up": self.wrap_up,
            "max_active": self.max_active,
            "speeds": list(self.agent_speeds()),
            "dist": self.dist,
            "sigma": self.sigma,
            "sla": self.sla,
            "warmup": self.warmup,
            "daily_cap": self.daily_cap,
        }


def _number(kind, low, high, *, low_open=False):
    def parse(raw):
        try:
            value = kind(raw)
        except (TypeError, ValueError):
            raise ValueError(
                gettext("must be an integer") if kind is int else gettext("must be a number")
            ) from None
        if isinstance(raw, bool) or (isinstance(value, float) and not math.isfinite(value)):
            raise ValueError(gettext("must be a finite number"))
        if (value <= low if low_open else value < low) or value > high:
            if low_open:
                message = gettext("must be greater than %(low)s and at most %(high)s")
            else:
                message = gettext("must be at least %(low)s and at most %(high)s")
            raise ValueError(message % {"low": low, "high": high})
        return value

    return parse


def _speeds(raw):
    parts = raw if isinstance(raw, list | tuple) else str(raw).split(":")
    parse = _number(float, 0, 100, low_open=True)
    return tuple(parse(part) for part in parts)


def _dist(raw):
    if raw not in ("lognormal", "exponential"):
        raise ValueError(gettext("must be lognormal or exponential"))
    return raw


def _cap(raw):
    if raw in (None, "", "none"):
        return None
    return _number(int, 1, 100_000)(raw)


SYNTHETIC_KEYS = {
    "agents": _number(int, 1, 200),
    "calls": _number(int, 0, 100_000),
    "hours": _number(float, 0, 24 * 31, low_open=True),
    "aht": _number(float, 0, 86_400, low_open=True),
    "wrap_up": _number(int, 0, 3600),
    "max_active": _number(int, 1, 100),
    "speeds": _speeds,
    "dist": _dist,
    "sigma": _number(float, 0, 3),
    "sla": _number(float, 0, 30 * 86_400, low_open=True),
    "warmup": _number(int, 0, 3600),
    "daily_cap": _cap,
}


class ParamsError(ValueError):
    """Invalid parameters; `errors` maps each offending key to what is wrong with it."""

    def __init__(self, errors: dict[str, str]):
        self.errors = errors
        super().__init__("; ".join(f"{key}: {message}" for key, message in errors.items()))


def parse_synthetic(spec: str | dict | None) -> SyntheticParams:
    """`agents=4,calls=80,hours=8,aht=300,wrap_up=60,speeds=0.6:0.9:1.2:1.6` (the command)
    or the same as a JSON object (the API). Unknown keys and bad values are ParamsError."""
    if spec is None or spec == "":
        items: dict = {}
    elif isinstance(spec, dict):
        items = dict(spec)
    else:
        items, errors = {}, {}
        for part in str(spec).split(","):
            part = part.strip()
            if not part:
                continue
            key, sep, value = part.partition("=")
            if not sep:
                errors[key.strip() or part] = gettext("expected key=value")
            else:
                items[key.strip()] = value.strip()
        if errors:
            raise ParamsError(errors)
    errors, values = {}, {}
    for key in sorted(items):
        parse = SYNTHETIC_KEYS.get(key)
        if parse is None:
            errors[key] = gettext("unknown; expected one of %(keys)s") % {
                "keys": ", ".join(SYNTHETIC_KEYS)
            }
            continue
        try:
            values[key] = parse(items[key])
        except ValueError as exc:
            errors[key] = str(exc)
    agents = values.get("agents", SyntheticParams.agents)
    if "speeds" in values and "speeds" not in errors and len(values["speeds"]) != agents:
        errors["speeds"] = gettext("needs one speed per agent (%(agents)s), got %(count)s") % {
            "agents": agents,
            "count": len(values["speeds"]),
        }
    if errors:
        raise ParamsError(errors)
    return SyntheticParams(**values)


def synthetic_scenario(params: SyntheticParams, seed: int) -> Scenario:
    """A day of `calls` arrivals spread uniformly at random over `hours` (a Poisson day with
    its count fixed), each with a handle time drawn from `dist` around `aht`, worked at the
    assigned agent's speed; every agent on shift throughout; all draws from random.Random(seed)."""
    rng = random.Random(seed)
    horizon = params.hours * 3600
    arrivals = sorted(rng.uniform(0, horizon) for _ in range(params.calls))
    tickets = []
    for index, arrival in enumerate(arrivals, start=1):
        if params.dist == "exponential":
            work = rng.expovariate(1 / params.aht)
        else:
            mu = math.log(params.aht) - params.sigma**2 / 2  # mean exactly aht
            work = rng.lognormvariate(mu, params.sigma)
        tickets.append(SimTicket(ticket_id=index, arrival=arrival, work=work, budget=params.sla))
    agents = tuple(
        SimAgent(user_id=i, label=f"agent{i}", max_active=params.max_active, speed=speed)
        for i, speed in enumerate(params.agent_speeds(), start=1)
    )
    return Scenario(
        agents=agents,
        tickets=tuple(tickets),
        horizon=horizon,
        wrap_up_seconds=params.wrap_up,
        warmup_seconds=params.warmup,
        requires_presence=True,
        daily_cap=params.daily_cap,
        day_origin=9 * 3600,  # the store opens at 09:00
    )


# --- recorded -----------------------------------------------------------------------------


@dataclass(frozen=True)
class RecordedScenario:
    scenario: Scenario
    notes: dict  # what the replay was built from (presence basis, handle-time basis, …)


def period(date_from: date, date_to: date) -> tuple[datetime, datetime]:
    """From local midnight of date_from to local midnight after date_to."""
    start = timezone.make_aware(datetime.combine(date_from, time.min))
    end = timezone.make_aware(datetime.combine(date_to + timedelta(days=1), time.min))
    return start, end


def _merge(spans: list[tuple[float, float]]) -> tuple[tuple[float, float], ...]:
    merged: list[list[float]] = []
    for start, end in sorted(spans):
        if end <= start:
            continue
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return tuple((start, end) for start, end in merged)


def recorded_scenario(
    *,
    group: HandlerGroup,
    date_from: date,
    date_to: date,
    response_budget_seconds: float | None = None,
) -> RecordedScenario:
    """The group's approvals between the dates (arrival instants), each ticket's handle time
    (completed − accepted, else the group's mean), its response budget (its SLA rule's
    response hours as elapsed time, or `response_budget_seconds` for every ticket) and the
    members' on-shift windows from the presence history. A member with no presence span in
    the period is taken as on shift throughout, and the notes say so."""
    start, end = period(date_from, date_to)
    horizon = (end - start).total_seconds()

    def offset(moment: datetime) -> float:
        return (moment - start).total_seconds()

    rows = list(
        Ticket.objects.filter(handler_group=group, approved_time__gte=start, approved_time__lt=end)
        .order_by("approved_time", "id")
        .values_list(
            "id",
            "approved_time",
            "accepted_time",
            "completed_time",
            "priority",
            "response_deadline",
            "resolve_deadline",
            "sla_rule__response_hours",
        )
    )
    handles = {
        ticket_id: (done - accepted).total_seconds()
        for ticket_id, _, accepted, done, *_ in rows
        if accepted and done and done > accepted
    }
    if handles:
        mean_handle, handle_basis = sum(handles.values()) / len(handles), "period"
    else:
        history = [
            (done - accepted).total_seconds()
            for accepted, done in Ticket.objects.filter(
                handler_group=group, accepted_time__isnull=False, completed_time__isnull=False
            ).values_list("accepted_time", "completed_time")
            if accepted and done and done > accepted  # (not null: the filter's)
        ]
        if history:
            mean_handle, handle_basis = sum(history) / len(history), "group history"
        else:
            mean_handle, handle_basis = DEFAULT_HANDLE_SECONDS, "default"
    tickets = []
    for ticket_id, approved, _, _, priority, response_dl, resolve_dl, response_hours in rows:
        if response_budget_seconds is not None:
            budget = float(response_budget_seconds)
        elif response_hours:
            budget = float(response_hours) * 3600
        else:
            budget = None
        deadlines = [offset(d) for d in (response_dl, resolve_dl) if d is not None]
        tickets.append(
            SimTicket(
                ticket_id=ticket_id,
                arrival=offset(approved),  # type: ignore[arg-type]  # filtered: not null
                work=handles.get(ticket_id, mean_handle),
                budget=budget,
                urgency=min(deadlines) if deadlines else None,
                priority=priority,
            )
        )

    from django.contrib.auth import get_user_model

    users = {
        u.pk: u for u in get_user_model().objects.filter(pk__in=group.member_ids, is_active=True)
    }
    member_ids = [m for m in group.member_ids if m in users]
    inactive = [m for m in group.member_ids if m not in users]
    caps = dict(
        MemberCapacity.objects.filter(group=group, user_id__in=member_ids).values_list(
            "user_id", "max_active"
        )
    )
    spans: dict[int, list[tuple[float, float]]] = {m: [] for m in member_ids}
    seen: set[int] = set()
    for user_id, state, started, ended in (
        PresenceSpan.objects.filter(user_id__in=member_ids, started__lt=end)
        .filter(Q(ended__isnull=True) | Q(ended__gt=start))
        .order_by("user_id", "started", "id")
        .values_list("user_id", "state", "started", "ended")
    ):
        seen.add(user_id)
        if state in ON_SHIFT_STATES:
            spans[user_id].append((max(offset(started), 0.0), min(offset(ended or end), horizon)))
    recorded = [m for m in member_ids if m in seen]
    assumed = [m for m in member_ids if m not in seen]
    agents = tuple(
        SimAgent(
            user_id=m,
            label=users[m].get_username(),
            max_active=caps.get(m, group.max_active),
            windows=_merge(spans[m]) if m in seen else None,
        )
        for m in member_ids
    )
    name = {m: users[m].get_username() for m in member_ids}
    if not group.requires_presence:
        basis = "the group does not require presence: every member is routable throughout"
    elif assumed:
        basis = (
            "presence history for "
            + (", ".join(name[m] for m in recorded) or "nobody")
            + "; no presence span in the period for "
            + ", ".join(name[m] for m in assumed)
            + ", taken as available the whole time"
        )
    else:
        basis = "presence history for every member"
    notes = {
        "period": {"from": start.isoformat(), "to": end.isoformat()},
        "arrivals": len(tickets),
        "presence_basis": {
            "summary": basis,
            "recorded": [name[m] for m in recorded],
            "assumed_available": [name[m] for m in assumed],
        },
        "handle_time_basis": {
            "recorded_tickets": len(handles),
            "mean_seconds": round(mean_handle, 1),
            "mean_from": handle_basis,
        },
        "response_budget": (
            f"{response_budget_seconds} s for every ticket"
            if response_budget_seconds is not None
            else "each ticket's SLA rule (response hours as elapsed time)"
        ),
        "inactive_members_left_out": inactive,
    }
    local_start = timezone.localtime(start)
    scenario = Scenario(
        agents=agents,
        tickets=tuple(tickets),
        horizon=horizon,
        wrap_up_seconds=group.wrap_up_seconds,
        warmup_seconds=group.warmup_seconds,
        requires_presence=group.requires_presence,
        daily_cap=group.daily_cap,
        day_origin=local_start.hour * 3600 + local_start.minute * 60,
    )
    return RecordedScenario(scenario=scenario, notes=notes)
