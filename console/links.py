"""The ticket page's "Linked tickets" card: parent, children (how many are done), related
tickets and the merge relation, each with its status; for the ticket's team, a remove button
on each link they may remove (the team of both tickets) and a form to add one."""

from django import forms
from django.utils.translation import gettext_lazy as _

from collaboration.selectors.links import children_done, links_of, status_label
from ticketing.access import Audience

ADD_URL_NAME = "ticket-link-add"

KIND_HEADINGS = {
    "parent": _("Parent"),
    "child": _("Children"),
    "related": _("Related"),
    "merged_into": _("Merged into"),
    "merged_from": _("Merged into this one"),
}


class LinkForm(forms.Form):
    """By bill code or id (collaboration.selectors.links.ticket_by_reference), and the kind
    said from this ticket's side. Its ids are its own (`link-…`): other cards' forms share
    the page."""

    ticket = forms.CharField(
        label=_("Ticket"),
        max_length=40,
        widget=forms.TextInput(attrs={"placeholder": _("Bill code or id"), "autocomplete": "off"}),
    )
    kind = forms.ChoiceField(
        label=_("As"),
        choices=(
            ("related", _("related to this one")),
            ("parent", _("the parent of this one")),
            ("child", _("a child of this one")),
        ),
    )

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("auto_id", "link-%s")
        super().__init__(*args, **kwargs)


def panel(request, ticket, audience: Audience) -> dict:
    """What the ticket page shows of this, as the viewer may see it: nothing at all for a
    viewer outside the team when there is no link they may see."""
    entries = links_of(request.user, ticket, audience)
    team = audience.sees_internals(ticket)
    if not entries and not team:
        return {}
    groups = []
    for kind, heading in KIND_HEADINGS.items():
        rows = [
            {
                "id": entry.id,
                "ticket": entry.ticket,
                "status": status_label(entry.ticket),
                "done": entry.done,
                # The team of both may remove it; a merge is not removed here.
                "removable": entry.id is not None
                and team
                and audience.sees_internals(entry.ticket),
            }
            for entry in entries
            if entry.kind == kind
        ]
        if rows:
            groups.append({"kind": kind, "heading": heading, "rows": rows})
    done, children = children_done(entries)
    match = getattr(request, "resolver_match", None)
    sent_back = request.method == "POST" and match is not None and match.url_name == ADD_URL_NAME
    form = LinkForm(request.POST) if sent_back else LinkForm()
    if sent_back:
        form.is_valid()  # (its own errors shown by the fields; the service's in the message)
    return {
        "links_card": {
            "groups": groups,
            "count": len(entries),
            "children": children,
            "children_done": done,
            "team": team,
            "form": form if team else None,
        }
    }
