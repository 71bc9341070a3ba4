"""The request's queue validation (queueing/serializers.py), without HTTP."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rest_framework import serializers

from queueing.serializers import (
    MAX_COUNT,
    _customer_or_errors,
    _usual_customer,
    parse_queue,
)

from .helpers import person

ANY_VALUE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([MAX_COUNT, MAX_COUNT + 1, 2**63, -(2**63) - 1, 10**30]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 1.0, 0.5, 3600.25]),
    st.text(max_size=4),
    st.sampled_from(["", "x" * 256, "x" * 257, "é", "\ud800"]),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
)
FIELDS = [
    "uid",
    "already_wait_time",
    "is_online",
    "is_complaint",
    "confirm_num",
    "not_confirm_num",
    "is_ssvip",
    "be_jump",
]


def typed(customer):
    return None if customer is None else [(type(v), v) for v in customer]


@settings(max_examples=1500, deadline=None)
@given(
    base=st.fixed_dictionaries({}, optional={f: ANY_VALUE for f in FIELDS}),
    valid=st.lists(st.sampled_from(FIELDS), unique=True),
)
def test_the_fast_path_accepts_a_subset_with_the_same_values(base, valid):
    candidate = {**base, **{f: person("u")[f] for f in valid if f in person("u")}}
    fast = _usual_customer(candidate)
    slow, errors = _customer_or_errors(candidate)
    if fast is not None:
        assert not errors
        assert typed(fast) == typed(slow)


def test_the_fast_path_takes_the_usual_person():
    usual = person(7, already_wait_time=12.5, is_ssvip=1, be_jump=2)
    assert _usual_customer(usual) == _customer_or_errors(usual)[0]
    assert _usual_customer(usual) is not None


def test_parse_queue_gives_customers_with_defaults_and_the_callers_object():
    given_person = person(7, already_wait_time=12.5, extra={"a": 1})
    (customer,) = parse_queue([given_person])
    assert customer.uid == "7"
    assert (customer.is_ssvip, customer.be_jump) == (False, 0)
    assert customer.payload is given_person


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_seconds_are_refused(value):
    with pytest.raises(serializers.ValidationError) as caught:
        parse_queue([person("a", already_wait_time=value)])
    assert list(caught.value.detail["0"]) == ["already_wait_time"]


def test_errors_are_reported_for_at_most_100_persons():
    with pytest.raises(serializers.ValidationError) as caught:
        parse_queue([person(k, confirm_num=-1) for k in range(150)])
    assert len(caught.value.detail) == 100
    assert "99" in caught.value.detail
