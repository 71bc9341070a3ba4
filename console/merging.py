"""The ticket page's merging card: for a leader of the ticket's group or staff, on a ticket
that may be merged, "Merge into…" (a bill code or id), then a confirm step naming the target
(console/views/merging.py); on a merged ticket whose target the viewer cannot see, a banner
saying where it went (one they can see is redirected to: console/views/ticket.py)."""

from django import forms
from django.utils.translation import gettext_lazy as _

from collaboration.selectors.merging import may_merge, source_refusal
from ticketing import access
from ticketing.access import Audience
from ticketing.models import Ticket

# What the merge view hands the page it renders again (the confirm step, or the form with
# its error): request.<MERGE_STATE> = {"form": MergeForm, "target": Ticket | None}.
MERGE_STATE = "merge_state"


class MergeForm(forms.Form):
    into = forms.CharField(
        label=_("Merge into"),
        max_length=40,
        widget=forms.TextInput(attrs={"placeholder": _("Bill code or id"), "autocomplete": "off"}),
    )
    # Set by the confirm step: the target's id, as the first step found it.
    confirm = forms.BooleanField(required=False, widget=forms.HiddenInput)


def panel(request, ticket: Ticket, audience: Audience) -> dict:
    """What the ticket page shows of this, as the viewer may see it."""
    context: dict = {}
    if ticket.merged_into_id is not None:
        # Shown when the viewer stays on the source (its target hidden from them, or asked).
        into = ticket.merged_into
        visible = access.visible_tickets(request.user).filter(pk=ticket.merged_into_id).exists()
        context["merged_banner"] = {"into": into, "visible": visible}
    if not (may_merge(request.user, ticket) and source_refusal(ticket) is None):
        return context
    state = getattr(request, MERGE_STATE, None) or {}
    context["merge_card"] = {
        "form": state.get("form") or MergeForm(),
        "target": state.get("target"),
    }
    return context
