"""The ticket page's satisfaction card: the team reads the applicant's rating (or that they
were asked and have not answered); the applicant reads their own answer or, asked and not
yet answered, rates the help there (console.views.satisfaction, the same service as the API
and the survey link)."""

from django.http import HttpRequest
from django.utils import timezone

from satisfaction.forms import RatingForm
from satisfaction.models import Survey
from ticketing import access
from ticketing.access import Audience
from ticketing.models import Ticket

# A refused rating's bound form, for the page shown again (console.views.satisfaction).
FORM_ATTR = "_rating_form"


def panel(request: HttpRequest, ticket: Ticket, audience: Audience) -> dict:
    """What the ticket page shows of this, as the viewer may see it: nothing for anyone but
    the team and the applicant, nor before the applicant was asked."""
    insider = audience.sees_internals(ticket)
    applicant = access.may("rate", request.user, ticket, audience)
    if not (insider or applicant):
        return {}
    survey = Survey.objects.filter(ticket_id=ticket.pk).first()
    if survey is None:
        return {}
    open_now = survey.rating is None and survey.expires > timezone.now()
    form = None
    if applicant and open_now:
        form = getattr(request, FORM_ATTR, None) or RatingForm()
    return {
        "satisfaction": {
            "survey": survey,
            "open": open_now,
            "expired": survey.rating is None and not open_now,
            "form": form,
            "own": applicant,
        }
    }
