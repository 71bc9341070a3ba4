"""A ticket's SLA clocks drawn as a timeline: server-rendered SVG, no script (the ticket page
shows it to the team). Pure: it draws the clock data it is given (`sla.selectors.sla_timeline`
reads it), with no database access.

One lane per clock (response, resolve), on one time axis from the first start to the latest of
the deadlines, levels and stops (and now, while a clock runs), with a little margin:
- the bar runs from the start to the stop (or now), red past the deadline;
- pauses are hatched spans over the bar;
- each escalation level is a hollow ring at its due instant and a filled dot at the instant it
  fired (a level fired on time is a filled ring);
- the deadline is a dashed line with a diamond, now a dark line across both lanes, and the
  clock's outcome (or its state while it runs) is written at the end of the lane.

Every label goes through gettext and is escaped; every instant is shown in the active time
zone (named under the axis); each mark has a <title>, the hover text a screen reader reads."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.utils import timezone
from django.utils.formats import date_format
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext as _

WIDTH = 760
LABEL_WIDTH = 84  # lane names on the left
OUTCOME_WIDTH = 130  # outcome labels on the right
PLOT_LEFT, PLOT_RIGHT = LABEL_WIDTH, WIDTH - OUTCOME_WIDTH
TOP = 26  # room for the "now" label
LANE_HEIGHT = 66
AXIS_HEIGHT = 40
BAR_HEIGHT = 14
MARGIN = 0.04  # of the time span, on either side

COLOURS = {
    "running": "#2457c5",
    "met": "#1f7a3d",
    "closed_before_due": "#6b7280",
    "breached": "#2457c5",
    "overdue": "#a21c1c",
    "deadline": "#a21c1c",
    "now": "#1d2330",
    "track": "#dde1e7",
    "axis": "#5f6b7a",
    "pending": "#2457c5",
    "fired": "#8a5300",
    "void": "#9ca3af",
    "skipped": "#9ca3af",
}
# Axis steps to choose from: the smallest that gives at most MAX_TICKS ticks.
STEPS = [
    timedelta(minutes=m)
    for m in (5, 10, 15, 30, 60, 120, 180, 360, 720, 1440, 2880, 10080, 20160, 43200)
]
MAX_TICKS = 7


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
    """One clock as the timeline draws it. `stop`: responded (response) or completed or
    closed (resolve); None while it runs. `result`: the outcome's result (met, breached,
    closed_before_due) once final, else None."""

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


def _lane_name(clock: str) -> str:
    return {"response": _("Response"), "resolve": _("Resolve")}.get(clock, clock)


def _status(track: ClockTrack, now: datetime) -> tuple[str, str]:
    """(label, colour key) written at the end of the lane."""
    if track.result is not None:
        labels = {
            "met": _("met"),
            "breached": _("breached"),
            "closed_before_due": _("closed before due"),
        }
        colour = "overdue" if track.result == "breached" else track.result
        return labels.get(track.result, track.result), colour
    late = track.deadline is not None and track.end(now) > track.deadline
    if track.stop is not None:  # responded; the outcome is written when the ticket ends
        if track.clock == "response":
            return (_("responded late"), "overdue") if late else (_("responded"), "met")
        return (_("stopped late"), "overdue") if late else (_("stopped"), "met")
    if track.paused:
        return _("paused"), "closed_before_due"
    if late:
        return _("overdue"), "overdue"
    return _("running"), "running"


class _Scale:
    """Instants to x positions, and how to write an instant for this span."""

    def __init__(self, lo: datetime, hi: datetime):
        self.lo, self.hi = lo.astimezone(UTC), hi.astimezone(UTC)
        self.seconds = (self.hi - self.lo).total_seconds()
        self.multi_day = timezone.localdate(self.lo) != timezone.localdate(self.hi)

    def x(self, at: datetime) -> float:
        share = (at.astimezone(UTC) - self.lo).total_seconds() / self.seconds
        return PLOT_LEFT + share * (PLOT_RIGHT - PLOT_LEFT)

    def contains(self, at: datetime) -> bool:
        return self.lo <= at <= self.hi

    def when(self, at: datetime) -> str:
        local = timezone.localtime(at)
        return date_format(local, "M j H:i" if self.multi_day else "H:i")

    def ticks(self) -> list[tuple[datetime, str]]:
        span = self.hi - self.lo
        step = next((s for s in STEPS if span / s <= MAX_TICKS), STEPS[-1])
        start = timezone.localtime(self.lo)
        cursor = start.replace(hour=0, minute=0, second=0, microsecond=0)
        while cursor < start:  # the first step boundary (from local midnight) in range
            cursor += step
        ticks, last_day = [], None  # type: ignore[var-annotated]  # the return value's type
        while cursor.astimezone(UTC) <= self.hi and len(ticks) <= MAX_TICKS * 2:
            # Wall-clock steps in the local zone: ticks fall on 09:00, 10:00… even across DST.
            local = timezone.localtime(cursor)
            if step >= timedelta(days=1):
                label = date_format(local, "M j")
            elif self.multi_day and local.date() != last_day:
                label = date_format(local, "M j H:i")
            else:
                label = date_format(local, "H:i")
            ticks.append((cursor, label))
            last_day = local.date()
            cursor = timezone.localtime(cursor + step)
        return ticks


def _span(tracks: Sequence[ClockTrack], now: datetime) -> tuple[datetime, datetime]:
    """From the first start to the latest instant worth seeing. Now counts while a clock
    runs; for a finished ticket looked at weeks later it would squeeze the story into a
    sliver, so it is left out (and drawn only if it falls inside)."""
    lo = min(t.start for t in tracks)
    instants = [lo]
    for track in tracks:
        instants += [i for i in (track.deadline, track.stop) if i is not None]
        instants += [i for lv in track.levels for i in (lv.due_at, lv.fired_at) if i is not None]
        instants += [i for pause in track.pauses for i in pause if i is not None]
        if track.stop is None:
            instants.append(now)
    hi = max(instants)
    if hi - lo < timedelta(minutes=10):
        hi = lo + timedelta(minutes=10)
    margin = (hi - lo) * MARGIN
    return lo - margin, hi + margin


def _attrs(**attrs) -> str:
    parts = []
    for name, value in attrs.items():
        if value is None:
            continue
        if isinstance(value, float):
            value = f"{value:.1f}"
        parts.append(f'{name.rstrip("_").replace("_", "-")}="{escape(str(value))}"')
    return " ".join(parts)


def _el(tag: str, title: str | None = None, text: str | None = None, **attrs) -> str:
    inner = ""
    if title:
        inner += f"<title>{escape(title)}</title>"
    if text is not None:
        inner += escape(text)
    if not inner:
        return f"<{tag} {_attrs(**attrs)}/>"
    return f"<{tag} {_attrs(**attrs)}>{inner}</{tag}>"


def _level_title(mark: LevelMark, scale: _Scale) -> str:
    values: dict[str, object] = {"level": mark.level}
    if mark.due_at is not None:
        values["due"] = scale.when(mark.due_at)
    if mark.fired_at is not None:
        values["fired"] = scale.when(mark.fired_at)
    if mark.state == "fired":
        if mark.due_at is None:
            return _("Level %(level)s fired %(fired)s") % values
        return _("Level %(level)s due %(due)s, fired %(fired)s") % values
    if mark.due_at is None:
        return _("Level %(level)s: no instant while the clock is paused") % values
    if mark.state == "void":
        return _("Level %(level)s due %(due)s, void: the clock stopped first") % values
    if mark.state == "skipped":
        return _("Level %(level)s due %(due)s, skipped: it passed while paused") % values
    return _("Level %(level)s due %(due)s, pending") % values


def _lane(track: ClockTrack, index: int, scale: _Scale, now: datetime, *, hatch: str) -> list[str]:
    top = TOP + index * LANE_HEIGHT
    bar_y = top + 28
    mid = bar_y + BAR_HEIGHT / 2
    out = [f'<g class="sla-lane sla-lane-{escape(track.clock)}">']
    name = _lane_name(track.clock)
    out.append(_el("text", text=name, x=8, y=mid + 4, font_weight="600", font_size=13))
    out.append(_el("line", x1=PLOT_LEFT, x2=PLOT_RIGHT, y1=mid, y2=mid, stroke=COLOURS["track"]))

    start, end = track.start, track.end(now)
    label, status_colour = _status(track, now)
    base = COLOURS.get(track.result or "running", COLOURS["running"])
    on_time_end = min(end, track.deadline) if track.deadline is not None else end
    x0, x1 = scale.x(start), scale.x(end)
    stop_text = scale.when(track.stop) if track.stop else _("running")
    bar_title = _("%(clock)s clock: started %(start)s, %(stop)s") % {
        "clock": name,
        "start": scale.when(start),
        "stop": (_("stopped %(at)s") % {"at": stop_text}) if track.stop else stop_text,
    }
    if on_time_end > start:
        out.append(
            _el(
                "rect",
                title=bar_title,
                class_="sla-bar",
                x=x0,
                y=bar_y,
                width=max(scale.x(on_time_end) - x0, 1.0),
                height=BAR_HEIGHT,
                rx=3,
                fill=base,
            )
        )
    if track.deadline is not None and end > track.deadline:
        late_from = max(start, track.deadline)
        out.append(
            _el(
                "rect",
                title=_("Past the deadline: %(from)s – %(to)s")
                % {"from": scale.when(late_from), "to": scale.when(end)},
                class_="sla-bar sla-overdue",
                x=scale.x(late_from),
                y=bar_y,
                width=max(x1 - scale.x(late_from), 1.0),
                height=BAR_HEIGHT,
                rx=3,
                fill=COLOURS["overdue"],
            )
        )

    for paused, resumed in track.pauses:
        until = resumed or end
        if resumed is None:
            title = _("Paused since %(from)s (waiting on the applicant)") % {
                "from": scale.when(paused)
            }
        else:
            title = _("Paused %(from)s – %(to)s (waiting on the applicant)") % {
                "from": scale.when(paused),
                "to": scale.when(resumed),
            }
        out.append(
            _el(
                "rect",
                title=title,
                class_="sla-pause",
                x=scale.x(paused),
                y=bar_y - 2,
                width=max(scale.x(until) - scale.x(paused), 2.0),
                height=BAR_HEIGHT + 4,
                fill=f"url(#{hatch})",
                stroke=COLOURS["closed_before_due"],
                stroke_width=0.5,
            )
        )

    if track.deadline is not None:
        dx = scale.x(track.deadline)
        when = scale.when(track.deadline)
        if track.paused:
            title = _("Deadline %(at)s before the pause: it moves later when the clock resumes")
        else:
            title = _("Deadline %(at)s")
        title = title % {"at": when}
        out.append(f'<g class="sla-deadline"><title>{escape(title)}</title>')
        out.append(
            _el(
                "line",
                x1=dx,
                x2=dx,
                y1=top + 12,
                y2=bar_y + BAR_HEIGHT + 8,
                stroke=COLOURS["deadline"],
                stroke_width=2,
                stroke_dasharray="4 3",
            )
        )
        out.append(
            _el(
                "polygon",
                points=f"{dx:.1f},{mid - 7:.1f} {dx + 7:.1f},{mid:.1f} "
                f"{dx:.1f},{mid + 7:.1f} {dx - 7:.1f},{mid:.1f}",
                fill="#fff",
                stroke=COLOURS["deadline"],
                stroke_width=2,
            )
        )
        out.append(
            _el(
                "text",
                text=_("deadline %(at)s") % {"at": when},
                x=dx,
                y=bar_y + BAR_HEIGHT + 20,
                font_size=10,
                text_anchor="middle",
                fill=COLOURS["deadline"],
            )
        )
        out.append("</g>")

    ring_y = top + 18
    for mark in track.levels:
        at = mark.due_at or mark.fired_at
        if at is None:
            continue  # paused with budget left: its instant is not known yet
        colour = COLOURS.get(mark.state, COLOURS["pending"])
        out.append(
            f'<g class="sla-level sla-level-{escape(mark.state)}">'
            f"<title>{escape(_level_title(mark, scale))}</title>"
        )
        out.append(
            _el(
                "text",
                text=_("L%(level)s") % {"level": mark.level},
                x=scale.x(at),
                y=top + 8,
                font_size=10,
                text_anchor="middle",
                fill=colour,
            )
        )
        if mark.due_at is not None:
            out.append(
                _el(
                    "circle",
                    class_="sla-due",
                    cx=scale.x(mark.due_at),
                    cy=ring_y,
                    r=5.0,
                    fill="#fff",
                    stroke=colour,
                    stroke_width=2,
                )
            )
        if mark.fired_at is not None:
            out.append(
                _el(
                    "circle",
                    class_="sla-fired",
                    cx=scale.x(mark.fired_at),
                    cy=ring_y,
                    r=3.5,
                    fill=colour,
                )
            )
        out.append("</g>")

    out.append(
        _el(
            "text",
            class_="sla-outcome",
            text=label,
            x=PLOT_RIGHT + 12,
            y=mid + 4,
            font_size=12,
            font_weight="600",
            fill=COLOURS[status_colour],
        )
    )
    out.append("</g>")
    return out


def _axis(scale: _Scale, lanes: int) -> list[str]:
    y = TOP + lanes * LANE_HEIGHT + 2
    out = [
        '<g class="sla-axis">',
        _el("line", x1=PLOT_LEFT, x2=PLOT_RIGHT, y1=y, y2=y, stroke=COLOURS["axis"]),
    ]
    for at, label in scale.ticks():
        x = scale.x(at)
        out.append(_el("line", x1=x, x2=x, y1=y, y2=y + 4, stroke=COLOURS["axis"]))
        out.append(
            _el(
                "text",
                text=label,
                x=x,
                y=y + 16,
                font_size=10,
                text_anchor="middle",
                fill=COLOURS["axis"],
            )
        )
    zone = _("Times in %(zone)s") % {"zone": timezone.get_current_timezone_name()}
    out.append(_el("text", text=zone, x=PLOT_LEFT, y=y + 32, font_size=10, fill=COLOURS["axis"]))
    out.append("</g>")
    return out


def _now_line(scale: _Scale, now: datetime, lanes: int) -> list[str]:
    if not scale.contains(now.astimezone(UTC)):
        return []
    x = scale.x(now)
    bottom = TOP + lanes * LANE_HEIGHT + 2
    label = _("now %(at)s") % {"at": scale.when(now)}
    anchor = "end" if x > PLOT_RIGHT - 40 else "start" if x < PLOT_LEFT + 40 else "middle"
    return [
        f'<g class="sla-now"><title>{escape(label)}</title>',
        _el("line", x1=x, x2=x, y1=TOP - 8, y2=bottom, stroke=COLOURS["now"], stroke_width=1.5),
        _el("text", text=label, x=x, y=TOP - 12, font_size=10, text_anchor=anchor),
        "</g>",
    ]


def _summary(tracks: Sequence[ClockTrack], scale: _Scale, now: datetime) -> str:
    """The whole picture in words, for the SVG's <desc>."""
    parts = []
    for track in tracks:
        label, _colour = _status(track, now)
        text = _("%(clock)s: started %(start)s") % {
            "clock": _lane_name(track.clock),
            "start": scale.when(track.start),
        }
        if track.deadline is not None:
            text += ", " + _("deadline %(at)s") % {"at": scale.when(track.deadline)}
        if track.stop is not None:
            text += ", " + _("stopped %(at)s") % {"at": scale.when(track.stop)}
        text += f", {label}."
        parts.append(text)
    return " ".join(parts)


