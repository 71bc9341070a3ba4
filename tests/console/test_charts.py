"""The console's charts (console/charts.py and templates/console/svg/): pure, no database.
Each is well-formed SVG whose every label is escaped by its template, with its numbers
written as SVG reads them in any language."""

import re
from datetime import date, timedelta
from xml.etree import ElementTree

import pytest
from django.utils import translation

from console import charts
from console.charts import (
    SERIES,
    comparison_chart_svg,
    daily_chart,
    daily_chart_svg,
    staffing_chart_svg,
)

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = ' <script>alert("x")</script> & co'
NUMERIC = {"x", "y", "x1", "x2", "y1", "y2", "width", "height", "stroke-width"}


def days(n: int = 20) -> list[dict]:
    first = date(2026, 2, 20)
    return [
        {"day": first + timedelta(days=i), **{s.key: (i * 3 + j) % 4 for j, s in enumerate(SERIES)}}
        for i in range(n)
    ]


def hours() -> list[dict]:
    return [
        {
            "hour": h,
            "required_agents": (h % 5) or None,
            "available_agents": (h % 3) * 1.5 if h < 15 else None,
        }
        for h in range(24)
    ]


def strategies(name: str = "Round robin") -> list[dict]:
    return [
        {"strategy": "round_robin", "strategy_label": name, "wait_p95_seconds": 42.5},
        {"strategy": "least_loaded", "wait_p95_seconds": 12},
    ]


def parse(svg) -> ElementTree.Element:
    return ElementTree.fromstring(str(svg))  # well-formed XML, or this raises


def texts(root, tag: str) -> list[str]:
    return [e.text or "" for e in root.iter(f"{SVG}{tag}")]


@pytest.fixture
def hostile_labels(monkeypatch):
    """Every translated label and written date of the charts carries a <script> and a &."""
    monkeypatch.setattr(charts, "_", lambda message: message + HOSTILE)
    real_date_format = charts.date_format
    monkeypatch.setattr(
        charts, "date_format", lambda *a, **kw: real_date_format(*a, **kw) + HOSTILE
    )


def assert_escaped(svg: str) -> ElementTree.Element:
    assert "<script" not in svg and "&lt;script&gt;" in svg and "&amp; co" in svg
    return parse(svg)


def test_the_daily_chart_escapes_its_title_summary_day_texts_and_labels(hostile_labels):
    root = assert_escaped(str(daily_chart_svg(days())))
    (title,), (desc,) = texts(root, "title")[:1], texts(root, "desc")
    assert title.endswith(HOSTILE) and desc.endswith(HOSTILE)
    day_titles = [
        g.find(f"{SVG}title").text for g in root.iter(f"{SVG}g") if g.get("class") == "day"
    ]
    assert len(day_titles) == 20 and all(t.endswith(HOSTILE) for t in day_titles)
    day_labels = [t for t in texts(root, "text") if not re.fullmatch(r"\d+", t)]
    assert day_labels and all(t.endswith(HOSTILE) for t in day_labels)


def test_the_staffing_chart_escapes_its_title_summary_hours_and_legend(hostile_labels):
    root = assert_escaped(str(staffing_chart_svg(hours())))
    written = texts(root, "title") + texts(root, "desc")
    assert len(written) == 1 + 1 + 24 and all(t.endswith(HOSTILE) for t in written)
    legend = [t for t in texts(root, "text") if HOSTILE in t]
    assert len(legend) == 2 and legend[0].startswith("Required (Erlang C)")


def test_the_comparison_chart_escapes_its_label_and_the_strategy_names(hostile_labels):
    svg = str(
        comparison_chart_svg(
            strategies("Round robin" + HOSTILE),
            metric="wait_p95_seconds",
            label="Wait p95" + HOSTILE,
            element_id='sim"><b',
        )
    )
    root = assert_escaped(svg)
    assert root.get("id") == 'sim"><b' and "<b" not in svg.replace("&lt;b", "")
    assert texts(root, "title")[:2] == ["Wait p95" + HOSTILE, "Round robin" + HOSTILE + ": 42.5"]
    assert texts(root, "desc")[0].endswith(HOSTILE)
    assert "Round robin" + HOSTILE in texts(root, "text")


@pytest.mark.parametrize(
    "render",
    [
        lambda: daily_chart_svg(days(40)),
        lambda: staffing_chart_svg(hours()),
        lambda: comparison_chart_svg(
            strategies(), metric="wait_p95_seconds", label="w", element_id="c"
        ),
    ],
    ids=["daily", "staffing", "comparison"],
)
def test_numbers_are_written_with_a_dot_in_every_language(render):
    """SVG reads 84.5, never the page language's 84,5 (German writes decimals with a comma)."""
    with translation.override("de"):
        root = parse(render())
    numbers = [v for e in root.iter() for k, v in e.attrib.items() if k in NUMERIC and v != "100%"]
    assert len(numbers) > 20
    assert all(re.fullmatch(r"\d+(\.\d)?", n) for n in numbers), numbers
    assert any("." in n for n in numbers)


def test_a_day_stacks_met_breached_and_closed_before_due_per_clock():
    chart = daily_chart(days(3))
    first = chart.slots[0]  # counts 0, 1, 2 (response) and 3, 0, 1 (resolve)
    assert [r.css for r in first.bars] == [
        "response-breached",
        "response-closed-before-due",
        "resolve-met",
        "resolve-closed-before-due",
    ]
    breached, closed = first.bars[:2]
    assert closed.y + closed.height == pytest.approx(breached.y)  # stacked on top
    assert [line.label for line in chart.grid] == ["0", "2", "4", "6"]  # the top total is 6


def test_no_rows_no_chart():
    assert daily_chart_svg([]) == ""
    assert staffing_chart_svg([]) == ""
    assert comparison_chart_svg([], metric="m", label="l", element_id="e") == ""
