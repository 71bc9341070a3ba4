"""A ticket's SLA clocks drawn as a timeline (the ticket page shows it to the team): the
geometry here, the markup in templates/console/svg/sla_timeline.svg, server-rendered SVG with
no script. Pure: it draws the clocks it is given (`sla.selectors.sla_timeline` reads them),
with no database access.

One lane per clock (response, resolve), on one time axis from the first start to the latest of
the deadlines, levels and stops (and now, while a clock runs), with a little margin:
- the bar runs from the start to the stop (or now), red past the deadline;
- pauses are hatched spans over the bar;
- each escalation level is a hollow ring at its due instant and a filled dot at the instant it
  fired (a level fired on time is a filled ring);
- the deadline is a dashed line with a diamond, now a dark line across both lanes, and the
  clock's outcome (or its state while it runs) is written at the end of the lane.

Every label goes through gettext here and is escaped by the template; every instant is shown
in the active time zone (named under the axis); each mark has a <title>, the hover text a
screen reader reads."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _

from sla.tracks import ClockTrack, LevelMark

TEMPLATE = "console/svg/sla_timeline.svg"
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
    "merged": "#6b7280",
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


# --- the geometry the template draws: positions in the viewBox's units, labels translated ---


@dataclass(frozen=True)
class Bar:
    """A span along a lane's bar (the clock's time on time, or past the deadline)."""

    css: str
    title: str
    x: float
    y: int
    width: float
    height: int
    fill: str


@dataclass(frozen=True)
class Deadline:
    """The dashed line from `top` to `bottom` at `x`, its diamond (`points`) and its label."""

    title: str
    label: str
    label_y: int
    x: float
    top: int
    bottom: int
    points: tuple[tuple[float, float], ...]


@dataclass(frozen=True)
class Level:
    """An escalation level: its label at `x`, a ring at its due instant, a dot where it fired
    (either absent when the level has no such instant)."""

    state: str
    title: str
    label: str  # empty when merged into a neighbour's label (see `layout_labels`)
    label_y: int
    x: float
    ring_y: int
    due_x: float | None
    fired_x: float | None
    colour: str
    label_x: float = 0.0


@dataclass(frozen=True)
class Lane:
    clock: str
    name: str
    mid: float  # the lane's centre line
    text_y: float  # the baseline of its name and outcome
    bars: tuple[Bar, ...]
    pauses: tuple[Bar, ...]
    deadline: Deadline | None
    levels: tuple[Level, ...]
    outcome: str
    outcome_x: int
    outcome_colour: str


@dataclass(frozen=True)
class Tick:
    x: float
    label: str


@dataclass(frozen=True)
class Axis:
    y: int
    tick_bottom: int
    label_y: int
    zone_y: int
    ticks: tuple[Tick, ...]
    zone: str


@dataclass(frozen=True)
class NowLine:
    label: str
    x: float
    top: int
    bottom: int
    label_y: int
    anchor: str  # start | middle | end: kept inside the plot near its edges


@dataclass(frozen=True)
class Timeline:
    element_id: str
    width: int
    height: int
    title: str
    summary: str  # the whole picture in words, for the SVG's <desc>
    plot_left: int
    plot_right: int
    lanes: tuple[Lane, ...]
    axis: Axis
    now: NowLine | None


# --- labels that never overlap ------------------------------------------------------------

LABEL_FONT = 10  # the level labels' font size, in the viewBox's units
LABEL_GAP = 4.0  # the least room between two labels


def text_width(text: str, font_size: float = LABEL_FONT) -> float:
    """A conservative width of `text` in a sans-serif font: wide (CJK) characters a full em,
    every other character 0.65 em (more than any Latin glyph but W and M averages), plus a
    little padding."""
    width = 0.0
    for char in text:
        wide = "\u1100" <= char and (
            char <= "\u115f"
            or "\u2e80" <= char <= "\ua4cf"
            or "\uac00" <= char <= "\ud7a3"
            or "\uf900" <= char <= "\ufaff"
            or "\ufe30" <= char <= "\ufe4f"
            or "\uff00" <= char <= "\uff60"
            or "\uffe0" <= char <= "\uffe6"
        )
        width += font_size * (1.0 if wide else 0.65)
    return width + 2.0


def layout_labels(
    items: Sequence[tuple[float, str]], *, font_size: float = LABEL_FONT, gap: float = LABEL_GAP
) -> list[tuple[float, str, tuple[int, ...]]]:
    """Centred labels on one row, merged so that no two boxes overlap: `items` are (x, text);
    the result is (centre x, text, indices of the items it stands for), left to right. Labels
    whose boxes (width from `text_width`, `gap` apart) would touch become one label, their
    texts joined by a space, centred between the first and last of them; merging repeats until
    no pair touches, so "L1" and "L2" two pixels apart read "L1 L2", never "L1L2"."""
    order = sorted(range(len(items)), key=lambda i: (items[i][0], i))
    groups: list[list[int]] = [[i] for i in order]

    def box(group: list[int]) -> tuple[float, float]:
        centre = (items[group[0]][0] + items[group[-1]][0]) / 2
        half = text_width(" ".join(items[i][1] for i in group), font_size) / 2
        return centre - half, centre + half

    merged = True
    while merged:
        merged = False
        for k in range(len(groups) - 1):
            if box(groups[k])[1] + gap > box(groups[k + 1])[0]:
                groups[k : k + 2] = [groups[k] + groups[k + 1]]
                merged = True
                break
    out = []
    for group in groups:
        left, right = box(group)
        out.append(((left + right) / 2, " ".join(items[i][1] for i in group), tuple(group)))
    return out


# --- from clocks to geometry --------------------------------------------------------------


def _lane_name(clock: str) -> str:
    return {"response": _("Response"), "resolve": _("Resolve")}.get(clock, clock)


def _status(track: ClockTrack, now: datetime) -> tuple[str, str]:
    """(label, colour key) written at the end of the lane."""
    if track.result is not None:
        labels = {
            "met": _("met"),
            "breached": _("breached"),
            "closed_before_due": _("closed before due"),
            "merged": _("merged"),
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
        ticks: list[tuple[datetime, str]] = []
        last_day = None
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


def _bars(track: ClockTrack, name: str, scale: _Scale, now: datetime, y: int) -> list[Bar]:
    """The clock's time on time, and its part past the deadline."""
    start, end = track.start, track.end(now)
    base = COLOURS.get(track.result or "running", COLOURS["running"])
    on_time_end = min(end, track.deadline) if track.deadline is not None else end
    x0, x1 = scale.x(start), scale.x(end)
    stop_text = scale.when(track.stop) if track.stop else _("running")
    bar_title = _("%(clock)s clock: started %(start)s, %(stop)s") % {
        "clock": name,
        "start": scale.when(start),
        "stop": (_("stopped %(at)s") % {"at": stop_text}) if track.stop else stop_text,
    }
    bars = []
    if on_time_end > start:
        width = max(scale.x(on_time_end) - x0, 1.0)
        bars.append(Bar("sla-bar", bar_title, x0, y, width, BAR_HEIGHT, base))
    if track.deadline is not None and end > track.deadline:
        late_from = max(start, track.deadline)
        title = _("Past the deadline: %(from)s – %(to)s") % {
            "from": scale.when(late_from),
            "to": scale.when(end),
        }
        late_x = scale.x(late_from)
        width = max(x1 - late_x, 1.0)
        bars.append(
            Bar("sla-bar sla-overdue", title, late_x, y, width, BAR_HEIGHT, COLOURS["overdue"])
        )
    return bars


