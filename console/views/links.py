"""The links card's forms: add a link (by bill code or id) and remove one. Each calls one
service (collaboration.services.links); a refusal is the ticket page again with the message
and its status (400, 403, 409), nothing changed."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from collaboration.models import TicketLink
from collaboration.selectors.links import ticket_by_reference
from collaboration.services import links as services
from config.errors import ConflictError, Forbidden, InvalidArgument
from console.links import LinkForm
from console.pages import detail_url, visible_ticket
from console.views.ticket import action_failed

REFUSALS = (ConflictError, Forbidden, InvalidArgument)


def _card(ticket_id: int) -> str:
    return detail_url(ticket_id) + "#links"


@login_required
@require_POST
def link_add(request: HttpRequest, ticket_id: int) -> HttpResponse:
    ticket = visible_ticket(request, ticket_id)
    form = LinkForm(request.POST)
    try:
        if not form.is_valid():
            raise InvalidArgument("ticket", _("The link was not added: see the form."))
        other_id = ticket_by_reference(request.user, form.cleaned_data["ticket"])
        if other_id is None:
            raise InvalidArgument(
                "ticket",
                _("No ticket %(reference)s, or you may not see it.")
                % {"reference": form.cleaned_data["ticket"]},
            )
        link = services.link_add(
            ticket_id=ticket.pk,
            other_id=other_id,
            kind=form.cleaned_data["kind"],
            user=request.user,
        )
    except REFUSALS as exc:
        return action_failed(request, ticket.pk, exc)
    other = link.target if link.source_id == ticket.pk else link.source
    messages.success(request, _("%(code)s is linked.") % {"code": other.bill_code})
    return redirect(_card(ticket.pk))


@login_required
@require_POST
def link_remove(request: HttpRequest, ticket_id: int, link_id: int) -> HttpResponse:
    ticket = visible_ticket(request, ticket_id)
    try:
        services.link_remove(ticket_id=ticket.pk, link_id=link_id, user=request.user)
    except TicketLink.DoesNotExist:
        raise Http404(_("No such link on this ticket.")) from None
    except REFUSALS as exc:
        return action_failed(request, ticket.pk, exc)
    messages.success(request, _("The link was removed."))
    return redirect(_card(ticket.pk))