def timeline_svg(
    tracks: Sequence[ClockTrack], *, now: datetime, element_id: str = "sla-timeline"
) -> SafeString:
    """The clocks as one SVG image (empty when there are none). Everything interpolated is
    escaped here, so the result is safe to put in a page as is."""
    if not tracks:
        return mark_safe("")
    scale = _Scale(*_span(tracks, now))
    height = TOP + len(tracks) * LANE_HEIGHT + AXIS_HEIGHT
    title = _("SLA timeline")
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="sla-timeline" id="{escape(element_id)}" '
        f'viewBox="0 0 {WIDTH} {height}" width="100%" role="img" '
        f'aria-labelledby="{escape(element_id)}-title {escape(element_id)}-desc" '
        'font-family="system-ui, sans-serif">',
        f'<title id="{escape(element_id)}-title">{escape(title)}</title>',
        f'<desc id="{escape(element_id)}-desc">{escape(_summary(tracks, scale, now))}</desc>',
        "<defs>"
        f'<pattern id="{escape(element_id)}-hatch" patternUnits="userSpaceOnUse" '
        'width="6" height="6" patternTransform="rotate(45)">'
        '<rect width="6" height="6" fill="#e5e7eb"/>'
        '<line x1="0" y1="0" x2="0" y2="6" stroke="#6b7280" stroke-width="2"/>'
        "</pattern></defs>",
    ]
    for index, track in enumerate(tracks):
        out += _lane(track, index, scale, now, hatch=f"{element_id}-hatch")
    out += _axis(scale, len(tracks))
    out += _now_line(scale, now, len(tracks))
    out.append("</svg>")
    return mark_safe("".join(out))  # every interpolated value is escaped above
