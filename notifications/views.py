"""The in-app inbox pages, and the header's unread badge that every console page carries."""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from . import selectors, services

INBOX_PAGE_SIZE = 20
DEFAULT_BADGE_POLL_MS = 15_000


def render_console(
    request: HttpRequest, template: str, context: dict | None = None, *, status: int = 200
) -> HttpResponse:
    """Render a console page: the header shows the user's unread count, which the page then
    refreshes by polling GET /api/notifications/unread-count/ every CONSOLE_BADGE_POLL_MS."""
    context = dict(context or {})
    if request.user.is_authenticated:
        context["unread_count"] = selectors.unread_count(request.user)
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


@login_required
@require_GET
def inbox(request: HttpRequest) -> HttpResponse:
    unread_only = request.GET.get("unread") == "1"
    messages_qs = selectors.inbox_for(request.user, unread_only=unread_only)
    page = Paginator(messages_qs, INBOX_PAGE_SIZE).get_page(request.GET.get("page"))
    return render_console(
        request,
        "inbox/inbox.html",
        {"page": page, "unread_only": unread_only},
    )


@login_required
@require_POST
def mark_read(request: HttpRequest, notification_id: int) -> HttpResponse:
    if not services.inbox_mark_read(user=request.user, notification_id=notification_id):
        raise Http404("No such message in your inbox.")
    return redirect(safe_next(request, reverse("inbox:list")))


@login_required
@require_POST
def mark_all_read(request: HttpRequest) -> HttpResponse:
    marked = services.inbox_mark_all_read(user=request.user)
    if marked:
        messages.success(request, f"Marked {marked} message{'s' if marked != 1 else ''} as read.")
    else:
        messages.info(request, "Nothing to mark: you have no unread messages.")
    return redirect(safe_next(request, reverse("inbox:list")))
