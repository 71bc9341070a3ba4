"""The ticket page's Watchers card: who is told of the ticket's public story and how each came
to be, the viewer's Watch / Stop watching, a form to add a person (the team) or copy in a
colleague (the applicant), and Remove where the viewer may (collaboration.selectors.watchers
decides; the actions are console/views/watchers.py)."""

from django import forms
from django.utils.translation import gettext_lazy as _

from collaboration.selectors.watchers import may_add_others, may_remove, watchers_of
from collaboration.serializers.watchers import display_name


class WatcherAddForm(forms.Form):
    username = forms.CharField(
        label=_("Username"),
        max_length=150,
        widget=forms.TextInput(attrs={"autocomplete": "off", "spellcheck": "false"}),
    )

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("auto_id", "watcher-%s")  # (ids unique on the ticket page)
        super().__init__(*args, **kwargs)


def panel(request, ticket, audience) -> dict:
    """What the ticket page shows of this, as the viewer may see it."""
    user = request.user
    rows = []
    watching = False
    for watcher in watchers_of(ticket):
        mine = watcher.user_id == user.pk
        watching = watching or mine
        rows.append(
            {
                "user_id": watcher.user_id,
                "name": display_name(watcher.user),
                "username": watcher.user.get_username(),
                "source": watcher.source,
                "how": watcher.get_source_display(),
                "added": watcher.added,
                "is_viewer": mine,
                "removable": not mine and may_remove(user, ticket, watcher, audience),
            }
        )
    adds_others = may_add_others(user, ticket, audience)
    # A refused add comes back with its error (console/views/watchers.py leaves it here).
    refused = getattr(request, "_watcher_forms", {}).get("watcher")
    return {
        "watchers_card": {
            "rows": rows,
            "viewer_watches": watching,
            # The applicant is told of their own ticket already: nothing to follow.
            "may_watch": ticket.creator_id != user.pk,
            "form": (refused or WatcherAddForm()) if adds_others else None,
            # The applicant copies colleagues in; the team adds anyone.
            "cc": adds_others and not audience.sees_internals(ticket),
        }
    }
