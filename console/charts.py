"""SLA compliance per day as a server-rendered SVG bar chart (no script): for each day two
stacked bars, response on the left and resolve on the right, each met (bottom), breached and
closed before due (top). Pure: it draws the rows `sla.reports.sla_daily` returns."""

from dataclasses import dataclass
from math import ceil

from django.utils.formats import date_format
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

WIDTH, HEIGHT = 760, 280
PLOT_LEFT, PLOT_RIGHT = 44, WIDTH - 12
PLOT_TOP, PLOT_BOTTOM = 14, HEIGHT - 44
MAX_DAY_LABELS = 15


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


def _nice_ceiling(value: int) -> tuple[int, int]:
    """(top of the y axis, step between its gridlines): at most five steps of 1, 2 or 5 × 10ⁿ."""
    value = max(value, 1)
    magnitude = 1
    while True:
        for step in (magnitude, 2 * magnitude, 5 * magnitude):
            if ceil(value / step) <= 5:
                return ceil(value / step) * step, step
        magnitude *= 10


def _day_summary(row: dict) -> str:
    values = {key: row[key] for key in (s.key for s in SERIES)}
    return _(
        "%(day)s — response: %(response_met)s met, %(response_breached)s breached, "
        "%(response_closed_before_due)s closed before due; resolve: %(resolve_met)s met, "
        "%(resolve_breached)s breached, %(resolve_closed_before_due)s closed before due"
    ) % {"day": date_format(row["day"], "D M j"), **values}


def _rect(x: float, y: float, width: float, height: float, fill: str, css: str) -> str:
    return (
        f'<rect class="{css}" x="{x:.1f}" y="{y:.1f}" width="{width:.1f}" '
        f'height="{height:.1f}" fill="{fill}"/>'
    )


def daily_chart_svg(days: list[dict], *, element_id: str = "sla-daily-chart") -> SafeString:
    """The chart for `days` (one row per day, oldest first). Every text is escaped here."""
    if not days:
        return mark_safe("")
    totals = [
        sum(row[s.key] for s in SERIES if s.clock == clock)
        for row in days
        for clock in ("response", "resolve")
    ]
    top, step = _nice_ceiling(max(totals))
    plot_height = PLOT_BOTTOM - PLOT_TOP

    def y(count: float) -> float:
        return PLOT_BOTTOM - count / top * plot_height

    title = _("SLA compliance per day")
    summary = _(
        "Two bars per day, response on the left and resolve on the right; each stacks the "
        "clocks met, breached and closed before due. The table below has the same numbers."
    )
    ident = escape(element_id)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="sla-daily-chart" id="{ident}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" width="100%" role="img" '
        f'aria-labelledby="{ident}-title {ident}-desc" font-family="system-ui, sans-serif">',
        f'<title id="{ident}-title">{escape(title)}</title>',
        f'<desc id="{ident}-desc">{escape(summary)}</desc>',
        '<g class="grid">',
    ]
    for value in range(0, top + 1, step):
        gy = y(value)
        out.append(
            f'<line x1="{PLOT_LEFT}" x2="{PLOT_RIGHT}" y1="{gy:.1f}" y2="{gy:.1f}" '
            f'stroke="{"#5f6b7a" if value == 0 else "#e5e7eb"}"/>'
            f'<text x="{PLOT_LEFT - 6}" y="{gy + 3:.1f}" font-size="10" text-anchor="end" '
            f'fill="#5f6b7a">{value}</text>'
        )
    out.append("</g>")

    slot = (PLOT_RIGHT - PLOT_LEFT) / len(days)
    bar = slot * 0.36
    every = ceil(len(days) / MAX_DAY_LABELS)
    previous_month = None
    for index, row in enumerate(days):
        left = PLOT_LEFT + index * slot
        out.append(f'<g class="day"><title>{escape(_day_summary(row))}</title>')
        for offset, clock in ((0.1, "response"), (0.54, "resolve")):
            base = 0
            for series in (s for s in SERIES if s.clock == clock):
                count = row[series.key]
                if count:
                    out.append(
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
        out.append("</g>")
        if index % every == 0:
            day = row["day"]
            label = date_format(day, "M j" if day.month != previous_month else "j")
            previous_month = day.month
            out.append(
                f'<text x="{left + slot / 2:.1f}" y="{PLOT_BOTTOM + 14}" font-size="10" '
                f'text-anchor="middle" fill="#5f6b7a">{escape(label)}</text>'
            )
    out.append("</svg>")
    return mark_safe("".join(out))  # every interpolated text is escaped above


def _grid(top: float, step: float, y) -> list[str]:
    lines = []
    value = 0.0
    while value <= top + 1e-9:
        gy = y(value)
        lines.append(
            f'<line x1="{PLOT_LEFT}" x2="{PLOT_RIGHT}" y1="{gy:.1f}" y2="{gy:.1f}" '
            f'stroke="{"#5f6b7a" if value == 0 else "#e5e7eb"}"/>'
            f'<text x="{PLOT_LEFT - 6}" y="{gy + 3:.1f}" font-size="10" text-anchor="end" '
            f'fill="#5f6b7a">{value:g}</text>'
        )
        value += step
    return lines


def _open_svg(ident: str, css: str, title: str, summary: str) -> list[str]:
    ident = escape(ident)
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="{css}" id="{ident}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" width="100%" role="img" '
        f'aria-labelledby="{ident}-title {ident}-desc" font-family="system-ui, sans-serif">',
        f'<title id="{ident}-title">{escape(title)}</title>',
        f'<desc id="{ident}-desc">{escape(summary)}</desc>',
    ]