def _pauses(track: ClockTrack, scale: _Scale, now: datetime, y: int, hatch: str) -> list[Bar]:
    end = track.end(now)
    spans = []
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
        x = scale.x(paused)
        width = max(scale.x(until) - x, 2.0)
        spans.append(Bar("sla-pause", title, x, y - 2, width, BAR_HEIGHT + 4, f"url(#{hatch})"))
    return spans


def _deadline(track: ClockTrack, scale: _Scale, top: int, bar_y: int) -> Deadline | None:
    if track.deadline is None:
        return None
    mid = bar_y + BAR_HEIGHT / 2
    dx = scale.x(track.deadline)
    when = scale.when(track.deadline)
    if track.paused:
        title = _("Deadline %(at)s before the pause: it moves later when the clock resumes")
    else:
        title = _("Deadline %(at)s")
    return Deadline(
        title=title % {"at": when},
        label=_("deadline %(at)s") % {"at": when},
        label_y=bar_y + BAR_HEIGHT + 20,
        x=dx,
        top=top + 12,
        bottom=bar_y + BAR_HEIGHT + 8,
        points=((dx, mid - 7), (dx + 7, mid), (dx, mid + 7), (dx - 7, mid)),
    )


def _levels(track: ClockTrack, scale: _Scale, top: int) -> list[Level]:
    marks = []
    for mark in track.levels:
        at = mark.due_at or mark.fired_at
        if at is None:
            continue  # paused with budget left: its instant is not known yet
        marks.append(
            Level(
                state=mark.state,
                title=_level_title(mark, scale),
                label=_("L%(level)s") % {"level": mark.level},
                label_y=top + 8,
                x=scale.x(at),
                ring_y=top + 18,
                due_x=None if mark.due_at is None else scale.x(mark.due_at),
                fired_x=None if mark.fired_at is None else scale.x(mark.fired_at),
                colour=COLOURS.get(mark.state, COLOURS["pending"]),
            )
        )
    # One label per cluster of levels close together: never "L1L2" printed over each other.
    placed = layout_labels([(m.x, m.label) for m in marks])
    labelled: dict[int, tuple[float, str]] = {}
    for centre, text, members in placed:
        labelled[members[0]] = (centre, text)
        for other in members[1:]:
            labelled[other] = (centre, "")
    return [replace(m, label=labelled[i][1], label_x=labelled[i][0]) for i, m in enumerate(marks)]


