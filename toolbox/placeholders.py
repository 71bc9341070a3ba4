"""The placeholders a canned response's body and a macro's reply fill in for one ticket:
exactly `{{ ticket.bill_code }}`, `{{ ticket.title }}`, `{{ applicant.name }}`,
`{{ agent.name }}` (the person using it) and `{{ group.name }}` (the ticket's group, or
nothing), spaces inside the braces optional.

Plain substitution, never Django template evaluation: the text is the team's, and a template
language would let it reach attributes and tags no one meant to offer. An unknown
placeholder is refused when the text is saved (`check_placeholders`), so rendering never
meets one it cannot fill (one written before a rename stays as it is)."""

import re
from collections.abc import Callable

from django.utils.translation import gettext as _

from config.errors import InvalidArgument
from ticketing.models import Ticket

PLACEHOLDER = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")


def person_name(user) -> str:
    """A person as the placeholders name them: the full name, else the username."""
    if user is None:
        return ""
    return user.get_full_name().strip() or user.get_username()


# name -> (ticket, agent) -> its text
FILLERS: dict[str, Callable[[Ticket, object], str]] = {
    "ticket.bill_code": lambda ticket, agent: ticket.bill_code,
    "ticket.title": lambda ticket, agent: ticket.title,
    "applicant.name": lambda ticket, agent: person_name(ticket.creator),
    "agent.name": lambda ticket, agent: person_name(agent),
    "group.name": lambda ticket, agent: ticket.handler_group.name if ticket.handler_group else "",
}

NAMES = tuple(FILLERS)


def unknown_placeholders(text: str) -> list[str]:
    """The placeholders in `text` that are not one of NAMES, in order, each once."""
    found: list[str] = []
    for match in PLACEHOLDER.finditer(text or ""):
        name = match.group(1)
        if name not in FILLERS and name not in found:
            found.append(name)
    return found


def as_placeholder(name: str) -> str:
    return "{{ " + name + " }}"


def check_placeholders(text: str, field: str = "body") -> None:
    """Refuse (400 naming `field`) a text with a placeholder this module cannot fill."""
    unknown = unknown_placeholders(text)
    if unknown:
        raise InvalidArgument(
            field,
            _("Unknown placeholder %(placeholder)s: use one of %(known)s.")
            % {
                "placeholder": ", ".join(as_placeholder(name) for name in unknown),
                "known": ", ".join(as_placeholder(name) for name in NAMES),
            },
        )


def render_text(text: str, *, ticket: Ticket, agent) -> str:
    """`text` with each placeholder filled in for `ticket`, `agent` being the person who uses
    it. An unknown placeholder (saved before the check existed) is left as it is."""

    def fill(match: re.Match) -> str:
        filler = FILLERS.get(match.group(1))
        return filler(ticket, agent) if filler else match.group(0)

    return PLACEHOLDER.sub(fill, text or "")
