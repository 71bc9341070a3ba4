"""A ticket's SLA clocks as data: what `sla.selectors.sla_timeline` returns, with no drawing
(how they look is console's: console/timeline.py). Pure: no Django, no database."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class LevelMark:
    """One escalation level on a clock: `due_at` None while its clock is paused with budget
    left; `state` pending | fired | void | skipped."""

    level: int
    due_at: datetime | None
    fired_at: datetime | None
    state: str


@dataclass(frozen=True)
class ClockTrack:
    """One clock of a ticket. `stop`: responded (response) or completed or closed (resolve);
    None while it runs. `result`: the outcome's result (met, breached, closed_before_due)
    once final, else None."""

    clock: str
    start: datetime
    deadline: datetime | None = None
    stop: datetime | None = None
    pauses: tuple[tuple[datetime, datetime | None], ...] = ()
    levels: tuple[LevelMark, ...] = ()
    result: str | None = None

    @property
    def paused(self) -> bool:
        return self.stop is None and any(end is None for _, end in self.pauses)

    def end(self, now: datetime) -> datetime:
        return self.stop or max(now, self.start)