def staffing_chart_svg(hours: list[dict], *, element_id: str = "staffing-chart") -> SafeString:
    """Required (Erlang C) and available agents per hour of a day: two bars per hour, the
    required one outlined, the available one filled (absent for hours not started)."""
    if not hours:
        return mark_safe("")
    peak = max(max(row["required_agents"] or 0, row["available_agents"] or 0) for row in hours)
    top, step = _nice_ceiling(max(ceil(peak), 1))
    plot_height = PLOT_BOTTOM - PLOT_TOP

    def y(count: float) -> float:
        return PLOT_BOTTOM - count / top * plot_height

    out = _open_svg(
        element_id,
        "staffing-chart",
        _("Required and available agents per hour"),
        _(
            "For each hour, the agents Erlang C requires for the forecast arrivals (outlined) "
            "and the agents who were available (filled). The table below has the numbers."
        ),
    )
    out += ['<g class="grid">', *_grid(top, step, y), "</g>"]
    slot = (PLOT_RIGHT - PLOT_LEFT) / len(hours)
    bar = slot * 0.38
    for index, row in enumerate(hours):
        left = PLOT_LEFT + index * slot
        required, available = row["required_agents"], row["available_agents"]
        hover = _("%(hour)02d:00 — required %(required)s, available %(available)s") % {
            "hour": row["hour"],
            "required": "—" if required is None else required,
            "available": "—" if available is None else available,
        }
        out.append(f'<g class="hour"><title>{escape(hover)}</title>')
        if required:
            out.append(
                f'<rect class="required" x="{left + slot * 0.1:.1f}" y="{y(required):.1f}" '
                f'width="{bar:.1f}" height="{y(0) - y(required):.1f}" fill="#dbeafe" '
                f'stroke="#1d4ed8" stroke-width="1.5"/>'
            )
        if available:
            out.append(
                _rect(
                    left + slot * 0.52,
                    y(available),
                    bar,
                    y(0) - y(available),
                    "#1f7a3d",
                    "available",
                )
            )
        out.append("</g>")
        if row["hour"] % 3 == 0:
            out.append(
                f'<text x="{left + slot / 2:.1f}" y="{PLOT_BOTTOM + 14}" font-size="10" '
                f'text-anchor="middle" fill="#5f6b7a">{row["hour"]:02d}</text>'
            )
    legend = [("#dbeafe", _("Required (Erlang C)")), ("#1f7a3d", _("Available"))]
    for index, (colour, label) in enumerate(legend):
        lx = PLOT_LEFT + index * 180
        out.append(
            f'<rect x="{lx}" y="{HEIGHT - 18}" width="10" height="10" fill="{colour}" '
            f'stroke="#1d4ed8" stroke-width="{1 if index == 0 else 0}"/>'
            f'<text x="{lx + 14}" y="{HEIGHT - 9}" font-size="11" fill="#1f2937">'
            f"{escape(label)}</text>"
        )
    out.append("</svg>")
    return mark_safe("".join(out))


def comparison_chart_svg(
    rows: list[dict], *, metric: str, label: str, element_id: str
) -> SafeString:
    """One bar per strategy for one figure of a simulation (e.g. wait p95), side by side."""
    values = [float(row.get(metric) or 0) for row in rows]
    if not rows:
        return mark_safe("")
    top, step = _nice_ceiling(max(ceil(max(values)), 1))
    plot_height = PLOT_BOTTOM - PLOT_TOP

    def y(value: float) -> float:
        return PLOT_BOTTOM - value / top * plot_height

    out = _open_svg(
        element_id,
        "comparison-chart",
        label,
        _("One bar per strategy; the table below has the numbers."),
    )
    out += ['<g class="grid">', *_grid(top, step, y), "</g>"]
    slot = (PLOT_RIGHT - PLOT_LEFT) / len(rows)
    for index, (row, value) in enumerate(zip(rows, values, strict=True)):
        left = PLOT_LEFT + index * slot
        name = str(row.get("strategy_label") or row.get("strategy"))
        out.append(f'<g class="strategy"><title>{escape(f"{name}: {value:g}")}</title>')
        out.append(
            _rect(left + slot * 0.2, y(value), slot * 0.6, y(0) - y(value), "#1d4ed8", "bar")
        )
        out.append(
            f'<text x="{left + slot / 2:.1f}" y="{PLOT_BOTTOM + 14}" font-size="11" '
            f'text-anchor="middle" fill="#1f2937">{escape(name)}</text></g>'
        )
    out.append("</svg>")
    return mark_safe("".join(out))
