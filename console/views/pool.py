"""The agent's page: the tabs My work / Pending / All with their counts, search, sort,
filters, SLA badges, Accept. `/console/` (console.views.home) renders it for agents."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET

from config.pagination import EstimatedPaginator, count_text
from console.badges import with_badges
from console.forms import DEFAULT_SORT, POOL_VIEWS, PoolFilterForm
from console.pages import LIST_RELATED, PAGE_SIZE, render_console
from ticketing import access
from ticketing.lifecycle import actions_allowed_now
from ticketing.models import Ticket
from workflow import selectors

EMPTY_POOL = {
    "mine": gettext_lazy("Nothing assigned to you right now."),
    "pending": gettext_lazy("No tickets waiting in your groups' pools."),
    "all": gettext_lazy("No tickets in your groups yet."),
}
# My work's sections, in order (workflow.selectors.with_work_section).
WORK_SECTIONS = (
    gettext_lazy("Waiting for you to accept"),
    gettext_lazy("In progress"),
    gettext_lazy("Paused — waiting on the applicant"),
    gettext_lazy("Other"),
)


def work_sections(rows: list[Ticket]) -> list[dict]:
    """My work's rows (already ordered by section) grouped under their headings."""
    sections: list[dict] = []
    for ticket in rows:
        index = getattr(ticket, "work_section", 3)
        if not sections or sections[-1]["index"] != index:
            sections.append({"index": index, "title": WORK_SECTIONS[index], "tickets": []})
        sections[-1]["tickets"].append(ticket)
    return sections


def empty_message(view: str, filtered: bool, *, searched: bool) -> str:
    if searched:
        return _("No tickets match your search.")
    if filtered:
        return _("No tickets match these filters.")
    return str(EMPTY_POOL[view])


@login_required
@require_GET
def pool(request: HttpRequest, default_view: str = "mine") -> HttpResponse:
    form = PoolFilterForm(request.GET, user=request.user)
    view = request.GET.get("view") or default_view
    view = {"my_handling": "mine"}.get(view, view)
    if view not in dict(POOL_VIEWS):
        view = default_view
    status = 200
    sort = request.GET.get("sort") or DEFAULT_SORT[view]
    if form.is_valid():
        arguments = form.pool_arguments(default_view)
        tickets = selectors.pool_for(request.user, **arguments).select_related(*LIST_RELATED)
        filtered = any(
            value is not None for key, value in arguments.items() if key not in ("view", "sort")
        )
    else:
        invalid = ", ".join(sorted(form.errors))
        messages.error(
            request,
            _("Some filters are not valid (%(fields)s); fix them to see tickets.")
            % {"fields": invalid},
        )
        tickets, filtered, status = Ticket.objects.none(), True, 400
    page = EstimatedPaginator(tickets, PAGE_SIZE).get_page(request.GET.get("page"))
    rows = with_badges(page, timezone.now())
    audience = access.audience_for(request.user)  # read once for every row
    for ticket in rows:
        ticket.can_accept = (  # type: ignore[attr-defined]  # the row's flag for the template
            "accept" in actions_allowed_now(ticket)
            and access.can_accept(request.user, ticket, audience)
        )
    counts = selectors.pool_counts_for(request.user)
    return render_console(
        request,
        "console/pool.html",
        {
            "form": form,
            "view": view,
            "views": [(code, label, count_text(counts[code])) for code, label in POOL_VIEWS],
            "sort": sort,
            "filter_count": form.filter_count(),
            "page": page,
            "tickets": rows,
            "sections": work_sections(rows) if view == "mine" and status == 200 else [],
            "filtered": filtered,
            "empty_message": empty_message(view, filtered, searched=bool(request.GET.get("q"))),
        },
        status=status,
    )
