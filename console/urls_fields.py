"""The Fields card's action (console/ticket_fields.py shows the card): the team saves a
ticket's custom fields. One POST form calling one service (ticketing.fields.fields_set);
a redirect and a message, or the ticket page again with the error by its input and the
error's status (400 bad value, 403 not the team, 409 a closed ticket), nothing changed."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import path
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from config.errors import ConflictError, Forbidden, InvalidArgument
from console.pages import detail_url, visible_ticket
from console.ticket_fields import TicketFieldsForm, error_input, values_from
from console.views.ticket import action_failed
from ticketing import access
from ticketing import fields as ticket_fields

FIELDS_ANCHOR = "#fields"


@login_required
@require_POST
def ticket_fields_edit(request: HttpRequest, ticket_id: int) -> HttpResponse:
    """The team saves the Fields card: one fields_set of every field shown (an emptied input
    clears it); a refusal brings the page back with the error by its input and nothing
    changed (400, 403, 409)."""
    ticket = visible_ticket(request, ticket_id)
    form = TicketFieldsForm(
        request.POST,
        fields=ticket_fields.fields_for(ticket.category),
        language=translation.get_language(),
    )
    try:
        access.require("edit_fields", request.user, ticket)
        if not form.is_valid():
            raise InvalidArgument("fields", _("Nothing was saved: check the values below."))
        ticket_fields.fields_set(
            ticket_id=ticket.pk,
            values=values_from(form, form.custom),
            actor_id=request.user.pk,
            now=timezone.now(),
        )
    except InvalidArgument as exc:
        name = error_input(exc.field)
        if name in form.fields:
            form.add_error(name, exc.message)
        request._fields_form = form  # type: ignore[attr-defined]
        return action_failed(request, ticket.pk, exc)
    except (ConflictError, Forbidden) as exc:
        return action_failed(request, ticket.pk, exc)
    messages.success(request, _("The fields of %(code)s were saved.") % {"code": ticket.bill_code})
    return redirect(detail_url(ticket.pk) + FIELDS_ANCHOR)


urlpatterns: list = [
    path("tickets/<int:ticket_id>/fields/", ticket_fields_edit, name="ticket-fields-edit"),
]
