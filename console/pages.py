"""What every console page shares: rendering with the header's unread badge, safe `next`
targets, the visible-ticket lookup (404 otherwise) and the turn of a domain error into a
message on the ticket page with its status (400 bad input, 403 not allowed, 409 illegal
state)."""

from collections.abc import Callable

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _

from accounts.preferences import chosen_time_zone
from config.errors import ConflictError, Forbidden, InvalidArgument
from notifications import selectors as inbox_selectors
from sla.reports import may_read_reports
from ticketing import access
from ticketing.models import Ticket
from workflow import selectors

DEFAULT_BADGE_POLL_MS = 15_000
PAGE_SIZE = 20
LIST_RELATED = ("handler_group", "handler", "creator", "sla_rule")


def render_console(
    request: HttpRequest, template: str, context: dict | None = None, *, status: int = 200
) -> HttpResponse:
    """Render a console page: the header shows the user's unread count, which the page then
    refreshes by polling GET /api/notifications/unread-count/ every CONSOLE_BADGE_POLL_MS,
    and the SLA page's link to those who may read it (staff and group leaders)."""
    context = dict(context or {})
    if request.user.is_authenticated:
        context["unread_count"] = inbox_selectors.unread_count(request.user)
        # No zone chosen yet: the page asks the browser for its own once (timezone.js).
        context["detect_time_zone"] = chosen_time_zone(request) == ""
        context["sees_sla_report"] = may_read_reports(request.user)
    context["badge_poll_ms"] = getattr(settings, "CONSOLE_BADGE_POLL_MS", DEFAULT_BADGE_POLL_MS)
    return render(request, template, context, status=status)


def safe_next(request: HttpRequest, fallback: str) -> str:
    """The form's `next` target when it is a URL of this site, else `fallback`."""
    target = request.POST.get("next") or request.GET.get("next") or ""
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return fallback


def visible_ticket(request: HttpRequest, ticket_id: int) -> Ticket:
    """The ticket if the user may see it; 404 otherwise (never a hint that it exists)."""
    try:
        return selectors.ticket_for(request.user, ticket_id)
    except Ticket.DoesNotExist:
        raise Http404(_("No such ticket, or you may not see it.")) from None


def detail_url(ticket_id: int) -> str:
    return reverse("console:ticket", args=[ticket_id])


ERROR_STATUS = ((InvalidArgument, 400), (Forbidden, 403), (ConflictError, 409))


def error_status(exc: Exception) -> int:
    return next(code for kind, code in ERROR_STATUS if isinstance(exc, kind))


def error_message(exc: Exception) -> str:
    if isinstance(exc, InvalidArgument):
        return exc.message
    return str(exc) or _("This action is not allowed.")


def perform(
    request: HttpRequest,
    ticket: Ticket,
    *,
    action: str,
    call: Callable[[], object],
    success: str,
    redirect_to: str | None = None,
    render_failure: Callable[..., HttpResponse],
) -> HttpResponse:
    """Run one service for a POSTed action, after `access.require(action, …)`. Success: a
    message and a redirect (POST → redirect → GET). A domain error: `render_failure` shows
    the ticket page again with the message and the error's status; nothing was changed."""
    try:
        access.require(action, request.user, ticket)
        call()
    except (ConflictError, Forbidden, InvalidArgument) as exc:
        return render_failure(request, ticket.pk, exc)
    messages.success(request, success)
    return redirect(redirect_to or detail_url(ticket.pk))
