"""The SLA timeline drawing (console/timeline.py and its template): pure, no database. What the
SVG says and where it puts things, in the active time zone."""

import re
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from xml.etree import ElementTree

from django.utils import timezone, translation

from console import timeline as drawing
from console.timeline import PLOT_LEFT, PLOT_RIGHT, timeline_svg
from sla.tracks import ClockTrack, LevelMark

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
SVG = "{http://www.w3.org/2000/svg}"


def minutes(n: float) -> datetime:
    return T0 + timedelta(minutes=n)


def response(**kwargs) -> ClockTrack:
    """Response clock: 1 h from T0; level 1 due at 45 min and fired then, level 2 at the
    deadline and fired a minute late; responded at 70 min (late)."""
    defaults = {
        "deadline": minutes(60),
        "stop": minutes(70),
        "levels": (
            LevelMark(1, minutes(45), minutes(45), "fired"),
            LevelMark(2, minutes(60), minutes(61), "fired"),
        ),
    }
    return ClockTrack("response", T0, **{**defaults, **kwargs})


def resolve(**kwargs) -> ClockTrack:
    """Resolve clock: 4 h, paused 80–100 min (deadline moved to 4 h 20), two pending levels."""
    defaults = {
        "deadline": minutes(260),
        "pauses": ((minutes(80), minutes(100)),),
        "levels": (
            LevelMark(3, minutes(245), None, "pending"),
            LevelMark(4, minutes(260), None, "pending"),
        ),
    }
    return ClockTrack("resolve", T0, **{**defaults, **kwargs})


def parse(svg: str) -> ElementTree.Element:
    return ElementTree.fromstring(str(svg))  # well-formed XML, or this raises


def titles(root) -> list[str]:
    return [t.text for t in root.iter(f"{SVG}title")]


def by_class(root, css: str) -> list[ElementTree.Element]:
    return [e for e in root.iter() if css in (e.get("class") or "").split()]


def test_both_lanes_with_levels_deadlines_pause_now_and_outcome():
    with timezone.override("UTC"):
        root = parse(timeline_svg([response(), resolve()], now=minutes(120)))
    hover = titles(root)
    assert "SLA timeline" in hover
    assert "Level 1 due 09:45, fired 09:45" in hover
    assert "Level 2 due 10:00, fired 10:01" in hover
    assert "Level 3 due 13:05, pending" in hover
    assert "Deadline 10:00" in hover and "Deadline 13:20" in hover
    assert "Paused 10:20 – 10:40 (waiting on the applicant)" in hover
    assert "now 11:00" in hover
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert texts[0] == "Response" and "Resolve" in texts
    assert "Times in UTC" in texts
    outcomes = [e.text for e in by_class(root, "sla-outcome")]
    assert outcomes == ["responded late", "running"]
    # Due instants are hollow rings, fired ones filled dots: 4 rings, 2 dots.
    assert len(by_class(root, "sla-due")) == 4
    assert [c.get("fill") for c in by_class(root, "sla-fired")] == ["#8a5300"] * 2
    assert all(c.get("fill") == "#fff" for c in by_class(root, "sla-due"))
    assert len(by_class(root, "sla-pause")) == 1
    assert len(by_class(root, "sla-overdue")) == 1  # the response bar past 10:00


def test_the_axis_runs_from_the_start_past_the_last_instant_with_a_margin():
    root = parse(timeline_svg([response(), resolve()], now=minutes(120)))
    (l4,) = [g for g in by_class(root, "sla-level") if "Level 4" in g.find(f"{SVG}title").text]
    ring = l4.find(f"{SVG}circle")
    start_bar = by_class(root, "sla-bar")[0]
    assert PLOT_LEFT < float(start_bar.get("x")) < PLOT_LEFT + 40  # start, after a margin
    assert PLOT_RIGHT - 40 < float(ring.get("cx")) < PLOT_RIGHT  # the last level, before one


def test_times_are_shown_in_the_active_time_zone_and_named():
    with timezone.override("Europe/Berlin"):  # UTC+1 in March
        svg = str(timeline_svg([response()], now=minutes(120)))
    assert "Level 1 due 10:45, fired 10:45" in svg
    assert "Times in Europe/Berlin" in svg


def test_a_finished_ticket_seen_weeks_later_is_not_squeezed_by_now():
    done = [response(result="breached"), resolve(stop=minutes(200), result="met")]
    root = parse(timeline_svg(done, now=T0 + timedelta(days=40)))
    assert by_class(root, "sla-now") == []
    assert [e.text for e in by_class(root, "sla-outcome")] == ["breached", "met"]
    ticks = [t.text for t in by_class(root, "sla-axis")[0].iter(f"{SVG}text")]
    assert "09:00" in ticks and not any("Apr" in (t or "") for t in ticks)


def test_a_paused_clock_says_so_and_its_levels_without_an_instant_are_not_drawn():
    paused = resolve(
        pauses=((minutes(80), None),),
        levels=(LevelMark(3, None, None, "pending"), LevelMark(4, None, None, "pending")),
        deadline=minutes(240),
    )
    root = parse(timeline_svg([paused], now=minutes(120)))
    assert [e.text for e in by_class(root, "sla-outcome")] == ["paused"]
    assert by_class(root, "sla-level") == []
    hover = titles(root)
    assert "Paused since 10:20 (waiting on the applicant)" in hover
    assert any(t.startswith("Deadline 13:00 before the pause") for t in hover)


