"""The console's bar charts, server-rendered SVG with no script: the geometry here, the markup
in templates/console/svg/ (one template per chart, on _chart.svg), rendered with every label
escaped. Pure: each draws the rows it is given.

- SLA compliance per day (`sla.reports.sla_daily` rows): for each day two stacked bars,
  response on the left and resolve on the right, each met (bottom), breached and closed before
  due (top);
- required (Erlang C) and available agents per hour (`insight.staffing` hours);
- one figure of a routing simulation, one bar per strategy."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from math import ceil

from django.template.loader import render_to_string
from django.utils.formats import date_format
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

WIDTH, HEIGHT = 760, 280
PLOT_LEFT, PLOT_RIGHT = 44, WIDTH - 12
PLOT_TOP, PLOT_BOTTOM = 14, HEIGHT - 44
MAX_DAY_LABELS = 15
REQUIRED_FILL, REQUIRED_STROKE, AVAILABLE_FILL = "#dbeafe", "#1d4ed8", "#1f7a3d"
STRATEGY_FILL = "#1d4ed8"


@dataclass(frozen=True)
class Series:
    key: str  # a sla_daily column
    clock: str
    label: object  # lazy: rendered in the request's language
    colour: str


SERIES = (
    Series("response_met", "response", gettext_lazy("Response met"), "#1f7a3d"),
    Series("response_breached", "response", gettext_lazy("Response breached"), "#a21c1c"),
    Series(
        "response_closed_before_due",
        "response",
        gettext_lazy("Response closed before due"),
        "#6b7280",
    ),
    Series("resolve_met", "resolve", gettext_lazy("Resolve met"), "#7cc495"),
    Series("resolve_breached", "resolve", gettext_lazy("Resolve breached"), "#e58b8b"),
    Series(
        "resolve_closed_before_due",
        "resolve",
        gettext_lazy("Resolve closed before due"),
        "#c9ced6",
    ),
)


# --- the geometry the templates draw: positions in the viewBox's units, labels translated ---


@dataclass(frozen=True)
class Rect:
    css: str
    x: float
    y: float
    width: float
    height: float
    fill: str
    stroke: str | None = None  # an outlined bar
    stroke_width: float = 0.0


@dataclass(frozen=True)
class GridLine:
    """A horizontal line at `y` with its value written left of the plot (the base line,
    value 0, drawn darker)."""

    y: float
    label: str
    baseline: bool

    @property
    def label_y(self) -> float:
        return self.y + 3


@dataclass(frozen=True)
class Slot:
    """What one x position shows (a day, an hour, a strategy): its bars, one hover text for
    them, and a label under the axis centred at `label_x` (None: not labelled)."""

    title: str
    bars: tuple[Rect, ...]
    label: str | None
    label_x: float


@dataclass(frozen=True)
class LegendEntry:
    x: int
    label: str
    fill: str
    stroke_width: int

    @property
    def label_x(self) -> int:
        return self.x + 14


@dataclass(frozen=True)
class Chart:
    css: str  # the <svg>'s class: what the pages and their tests look for
    element_id: str
    title: str
    summary: str  # the chart in words, for the SVG's <desc>
    grid: tuple[GridLine, ...]
    slots: tuple[Slot, ...]
    legend: tuple[LegendEntry, ...] = ()
    width: int = WIDTH
    height: int = HEIGHT
    plot_left: int = PLOT_LEFT
    plot_right: int = PLOT_RIGHT
    grid_label_x: int = PLOT_LEFT - 6
    slot_label_y: int = PLOT_BOTTOM + 14
    legend_y: int = HEIGHT - 18
    legend_label_y: int = HEIGHT - 9
    legend_stroke: str = REQUIRED_STROKE


def _rect(x: float, y: float, width: float, height: float, fill: str, css: str, **kw) -> Rect:
    return Rect(css, float(x), float(y), float(width), float(height), fill, **kw)


def _nice_ceiling(value: int) -> tuple[int, int]:
    """(top of the y axis, step between its gridlines): at most five steps of 1, 2 or 5 × 10ⁿ."""
    value = max(value, 1)
    magnitude = 1
    while True:
        for step in (magnitude, 2 * magnitude, 5 * magnitude):
            if ceil(value / step) <= 5:
                return ceil(value / step) * step, step
        magnitude *= 10


def _y_scale(top: float) -> Callable[[float], float]:
    plot_height = PLOT_BOTTOM - PLOT_TOP

    def y(value: float) -> float:
        return PLOT_BOTTOM - value / top * plot_height

    return y


def _grid(top: float, step: float, y: Callable[[float], float]) -> list[GridLine]:
    lines = []
    value = 0.0
    while value <= top + 1e-9:
        lines.append(GridLine(y(value), f"{value:g}", value == 0))
        value += step
    return lines


def _render(template: str, chart: Chart) -> SafeString:
    return render_to_string(f"console/svg/{template}", {"chart": chart})


# --- SLA compliance per day ----------------------------------------------------------------


def _day_summary(row: dict) -> str:
    values = {key: row[key] for key in (s.key for s in SERIES)}
    return _(
        "%(day)s — response: %(response_met)s met, %(response_breached)s breached, "
        "%(response_closed_before_due)s closed before due; resolve: %(resolve_met)s met, "
        "%(resolve_breached)s breached, %(resolve_closed_before_due)s closed before due"
    ) % {"day": date_format(row["day"], "D M j"), **values}


def daily_chart(days: list[dict], *, element_id: str = "sla-daily-chart") -> Chart | None:
    """The geometry of the chart for `days` (one row per day, oldest first); None without."""
    if not days:
        return None
    totals = [
        sum(row[s.key] for s in SERIES if s.clock == clock)
        for row in days
        for clock in ("response", "resolve")
    ]
    top, step = _nice_ceiling(max(totals))
    y = _y_scale(top)
    grid = [GridLine(y(value), str(value), value == 0) for value in range(0, top + 1, step)]

    slot = (PLOT_RIGHT - PLOT_LEFT) / len(days)
    bar = slot * 0.36
    every = ceil(len(days) / MAX_DAY_LABELS)
    previous_month = None
    slots = []
    for index, row in enumerate(days):
        left = PLOT_LEFT + index * slot
        bars = []
        for offset, clock in ((0.1, "response"), (0.54, "resolve")):
            base = 0
            for series in (s for s in SERIES if s.clock == clock):
                count = row[series.key]
                if count:
                    bars.append(
                        _rect(
                            left + slot * offset,
                            y(base + count),
                            bar,
                            y(base) - y(base + count),
                            series.colour,
                            series.key.replace("_", "-"),
                        )
                    )
                base += count
        label = None
        if index % every == 0:
            day = row["day"]
            label = date_format(day, "M j" if day.month != previous_month else "j")
            previous_month = day.month
        slots.append(Slot(_day_summary(row), tuple(bars), label, left + slot / 2))
    return Chart(
        css="sla-daily-chart",
        element_id=element_id,
        title=_("SLA compliance per day"),
        summary=_(
            "Two bars per day, response on the left and resolve on the right; each stacks the "
            "clocks met, breached and closed before due. The table below has the same numbers."
        ),
        grid=tuple(grid),
        slots=tuple(slots),
    )


def daily_chart_svg(days: list[dict], *, element_id: str = "sla-daily-chart") -> SafeString:
    """The chart for `days` as SVG (empty without days); the template escapes every text."""
    chart = daily_chart(days, element_id=element_id)
    return _render("sla_daily.svg", chart) if chart else SafeString("")


# --- required and available agents per hour -------------------------------------------------


def staffing_chart(hours: list[dict], *, element_id: str = "staffing-chart") -> Chart | None:
    """Required (Erlang C) and available agents per hour of a day: two bars per hour, the
    required one outlined, the available one filled (absent for hours not started)."""
    if not hours:
        return None
    peak = max(max(row["required_agents"] or 0, row["available_agents"] or 0) for row in hours)
    top, step = _nice_ceiling(max(ceil(peak), 1))
    y = _y_scale(top)
    slot = (PLOT_RIGHT - PLOT_LEFT) / len(hours)
    bar = slot * 0.38
    slots = []
    for index, row in enumerate(hours):
        left = PLOT_LEFT + index * slot
        required, available = row["required_agents"], row["available_agents"]
        hover = _("%(hour)02d:00 — required %(required)s, available %(available)s") % {
            "hour": row["hour"],
            "required": "—" if required is None else required,
            "available": "—" if available is None else available,
        }
        bars = []
        if required:
            bars.append(
                _rect(
                    left + slot * 0.1,
                    y(required),
                    bar,
                    y(0) - y(required),
                    REQUIRED_FILL,
                    "required",
                    stroke=REQUIRED_STROKE,
                    stroke_width=1.5,
                )
            )
        if available:
            bars.append(
                _rect(
                    left + slot * 0.52,
                    y(available),
                    bar,
                    y(0) - y(available),
                    AVAILABLE_FILL,
                    "available",
                )
            )
        label = f"{row['hour']:02d}" if row["hour"] % 3 == 0 else None
        slots.append(Slot(hover, tuple(bars), label, left + slot / 2))
    legend = [
        LegendEntry(PLOT_LEFT, _("Required (Erlang C)"), REQUIRED_FILL, 1),
        LegendEntry(PLOT_LEFT + 180, _("Available"), AVAILABLE_FILL, 0),
    ]
    return Chart(
        css="staffing-chart",
        element_id=element_id,
        title=_("Required and available agents per hour"),
        summary=_(
            "For each hour, the agents Erlang C requires for the forecast arrivals (outlined) "
            "and the agents who were available (filled). The table below has the numbers."
        ),
        grid=tuple(_grid(top, step, y)),
        slots=tuple(slots),
        legend=tuple(legend),
    )


def staffing_chart_svg(hours: list[dict], *, element_id: str = "staffing-chart") -> SafeString:
    """The staffing chart as SVG (empty without hours); the template escapes every text."""
    chart = staffing_chart(hours, element_id=element_id)
    return _render("staffing.svg", chart) if chart else SafeString("")


# --- one figure of a simulation, per strategy ----------------------------------------------


def comparison_chart(rows: list[dict], *, metric: str, label: str, element_id: str) -> Chart | None:
    """One bar per strategy for one figure of a simulation (e.g. wait p95), side by side."""
    if not rows:
        return None
    values = [float(row.get(metric) or 0) for row in rows]
    top, step = _nice_ceiling(max(ceil(max(values)), 1))
    y = _y_scale(top)
    slot = (PLOT_RIGHT - PLOT_LEFT) / len(rows)
    slots = []
    for index, (row, value) in enumerate(zip(rows, values, strict=True)):
        left = PLOT_LEFT + index * slot
        name = str(row.get("strategy_label") or row.get("strategy"))
        bar = _rect(left + slot * 0.2, y(value), slot * 0.6, y(0) - y(value), STRATEGY_FILL, "bar")
        slots.append(Slot(f"{name}: {value:g}", (bar,), name, left + slot / 2))
    return Chart(
        css="comparison-chart",
        element_id=element_id,
        title=label,
        summary=_("One bar per strategy; the table below has the numbers."),
        grid=tuple(_grid(top, step, y)),
        slots=tuple(slots),
    )


def comparison_chart_svg(
    rows: list[dict], *, metric: str, label: str, element_id: str
) -> SafeString:
    """The comparison chart as SVG (empty without rows); the template escapes every text."""
    chart = comparison_chart(rows, metric=metric, label=label, element_id=element_id)
    return _render("comparison.svg", chart) if chart else SafeString("")
