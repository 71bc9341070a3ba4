"""The Watchers card's actions (console/watchers.py shows it): add a person by username, watch
and stop watching, remove a watcher. Each POST form calls one service
(collaboration.services.watchers, which applies the rules) and answers with a redirect and a
message, or the ticket page again with the error's status (400 bad input, 403 not allowed,
409 a watcher already gone) and nothing changed."""

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from collaboration.models import Watcher
from collaboration.services import watchers as services
from config.errors import ConflictError, Forbidden, InvalidArgument
from console.pages import detail_url, visible_ticket
from console.views.ticket import action_failed
from console.watchers import WatcherAddForm

WATCHERS_ANCHOR = "#watchers"


class NotWatching(ConflictError):
    """The person shown on the page no longer watches the ticket (someone removed them
    meanwhile): a 409, nothing changed."""


def _failed(request: HttpRequest, ticket_id: int, exc: Exception, form=None) -> HttpResponse:
    if form is not None:
        # render_ticket's panels take no forms: the card finds the refused one here.
        request._watcher_forms = {"watcher": form}  # type: ignore[attr-defined]
    return action_failed(request, ticket_id, exc)


def _done(ticket_id: int) -> HttpResponse:
    return redirect(detail_url(ticket_id) + WATCHERS_ANCHOR)


@login_required
@require_POST
def watcher_add(request: HttpRequest, ticket_id: int) -> HttpResponse:
    """The team adds a person, the applicant copies a colleague in, by username."""
    ticket = visible_ticket(request, ticket_id)
    form = WatcherAddForm(request.POST)
    if not form.is_valid():
        error = InvalidArgument("username", _("Nobody was added: give a username."))
        return _failed(request, ticket.pk, error, form)
    username = form.cleaned_data["username"].strip().lstrip("@")
    person = get_user_model().objects.filter(username=username, is_active=True).first()
    try:
        if person is None:
            raise InvalidArgument("username", _("No active person has this username."))
        watcher, created = services.watcher_add(
            ticket_id=ticket.pk, user_id=person.pk, actor=request.user
        )
    except InvalidArgument as exc:
        form.add_error("username", exc.message)
        return _failed(request, ticket.pk, exc, form)
    except (ConflictError, Forbidden) as exc:
        return _failed(request, ticket.pk, exc, form)
    name = person.get_username()
    if created:
        messages.success(
            request,
            _("%(name)s now watches %(code)s.")
            % {
                "name": name,
                "code": ticket.bill_code,
            },
        )
    else:
        messages.info(
            request,
            _("%(name)s already watches %(code)s.")
            % {
                "name": name,
                "code": ticket.bill_code,
            },
        )
    return _done(ticket.pk)


@login_required
@require_POST
def watcher_watch(request: HttpRequest, ticket_id: int) -> HttpResponse:
    """The viewer follows the ticket."""
    ticket = visible_ticket(request, ticket_id)
    try:
        user_id = request.user.pk
        assert user_id is not None  # (login_required)
        services.watcher_add(ticket_id=ticket.pk, user_id=user_id, actor=request.user)
    except (ConflictError, Forbidden, InvalidArgument) as exc:
        return _failed(request, ticket.pk, exc)
    messages.success(
        request,
        _("You are watching %(code)s: you will be told of its replies and status changes.")
        % {"code": ticket.bill_code},
    )
    return _done(ticket.pk)


@login_required
@require_POST
def watcher_remove(request: HttpRequest, ticket_id: int, user_id: int) -> HttpResponse:
    """Stop watching (the viewer's own id) or remove someone else, where allowed."""
    ticket = visible_ticket(request, ticket_id)
    own = user_id == request.user.pk
    try:
        try:
            services.watcher_remove(ticket_id=ticket.pk, user_id=user_id, actor=request.user)
        except Watcher.DoesNotExist:
            raise NotWatching(_("This person no longer watches this ticket.")) from None
    except (ConflictError, Forbidden, InvalidArgument) as exc:
        return _failed(request, ticket.pk, exc)
    if own:
        messages.success(request, _("You no longer watch %(code)s.") % {"code": ticket.bill_code})
    else:
        messages.success(request, _("The watcher was removed."))
    return _done(ticket.pk)
