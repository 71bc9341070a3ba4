"""The ticket page's Tags card (the ticket's team only, as access "tag" says): the ticket's
tags, a × per tag to remove it and a field to add some, comma-separated, suggesting the tags
in use (a datalist: no script needed). The forms post to console/urls_tags.py's views."""

from django import forms
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from ticketing import access
from ticketing.access import Audience
from ticketing.models import Ticket
from ticketing.tags import tag_suggestions


class TagAddForm(forms.Form):
    tags = forms.CharField(
        label=_("Add tags"),
        max_length=1000,
        help_text=_("Separate tags with commas."),
        widget=forms.TextInput(
            attrs={"autocomplete": "off", "list": "tag-suggestions", "spellcheck": "false"}
        ),
    )

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("auto_id", "tag-%s")  # (ids unique on the ticket page)
        super().__init__(*args, **kwargs)

    def tag_list(self) -> list[str]:
        """The tags typed, split at commas (ticketing.tags normalises and checks them)."""
        return [part for part in self.cleaned_data["tags"].split(",") if part.strip()]


def panel(request: HttpRequest, ticket: Ticket, audience: Audience) -> dict:
    """What the ticket page shows of this: nothing to anyone outside the ticket's team."""
    if not access.may("tag", request.user, ticket, audience):
        return {}
    # A refused add comes back with its error (console/urls_tags.py leaves it here).
    refused = getattr(request, "_tag_form", None)
    return {
        "tags_card": {
            "tags": list(ticket.tags or []),
            "form": refused or TagAddForm(),
            "suggestions": [tag.name for tag in tag_suggestions()],
        }
    }
