"""ticketing.fields' rules called directly: the value each type stores, whole and partial
validation, the filters' reading of a query value, and display in a reader's language."""

import pytest

from config.errors import InvalidArgument
from tests.factories import UserFactory
from tests.toolbox.fielding import make_fields
from ticketing.fields import display_value, filter_value, people_named, validate

pytestmark = pytest.mark.django_db


@pytest.fixture
def rows():
    return make_fields()


@pytest.mark.parametrize(
    ("key", "given", "stored"),
    [
        ("model", "  LJ 4000 ", "LJ 4000"),
        ("copies", 3, 3),
        ("copies", 2.5, 2.5),
        ("copies", 4.0, 4),
        ("copies", "7", 7),
        ("bought", "2024-02-29", "2024-02-29"),
        ("colour", "cyan", "cyan"),
        ("trays", ["letter", "a4", "a4"], ["a4", "letter"]),
        ("urgent_box", False, False),
        ("urgent_box", True, True),
    ],
)
def test_each_type_stores_its_value_so(rows, key, given, stored):
    values = {"model": "x", key: given}
    assert validate("printer", values)[key] == stored


@pytest.mark.parametrize(
    ("key", "given"),
    [
        ("copies", float("nan")),
        ("copies", "1e999"),
        ("copies", [1]),
        ("bought", "2024-2-29"),
        ("bought", 20240229),
        ("colour", ["cyan"]),
        ("trays", [1]),
        ("owner", "someone"),
        ("owner", True),
        ("owner", -1),
        ("urgent_box", 1),
        ("model", "x" * 2001),
    ],
)
def test_a_value_its_type_cannot_hold_is_refused_naming_the_field(rows, key, given):
    with pytest.raises(InvalidArgument) as refused:
        validate("printer", {"model": "x", key: given})
    assert refused.value.field == f"fields.{key}"


def test_a_user_field_holds_an_active_users_id(rows):
    person = UserFactory()
    assert validate("printer", {"model": "x", "owner": person.pk})["owner"] == person.pk
    person.is_active = False
    person.save()
    with pytest.raises(InvalidArgument, match="fields.owner"):
        validate("printer", {"model": "x", "owner": person.pk})


def test_whole_validation_drops_empty_optional_values_and_needs_the_required(rows):
    assert validate("printer", {"model": "x", "asset": "", "trays": []}) == {"model": "x"}
    with pytest.raises(InvalidArgument, match="fields.model"):
        validate("printer", {"asset": "A"})
    # Fields of every category apply to a ticket of none; a category's own do not.
    assert validate("", {"asset": "A"}) == {"asset": "A"}
    with pytest.raises(InvalidArgument, match="fields.model"):
        validate(None, {"model": "x"})


def test_a_required_checkbox_must_be_ticked(rows):
    box = rows["fields"]["urgent_box"]
    box.required = True
    box.save()
    with pytest.raises(InvalidArgument, match="fields.urgent_box"):
        validate("printer", {"model": "x", "urgent_box": False})
    assert validate("printer", {"model": "x", "urgent_box": True})["urgent_box"] is True


def test_partial_validation_checks_only_the_keys_given_and_none_clears(rows):
    assert validate("printer", {"colour": "black", "asset": None}, partial=True) == {
        "colour": "black",
        "asset": None,
    }
    # A key the category no longer has may be cleared, not set.
    assert validate("network", {"model": None}, partial=True) == {"model": None}
    with pytest.raises(InvalidArgument, match="fields.model"):
        validate("network", {"model": "x"}, partial=True)
    with pytest.raises(InvalidArgument, match="fields.model"):
        validate("printer", {"model": None}, partial=True)


def test_an_inactive_field_is_no_field(rows):
    rows["fields"]["colour"].active = False
    rows["fields"]["colour"].save()
    with pytest.raises(InvalidArgument, match="fields.colour"):
        validate("printer", {"model": "x", "colour": "cyan"})


@pytest.mark.parametrize(
    ("key", "raw", "wanted"),
    [
        ("copies", "3", 3),
        ("copies", "2.5", 2.5),
        ("bought", "2024-02-29", "2024-02-29"),
        ("trays", "a4", ["a4"]),
        ("urgent_box", "false", False),
        ("owner", "12", 12),
        ("model", " LJ ", "LJ"),
    ],
)
def test_a_filter_reads_the_query_value_by_the_fields_type(rows, key, raw, wanted):
    assert filter_value(rows["fields"][key], raw) == wanted


def test_values_read_in_the_readers_language(rows):
    fields = rows["fields"]
    person = UserFactory(username="ada", first_name="", last_name="")
    users = people_named([person.pk])
    assert display_value(fields["owner"], person.pk, "en", users) == "ada"
    assert display_value(fields["bought"], "2024-02-29", "zh-hans") == "2024年2月29日"
    assert display_value(fields["trays"], ["a4", "a3"], "en") == "a4, a3"
    assert display_value(fields["urgent_box"], True, "en") == "Yes"
    assert display_value(fields["copies"], None, "en") == ""
