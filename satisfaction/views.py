"""The survey page, /survey/<token>/: the applicant rates the help from the link they were
sent, without signing in. The token (satisfaction.tokens) is the only key: it opens its own
survey and nothing else; a link that is not one of ours is a 404 and an expired one a 410,
neither saying anything about a ticket. The form is CSRF-protected like every other."""

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from accounts.models import Profile
from accounts.preferences import activate_language
from config.errors import InvalidArgument

from . import selectors, services
from .forms import RatingForm
from .models import Survey
from .tokens import BadToken, ExpiredToken

TEMPLATE = "satisfaction/survey.html"


def _refused(request: HttpRequest, *, status: int) -> HttpResponse:
    # No survey, no ticket: only what went wrong with the link.
    return render(
        request, TEMPLATE, {"state": "expired" if status == 410 else "bad"}, status=status
    )


def _speak_their_language(request: HttpRequest, survey: Survey) -> None:
    """The applicant's chosen language, unless this browser chose one (the language cookie)
    or someone is signed in (their own, set by accounts.preferences)."""
    if request.user.is_authenticated or settings.LANGUAGE_COOKIE_NAME in request.COOKIES:
        return
    chosen = (
        Profile.objects.filter(user_id=survey.applicant_id)
        .values_list("language", flat=True)
        .first()
    )
    if chosen:
        activate_language(request, chosen)


@never_cache
@require_http_methods(["GET", "POST"])
def survey_page(request: HttpRequest, token: str) -> HttpResponse:
    now = timezone.now()
    try:
        survey = selectors.survey_for_token(token, now=now)
    except ExpiredToken:
        return _refused(request, status=410)
    except BadToken:
        return _refused(request, status=404)
    _speak_their_language(request, survey)
    context = {"survey": survey, "ticket": survey.ticket}
    if survey.rating is not None:
        if request.method == "POST":
            return render(request, TEMPLATE, {**context, "state": "answered"}, status=409)
        return render(request, TEMPLATE, {**context, "state": "thanks"})
    if request.method == "GET":
        return render(request, TEMPLATE, {**context, "state": "ask", "form": RatingForm()})
    form = RatingForm(request.POST)
    if form.is_valid():
        try:
            services.survey_answer(
                survey=survey,
                rating=form.cleaned_data["rating"],
                comment=form.cleaned_data["comment"],
                now=now,
            )
        except InvalidArgument as exc:
            form.add_error(exc.field if exc.field in form.fields else None, exc.message)
        except services.SurveyAnswered:
            return render(request, TEMPLATE, {**context, "state": "answered"}, status=409)
        except services.SurveyExpired:
            return _refused(request, status=410)
        else:
            return redirect(request.path)
    return render(request, TEMPLATE, {**context, "state": "ask", "form": form}, status=400)
