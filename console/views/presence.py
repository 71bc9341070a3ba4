"""The header's presence switch: the agent sets Available / Busy / Offline from any console
page, with or without JavaScript, and an open console tab heartbeats while they are
available (static/js/presence.js). Both call routing.presence, as the presence API does."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from config.errors import Forbidden, InvalidArgument
from console.pages import render_console, safe_next
from console.presence import SWITCH_STATES
from routing import presence
from routing.models import PresenceState


def _wants_json(request: HttpRequest) -> bool:
    return request.headers.get("X-Requested-With") == "fetch"


def _answer(state: str) -> HttpResponse:
    return JsonResponse({"state": state, "label": str(PresenceState(state).label)})


def _refused(request: HttpRequest, field: str | None, message: str, status: int) -> HttpResponse:
    """400 naming the field (403 for someone without presence): JSON for presence.js, a
    page saying why for the plain form; nothing was changed."""
    if _wants_json(request):
        body: dict = {"code": "invalid_argument" if field else "forbidden"}
        if field:
            body["errors"] = {field: [message]}
        else:
            body["detail"] = message
        return JsonResponse(body, status=status)
    context = {"message": message, "back": safe_next(request, reverse("console:pool"))}
    return render_console(request, "console/presence_refused.html", context, status=status)


@login_required
@require_POST
def set_presence(request: HttpRequest) -> HttpResponse:
    """POST state=available|busy|offline: the switch's choice (a form without JS, fetch with
    it). 400 naming `state` for anything else, 403 for someone without presence."""
    state = request.POST.get("state", "")
    if state not in SWITCH_STATES:
        return _refused(
            request,
            "state",
            _("Must be one of %(states)s.") % {"states": ", ".join(SWITCH_STATES)},
            400,
        )
    try:
        row = presence.set_state(user=request.user, state=state)
    except Forbidden as exc:
        return _refused(request, None, str(exc), 403)
    except InvalidArgument as exc:  # the service's own list, should it ever be narrower
        return _refused(request, exc.field, exc.message, 400)
    if _wants_json(request):
        return _answer(row.state)
    messages.success(
        request, _("Your presence: %(state)s.") % {"state": PresenceState(row.state).label}
    )
    return redirect(safe_next(request, "console:pool"))


@login_required
@require_POST
def presence_heartbeat(request: HttpRequest) -> HttpResponse:
    """An open console tab's heartbeat: keeps an available agent available. It never brings
    an offline agent back (they chose Offline elsewhere, logged out, or were swept offline
    while the computer slept): the answer says so and the tab shows it."""
    try:
        row = presence.heartbeat(user=request.user, come_online=False)
    except Forbidden as exc:
        return JsonResponse({"code": "forbidden", "detail": str(exc)}, status=403)
    return _answer(row.state)
