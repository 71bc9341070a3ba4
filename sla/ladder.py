"""Escalation ladders: when each level of a rule is due on a ticket's clock. Pure maths over
the business-time clock (no database), so the rules are easy to state and to test.

A level is an instant on its clock's own time line:
- `percent_elapsed` p: when p % of the clock's budget has run (business time, pauses
  excluded) — p may exceed 100 (e.g. 150: half the budget again past the deadline);
- `minutes_before` / `minutes_after` m: m wall-clock minutes before / after the clock's
  deadline, which itself moves later by every pause.

While a clock is paused with budget left its deadline is unknown, and so is every level that
needs more running time: those have no instant (None) until the clock resumes. A level whose
instant falls inside a pause — only possible for one past a deadline that was reached before
the pause — is skipped at resume, never fired late (sla/escalation.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal

from .clock import BusinessCalendar
from .deadlines import deadline_with_pauses

PERCENT_ELAPSED = "percent_elapsed"
MINUTES_BEFORE = "minutes_before"
MINUTES_AFTER = "minutes_after"
TRIGGERS = (PERCENT_ELAPSED, MINUTES_BEFORE, MINUTES_AFTER)
NOTIFY_TARGETS = ("handler", "leader", "escalation_contact", "approvers")
WARN_TEMPLATE = "ticket-sla-warn"
TIMEOUT_TEMPLATE = "ticket-sla-timeout"


@dataclass(frozen=True)
class Level:
    position: int
    clock: str
    trigger: str
    value: Decimal
    notify: tuple[str, ...] = ("handler", "leader")
    template_code: str = ""
    reassign_group_id: int | None = None
    raise_priority: bool = False
    id: int | None = field(default=None, compare=False)


def default_ladder(warn_before_minutes: int) -> list[Level]:
    """Today's behaviour, the ladder every rule gets unless it says otherwise: warn
    `warn_before_minutes` before each deadline, time out at each deadline, telling the
    handler and the group's leader (the approvers when there is neither)."""
    warn = Decimal(warn_before_minutes)
    return [
        Level(1, "response", MINUTES_BEFORE, warn),
        Level(2, "response", MINUTES_AFTER, Decimal(0)),
        Level(3, "resolve", MINUTES_BEFORE, warn),
        Level(4, "resolve", MINUTES_AFTER, Decimal(0)),
    ]


def due_at(
    level: Level,
    *,
    start: datetime,
    budget: timedelta,
    deadline: datetime | None,
    pauses: list[tuple[datetime, datetime | None]],
    calendar: BusinessCalendar,
) -> datetime | None:
    """The instant `level` is due on a clock started at `start` with `budget`, whose
    deadline (after `pauses`) is `deadline`; None while it cannot be known (paused)."""
    if level.trigger == PERCENT_ELAPSED:
        share = budget * (float(level.value) / 100)
        return deadline_with_pauses(start=start, budget=share, pauses=pauses, calendar=calendar)
    if deadline is None:
        return None
    minutes = timedelta(minutes=float(level.value))
    return deadline - minutes if level.trigger == MINUTES_BEFORE else deadline + minutes


def default_template(level_due: datetime, deadline: datetime | None) -> str:
    """The warning template before the deadline, the timeout one at or after it."""
    return WARN_TEMPLATE if deadline is not None and level_due < deadline else TIMEOUT_TEMPLATE
