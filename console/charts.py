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
