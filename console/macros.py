"""The ticket page's Macros card (a button per macro the viewer may apply: the team only) and
the composer's canned responses picker (static/js/canned.js: `::word` or the button lists
GET /api/canned-responses/?q=, a pick inserts POST .../render/'s text). The card's button
posts to console/urls_macros.py, which calls toolbox.macros.macro_apply.

The history's one entry per run (the step records carry "macro_run": the run's record id)
is folded by console/views/ticket.py and worded by console/history.py."""

from django.http import HttpRequest
from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from ticketing.access import Audience
from ticketing.models import Ticket
from toolbox.macros import macros_for

# A step's action in words (the card's titles, a refusal's message).
ACTION_WORDS = {
    "reply": _("reply"),
    "pause": _("pause the clock"),
    "resume": _("resume the clock"),
    "complete": _("complete"),
    "set_priority": _("set the priority"),
    "transfer": _("transfer"),
    "add_tags": _("add tags"),
    "remove_tags": _("remove tags"),
    "set_field": _("set a field"),
}


def action_words(action: str) -> str:
    return str(ACTION_WORDS.get(action, action))


def panel(request: HttpRequest, ticket: Ticket, audience: Audience) -> dict:
    """The team's macros card and picker; nothing for anyone else."""
    if not audience.sees_internals(ticket):
        return {}
    macros = [
        {
            "id": macro.pk,
            "name": macro.name,
            "steps": ", ".join(
                action_words(step.get("action", "?"))
                for step in macro.actions or []
                if isinstance(step, dict)
            ),
        }
        for macro in macros_for(request.user)
    ]
    return {
        "macros_card": {"macros": macros},
        "canned_picker": {
            "list_url": reverse("canned-responses"),
            # canned.js puts the chosen response's id in place of the 0.
            "render_url": reverse("ticket-canned-render", args=[ticket.pk, 0]),
        },
    }