def _lane(track: ClockTrack, index: int, scale: _Scale, now: datetime, *, hatch: str) -> Lane:
    top = TOP + index * LANE_HEIGHT
    bar_y = top + 28
    mid = bar_y + BAR_HEIGHT / 2
    name = _lane_name(track.clock)
    label, status_colour = _status(track, now)
    return Lane(
        clock=track.clock,
        name=name,
        mid=mid,
        text_y=mid + 4,
        bars=tuple(_bars(track, name, scale, now, bar_y)),
        pauses=tuple(_pauses(track, scale, now, bar_y, hatch)),
        deadline=_deadline(track, scale, top, bar_y),
        levels=tuple(_levels(track, scale, top)),
        outcome=label,
        outcome_x=PLOT_RIGHT + 12,
        outcome_colour=COLOURS[status_colour],
    )


def _axis(scale: _Scale, lanes: int) -> Axis:
    y = TOP + lanes * LANE_HEIGHT + 2
    return Axis(
        y=y,
        tick_bottom=y + 4,
        label_y=y + 16,
        zone_y=y + 32,
        ticks=tuple(Tick(scale.x(at), label) for at, label in scale.ticks()),
        zone=_("Times in %(zone)s") % {"zone": timezone.get_current_timezone_name()},
    )


def _now_line(scale: _Scale, now: datetime, lanes: int) -> NowLine | None:
    if not scale.contains(now.astimezone(UTC)):
        return None
    x = scale.x(now)
    anchor = "end" if x > PLOT_RIGHT - 40 else "start" if x < PLOT_LEFT + 40 else "middle"
    return NowLine(
        label=_("now %(at)s") % {"at": scale.when(now)},
        x=x,
        top=TOP - 8,
        bottom=TOP + lanes * LANE_HEIGHT + 2,
        label_y=TOP - 12,
        anchor=anchor,
    )


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


def timeline(
    tracks: Sequence[ClockTrack], *, now: datetime, element_id: str = "sla-timeline"
) -> Timeline | None:
    """The geometry of the clocks' picture (None when there are none)."""
    if not tracks:
        return None
    scale = _Scale(*_span(tracks, now))
    hatch = f"{element_id}-hatch"
    return Timeline(
        element_id=element_id,
        width=WIDTH,
        height=TOP + len(tracks) * LANE_HEIGHT + AXIS_HEIGHT,
        title=_("SLA timeline"),
        summary=_summary(tracks, scale, now),
        plot_left=PLOT_LEFT,
        plot_right=PLOT_RIGHT,
        lanes=tuple(_lane(t, i, scale, now, hatch=hatch) for i, t in enumerate(tracks)),
        axis=_axis(scale, len(tracks)),
        now=_now_line(scale, now, len(tracks)),
    )


def timeline_svg(
    tracks: Sequence[ClockTrack], *, now: datetime, element_id: str = "sla-timeline"
) -> SafeString:
    """The clocks as one SVG image (empty when there are none), rendered by the template,
    which escapes every label and attribute, so the result is safe to put in a page as is."""
    drawing = timeline(tracks, now=now, element_id=element_id)
    if drawing is None:
        return SafeString("")
    return render_to_string(TEMPLATE, {"timeline": drawing, "colours": COLOURS})


# --- the same clocks as a list, for a phone ------------------------------------------------


@dataclass(frozen=True)
class LevelRow:
    label: str
    due: str  # "" when the level has no due instant (paused with budget left)
    fired: str  # "" when it has not fired
    state: str


@dataclass(frozen=True)
class ClockRow:
    clock: str
    name: str
    outcome: str
    start: str
    deadline: str
    stop: str  # "" while the clock runs
    levels: tuple[LevelRow, ...]


def clock_rows(tracks: Sequence[ClockTrack], *, now: datetime) -> list[ClockRow]:
    """The clocks in words, each instant in the active time zone with its day: what a phone
    shows instead of the chart, whose 760-unit drawing is 4 px text at 390 px."""

    def when(at: datetime | None) -> str:
        return "" if at is None else date_format(timezone.localtime(at), "M j H:i")

    states = {
        "fired": _("fired"),
        "pending": _("pending"),
        "void": _("void: the clock stopped first"),
        "skipped": _("skipped: it passed while paused"),
    }
    rows = []
    for track in tracks:
        outcome, _colour = _status(track, now)
        rows.append(
            ClockRow(
                clock=track.clock,
                name=_lane_name(track.clock),
                outcome=outcome,
                start=when(track.start),
                deadline=when(track.deadline),
                stop=when(track.stop),
                levels=tuple(
                    LevelRow(
                        label=_("L%(level)s") % {"level": mark.level},
                        due=when(mark.due_at),
                        fired=when(mark.fired_at),
                        state=states.get(mark.state, mark.state),
                    )
                    for mark in track.levels
                ),
            )
        )
    return rows
