"""The in-app inbox pages (the header's unread badge is rendered by pages.render_console)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_GET, require_POST

from config.pagination import EstimatedPaginator
from console.pages import render_console, safe_next
from notifications import inbox as inbox_services
from notifications import selectors

INBOX_PAGE_SIZE = 20


@login_required
@require_GET
def inbox(request: HttpRequest) -> HttpResponse:
    unread_only = request.GET.get("unread") == "1"
    messages_qs = selectors.inbox_for(request.user, unread_only=unread_only)
    page = EstimatedPaginator(messages_qs, INBOX_PAGE_SIZE).get_page(request.GET.get("page"))
    return render_console(
        request,
        "inbox/inbox.html",
        {"page": page, "unread_only": unread_only},
    )


@login_required
@require_POST
def mark_read(request: HttpRequest, notification_id: int) -> HttpResponse:
    if not inbox_services.inbox_mark_read(user=request.user, notification_id=notification_id):
        raise Http404(_("No such message in your inbox."))
    return redirect(safe_next(request, reverse("inbox:list")))


@login_required
@require_POST
def mark_all_read(request: HttpRequest) -> HttpResponse:
    marked = inbox_services.inbox_mark_all_read(user=request.user)
    if marked:
        text = ngettext(
            "Marked %(count)d message as read.", "Marked %(count)d messages as read.", marked
        ) % {"count": marked}
        messages.success(request, text)
    else:
        messages.info(request, _("Nothing to mark: you have no unread messages."))
    return redirect(safe_next(request, reverse("inbox:list")))
