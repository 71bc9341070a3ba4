"""Console routes of macros: the Macros card's Apply (console/macros.py shows the card). One
POST form per macro calls toolbox.macros.macro_apply and answers with a redirect and a
message, or the ticket page again with the refusal's status (a step the ticket's state
refuses: 409; one the viewer may not take: 403; bad input: 400) and nothing changed.

(The view lives beside its route: console/views/ticket.py, whose helpers it uses, imports
console/macros.py for the card.)"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import path
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from config.errors import ConflictError, Forbidden, InvalidArgument
from console.macros import action_words
from console.pages import detail_url, visible_ticket
from console.views.ticket import action_failed
from ticketing.models import Ticket
from toolbox.macros import MacroStepFailed, macro_apply
from toolbox.models import Macro
from workflow import selectors

MACROS_ANCHOR = "#macros"


def step_error(failed: MacroStepFailed) -> Exception:
    """The refusal as the page's errors are (console.pages.error_status: 400, 403, 409)."""
    message = _("Nothing was changed: step %(number)d (%(action)s) could not run. %(detail)s") % {
        "number": failed.step + 1,
        "action": action_words(failed.action),
        "detail": failed.detail,
    }
    if failed.status == 400:
        return InvalidArgument("macro", message)
    if failed.status == 403:
        return Forbidden(message)
    return ConflictError(message)


@login_required
@require_POST
def ticket_macro_apply(request: HttpRequest, ticket_id: int, macro_id: int) -> HttpResponse:
    ticket = visible_ticket(request, ticket_id)
    try:
        after = macro_apply(ticket_id=ticket.pk, macro_id=macro_id, user=request.user)
    except Macro.DoesNotExist:
        raise Http404(_("No such macro, or you may not use it.")) from None
    except MacroStepFailed as failed:
        return action_failed(request, ticket.pk, step_error(failed))
    except (ConflictError, Forbidden, InvalidArgument) as exc:
        return action_failed(request, ticket.pk, exc)
    name = Macro.objects.filter(pk=macro_id).values_list("name", flat=True).first() or ""
    messages.success(
        request,
        _("“%(name)s” was applied to %(code)s.") % {"name": name, "code": after.bill_code},
    )
    try:
        selectors.ticket_for(request.user, ticket.pk)
    except Ticket.DoesNotExist:  # a transfer step handed it to a group the viewer is not in
        return redirect("console:pool")
    return redirect(detail_url(ticket.pk))


urlpatterns: list = [
    path(
        "tickets/<int:ticket_id>/macros/<int:macro_id>/apply/",
        ticket_macro_apply,
        name="ticket-macro-apply",
    ),
]
