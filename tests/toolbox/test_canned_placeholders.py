"""The placeholders, without a request: exactly the five names, spaces inside the braces
optional, anything else refused on save and left as it is when rendering, and no template
evaluation ever (tags, filters and attribute walks stay text)."""

import pytest

from config.errors import InvalidArgument
from handler_groups.models import HandlerGroup
from ticketing.models import Ticket
from toolbox.placeholders import check_placeholders, render_text, unknown_placeholders


class Person:
    def __init__(self, username, full=""):
        self.username, self.full = username, full

    def get_full_name(self):
        return self.full

    def get_username(self):
        return self.username


def ticket(group=None):
    made = Ticket(bill_code="TK2026001", title="Printer <b>on</b> fire", handler_group=group)
    made._state.fields_cache["creator"] = Person("ada", "Ada Byron")
    return made


def test_each_placeholder_is_filled_with_or_without_spaces():
    text = (
        "{{ticket.bill_code}}|{{ ticket.title }}|{{  applicant.name  }}|{{agent.name}}"
        "|{{ group.name }}"
    )
    group = HandlerGroup(name="support")
    assert render_text(text, ticket=ticket(group), agent=Person("bob")) == (
        "TK2026001|Printer <b>on</b> fire|Ada Byron|bob|support"
    )
    assert render_text("[{{ group.name }}]", ticket=ticket(), agent=Person("bob")) == "[]"


def test_template_syntax_is_never_evaluated():
    text = "{% now 'Y' %} {{ ticket.title|upper }} {{ ticket.creator.password }} {{ settings }}"
    assert render_text(text, ticket=ticket(), agent=Person("bob")) == text
    assert unknown_placeholders(text) == [
        "ticket.title|upper",
        "ticket.creator.password",
        "settings",
    ]


def test_check_names_every_unknown_placeholder_in_the_field():
    check_placeholders("Hi {{ applicant.name }}, no braces here: { x }")
    with pytest.raises(InvalidArgument) as refused:
        check_placeholders("{{ x }} and {{ y }} and {{ x }}", "actions[2].text")
    assert refused.value.field == "actions[2].text"
    assert "{{ x }}, {{ y }}" in refused.value.message
