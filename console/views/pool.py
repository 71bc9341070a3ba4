"""The agent's pool: the tabs pending / my_handling / all, filters, SLA badges, Accept."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.views.decorators.http import require_GET

from console.badges import with_badges
from console.forms import POOL_VIEWS, PoolFilterForm
from console.pages import LIST_RELATED, PAGE_SIZE, render_console
from ticketing import access, selectors
from ticketing.lifecycle import actions_allowed_now
from ticketing.models import Ticket

EMPTY_POOL = {
    "pending": "No tickets waiting — nice.",
    "my_handling": "You are not handling any tickets right now.",
    "all": "No tickets in your groups yet.",
}


@login_required
@require_GET
def pool(request: HttpRequest) -> HttpResponse:
    form = PoolFilterForm(request.GET, user=request.user)
    view = request.GET.get("view") or "pending"
    if view not in dict(POOL_VIEWS):
        view = "pending"
    status = 200
    if form.is_valid():
        arguments = form.pool_arguments()
        tickets = selectors.pool_for(request.user, **arguments).select_related(*LIST_RELATED)
        filtered = any(value is not None for key, value in arguments.items() if key != "view")
    else:
        messages.error(request, "Some filters are not valid; fix them to see tickets.")
        tickets, filtered, status = Ticket.objects.none(), True, 400
    page = Paginator(tickets, PAGE_SIZE).get_page(request.GET.get("page"))
    rows = with_badges(page, timezone.now())
    audience = access.audience_for(request.user)  # read once for every row
    for ticket in rows:
        ticket.can_accept = "accept" in actions_allowed_now(ticket) and access.can_accept(
            request.user, ticket, audience
        )
    return render_console(
        request,
        "console/pool.html",
        {
            "form": form,
            "view": view,
            "views": POOL_VIEWS,
            "page": page,
            "tickets": rows,
            "filtered": filtered,
            "empty_message": ("No tickets match these filters." if filtered else EMPTY_POOL[view]),
        },
        status=status,
    )
