"""The merging card's form: "Merge into…" names a target (bill code or id); the page comes
back with a confirm step naming it (its code and title), and the confirmed form calls
collaboration.services.merging.ticket_merge. A refusal is the ticket page again with the
message and its status (400, 403, 409), nothing changed; a merge redirects to the target."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from collaboration.selectors.links import ticket_by_reference
from collaboration.selectors.merging import may_merge, target_refusal
from collaboration.services.merging import ticket_merge
from config.errors import ConflictError, Forbidden, InvalidArgument
from console.merging import MERGE_STATE, MergeForm
from console.pages import detail_url, visible_ticket
from console.views.ticket import action_failed, render_ticket
from workflow.selectors import ticket_for

REFUSALS = (ConflictError, Forbidden, InvalidArgument)


@login_required
@require_POST
def ticket_merge_view(request: HttpRequest, ticket_id: int) -> HttpResponse:
    source = visible_ticket(request, ticket_id)
    form = MergeForm(request.POST)
    try:
        if not may_merge(request.user, source):
            raise Forbidden(_("Only the group's leader or staff may merge tickets."))
        if not form.is_valid():
            raise InvalidArgument("into", _("Nothing was merged: name the ticket to merge into."))
        target_id = ticket_by_reference(request.user, form.cleaned_data["into"])
        if target_id is None:
            error = _("No ticket %(reference)s, or you may not see it.") % {
                "reference": form.cleaned_data["into"]
            }
            form.add_error("into", error)
            raise InvalidArgument("into", error)
        if not form.cleaned_data["confirm"]:
            return _confirm(request, source, form, target_id)
        target = ticket_merge(source_id=source.pk, target_id=target_id, user=request.user)
    except REFUSALS as exc:
        setattr(request, MERGE_STATE, {"form": form})
        return action_failed(request, source.pk, exc)
    messages.success(
        request,
        _("%(source)s was merged into %(target)s.")
        % {"source": source.bill_code, "target": target.bill_code},
    )
    return redirect(detail_url(target.pk))


def _confirm(request: HttpRequest, source, form: MergeForm, target_id: int) -> HttpResponse:
    """The page again with the confirm step naming the target, or the refusal the merge
    would meet for it (409) before anything is asked."""
    target = ticket_for(request.user, target_id)
    if target.pk == source.pk:
        raise ConflictError(_("Cannot merge a ticket into itself."))
    refusal = target_refusal(target)
    if refusal:
        raise ConflictError(refusal)
    confirmed = MergeForm(initial={"into": str(target.pk), "confirm": True})
    setattr(request, MERGE_STATE, {"form": confirmed, "target": target})
    return render_ticket(request, source)
