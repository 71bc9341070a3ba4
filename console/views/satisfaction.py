"""The applicant rates the help on their ticket's page (signed in): the same service as
POST /api/tickets/{id}/satisfaction/ and the survey link. A refusal shows the page again with
the error's status and nothing changed."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from config.errors import ConflictError, Forbidden, InvalidArgument
from console.pages import detail_url, visible_ticket
from console.satisfaction import FORM_ATTR
from console.views.ticket import action_failed
from satisfaction import services
from satisfaction.forms import RatingForm
from satisfaction.models import Survey
from ticketing import access


@login_required
@require_POST
def ticket_rate(request: HttpRequest, ticket_id: int) -> HttpResponse:
    ticket = visible_ticket(request, ticket_id)
    form = RatingForm(request.POST)
    try:
        access.require("rate", request.user, ticket)
        survey = Survey.objects.filter(ticket_id=ticket.pk).first()
        if survey is None:
            raise services.NotAsked()
        if not form.is_valid():
            field = next(iter(form.errors), "rating")
            raise InvalidArgument(field, _("The rating was not sent: see the form."))
        services.survey_answer(
            survey=survey,
            rating=form.cleaned_data["rating"],
            comment=form.cleaned_data["comment"],
            now=timezone.now(),
        )
    except InvalidArgument as exc:
        if exc.field in form.fields and not form.errors.get(exc.field):
            form.add_error(exc.field, exc.message)
        setattr(request, FORM_ATTR, form)
        return action_failed(request, ticket.pk, exc)
    except (ConflictError, Forbidden) as exc:
        return action_failed(request, ticket.pk, exc)
    messages.success(
        request, _("Thank you: your rating of %(code)s was sent.") % {"code": ticket.bill_code}
    )
    return redirect(detail_url(ticket.pk) + "#satisfaction")