def test_void_and_skipped_levels_say_why_they_did_not_fire():
    track = response(
        levels=(
            LevelMark(1, minutes(45), None, "void"),
            LevelMark(2, minutes(60), None, "skipped"),
        )
    )
    hover = titles(parse(timeline_svg([track], now=minutes(120))))
    assert "Level 1 due 09:45, void: the clock stopped first" in hover
    assert "Level 2 due 10:00, skipped: it passed while paused" in hover


def test_a_span_over_several_days_writes_the_day_with_each_instant():
    long = resolve(deadline=T0 + timedelta(days=2), levels=(), pauses=())
    svg = str(timeline_svg([long], now=minutes(30)))
    assert "Deadline Mar 4 09:00" in svg


def test_text_is_escaped():
    track = ClockTrack('<script>"x"</script>', T0, deadline=minutes(60))
    svg = str(timeline_svg([track], now=minutes(30), element_id='t"><b'))
    parse(svg)
    assert "<script>" not in svg and "<b" not in re.sub(r"&lt;b", "", svg)


def test_no_clocks_no_drawing():
    assert timeline_svg([], now=T0) == ""


HOSTILE = ' <script>alert("x")</script> & co'


def test_every_label_is_escaped_by_the_template(monkeypatch):
    """Each text the picture writes (translated labels, the dates in them, the clock's own
    name) reaches the reader as text: a <script> or a & in any of them is escaped, not markup."""
    monkeypatch.setattr(drawing, "_", lambda message: message + HOSTILE)
    real_date_format = drawing.date_format
    monkeypatch.setattr(
        drawing, "date_format", lambda *a, **kw: real_date_format(*a, **kw) + HOSTILE
    )
    tracks = [response(), replace(resolve(), clock="resolve" + HOSTILE)]
    svg = str(timeline_svg(tracks, now=minutes(120)))
    assert "<script" not in svg and "&lt;script&gt;" in svg and "&amp; co" in svg
    root = parse(svg)
    written = [e for e in root.iter() if e.tag in {f"{SVG}title", f"{SVG}desc", f"{SVG}text"}]
    assert len(written) > 20
    assert all(HOSTILE in (e.text or "") for e in written), [e.text for e in written]
    lane_classes = [g.get("class") for g in by_class(root, "sla-lane")]
    assert lane_classes[1] == "sla-lane sla-lane-resolve" + HOSTILE


def test_coordinates_are_written_with_a_dot_in_every_language():
    """SVG reads 84.5, never the page language's 84,5 (German writes decimals with a comma)."""
    with translation.override("de"):
        svg = str(timeline_svg([response(), resolve()], now=minutes(120)))
    root = parse(svg)
    numbers = [
        value
        for e in root.iter()
        for name, value in e.attrib.items()
        if name in {"x", "y", "x1", "x2", "y1", "y2", "cx", "cy", "r", "width", "height"}
        and value != "100%"
    ]
    assert len(numbers) > 40
    assert all(re.fullmatch(r"-?\d+(\.\d)?", n) for n in numbers), numbers
    assert any("." in n for n in numbers)


# --- level labels never overlap -------------------------------------------------------------

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from console.timeline import layout_labels, text_width  # noqa: E402

LABELS = st.lists(
    st.tuples(
        st.floats(min_value=PLOT_LEFT, max_value=PLOT_RIGHT, allow_nan=False),
        st.sampled_from(["L1", "L2", "L3", "L10", "第1级", "WWW"]),
    ),
    max_size=12,
)


@given(LABELS)
def test_label_boxes_never_intersect_and_every_level_is_named_once(items):
    placed = layout_labels(items)
    boxes = sorted(
        (centre - text_width(text) / 2, centre + text_width(text) / 2) for centre, text, _ in placed
    )
    for (_l1, right), (left, _r2) in zip(boxes, boxes[1:], strict=False):
        assert right <= left, (items, placed)
    members = sorted(i for _c, _t, group in placed for i in group)
    assert members == list(range(len(items)))
    for _c, text, group in placed:
        assert text == " ".join(items[i][1] for i in sorted(group, key=lambda i: (items[i][0], i)))


def test_levels_due_close_together_share_one_label_in_the_svg():
    close = response(
        levels=(
            LevelMark(1, minutes(59), minutes(59), "fired"),
            LevelMark(2, minutes(60), minutes(61), "fired"),
            LevelMark(3, minutes(60.5), None, "pending"),
        )
    )
    with timezone.override("UTC"):
        root = parse(timeline_svg([close], now=minutes(65)))
    labels = [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "sla-level-label"]
    assert labels == ["L1 L2 L3"]
    assert len(by_class(root, "sla-level-fired")) == 2  # each level keeps its mark


def test_levels_far_apart_keep_their_own_labels():
    with timezone.override("UTC"):
        root = parse(timeline_svg([response()], now=minutes(65)))
    labels = [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "sla-level-label"]
    assert labels == ["L1", "L2"]


def test_the_clocks_as_a_list_name_every_instant_in_the_readers_zone():
    with timezone.override("Asia/Shanghai"), translation.override("en"):
        rows = drawing.clock_rows([response(), resolve()], now=minutes(65))
    first = rows[0]
    assert (first.name, first.start, first.deadline, first.stop) == (
        "Response",
        "Mar 2 17:00",
        "Mar 2 18:00",
        "Mar 2 18:10",
    )
    assert [(lv.label, lv.due, lv.fired, lv.state) for lv in first.levels] == [
        ("L1", "Mar 2 17:45", "Mar 2 17:45", "fired"),
        ("L2", "Mar 2 18:00", "Mar 2 18:01", "fired"),
    ]
    assert rows[1].stop == ""  # the resolve clock still runs
