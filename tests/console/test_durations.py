"""Durations for people (console/durations.py and the `duration` filters): one function,
every unit, rounding, and the filter's empty cases."""

from datetime import timedelta

import pytest
from django.template import Context, Template
from django.utils import translation

from console.durations import human_duration, split_duration


@pytest.mark.parametrize(
    ("seconds", "words"),
    [
        (0, "0 s"),
        (-5, "0 s"),
        (42.4, "42 s"),
        (59.4, "59 s"),
        (60, "1 min"),
        (95, "1 min 35 s"),
        (599.4, "9 min 59 s"),
        (600, "10 min"),
        (45 * 60, "45 min"),
        (2744.6, "46 min"),
        (3600, "1 h"),
        (2 * 3600 + 10 * 60, "2 h 10 min"),
        (2 * 3600 + 10 * 60 + 20, "2 h 10 min"),
        (24 * 3600, "1 d"),
        (3 * 86400 + 4 * 3600, "3 d 4 h"),
        (3 * 86400 + 4 * 3600 + 1200, "3 d 4 h"),
    ],
)
def test_durations_read_as_people_say_them(seconds, words):
    with translation.override("en"):
        assert human_duration(seconds) == words


def test_a_timedelta_and_none():
    with translation.override("en"):
        assert human_duration(timedelta(hours=2, minutes=5)) == "2 h 5 min"
        assert human_duration(None) == ""


def test_rounding_never_writes_60_of_a_unit():
    for seconds in range(0, 3 * 86400, 7):
        unit, numbers = split_duration(seconds)
        if unit == "h min":
            assert 0 < numbers[1] < 60
        if unit == "min":
            assert numbers[0] < 60
        if unit == "min s":
            assert 0 < numbers[1] < 60 and numbers[0] < 10
        if unit == "d h":
            assert 0 < numbers[1] < 24


def test_the_filters_in_a_template():
    template = Template(
        "{% load console_extras %}{{ s|duration }}|{{ m|duration_minutes }}|{{ n|duration }}"
    )
    with translation.override("en"):
        out = template.render(Context({"s": 2744.6, "m": 130, "n": None}))
    assert out == "46 min|2 h 10 min|"
