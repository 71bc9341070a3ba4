"""The search results page: `/console/search/?q=…` (the header's box on every page sends it
here), the found tickets with their snippets, the pool's filters and pages. The same selector
and the same validation as `GET /api/search/` (search/), so a page shows what the API would:
an applicant finds their own tickets only, and nobody reads a snippet of a note they may not
see."""

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.utils.safestring import mark_safe
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_GET

from config.errors import InvalidArgument
from config.pagination import RowCount, count_text
from console.pages import LIST_RELATED, PAGE_SIZE, render_console
from handler_groups.models import HandlerGroup
from search import selectors
from search.highlights import highlights_for
from search.serializers import SearchQuery
from ticketing import access
from ticketing.fields import field_filters_from
from ticketing.models import Priority, Ticket, TicketStatus

FIELD_LABELS = {
    "title": _("title"),
    "content": _("content"),
    "reply": _("reply"),
    "note": _("internal note"),
    "attachment": _("file"),
}
FILTERS = ("ticket_status", "priority", "handler_group", "category", "from", "to")


def _groups_for(user) -> list[HandlerGroup]:
    """The groups offered as a filter: every group for staff and approvers (they see every
    ticket), the caller's own groups for anyone else."""
    groups = HandlerGroup.objects.order_by("name")
    if user.is_staff or access.is_approver(user):
        return list(groups)
    return list(groups.filter(pk__in=access.audience_for(user).group_ids))


@login_required
@require_GET
def search(request: HttpRequest) -> HttpResponse:
    raw = {key: value for key, value in request.GET.items() if key in ("q", *FILTERS) and value}
    context: dict = {
        "q": request.GET.get("q", ""),
        "chosen": raw,
        "filtered": any(key in raw for key in FILTERS),
        "statuses": TicketStatus.choices,
        "priorities": Priority.choices,
        "groups": _groups_for(request.user),
        "results": [],
        "page": None,
        "errors": {},
    }
    if "q" not in raw:
        return render_console(request, "console/search.html", context)
    query = SearchQuery(data=raw)
    if not query.is_valid():
        context["errors"] = {
            field: [str(e) for e in errors] for field, errors in query.errors.items()
        }
        return render_console(request, "console/search.html", context, status=400)
    data = query.validated_data
    try:
        found = selectors.search_validated(
            request.user, data, fields=field_filters_from(request.GET)
        )
    except InvalidArgument as exc:
        context["errors"] = {exc.field: [exc.message]}
        return render_console(request, "console/search.html", context, status=400)
    page = Paginator(found.ticket_ids, PAGE_SIZE).get_page(request.GET.get("page"))
    tickets = selectors.tickets_in_order(
        list(page.object_list), Ticket.objects.select_related(*LIST_RELATED)
    )
    audience = access.audience_for(request.user)
    highlights = highlights_for(audience, tickets, found.query, found.tsquery)
    counted = RowCount(len(found.ticket_ids), is_estimate=found.capped, at_least=found.capped)
    context.update(
        page=page,
        count=count_text(counted),
        results=[
            {
                "ticket": ticket,
                "snippets": [
                    {
                        "label": FIELD_LABELS[h["field"]],
                        "field": h["field"],
                        # Escaped by search.highlights.render, with only its own <mark> tags.
                        "html": mark_safe(h["snippet"]),  # noqa: S308
                    }
                    for h in highlights.get(ticket.pk, [])
                ],
            }
            for ticket in tickets
        ],
    )
    return render_console(request, "console/search.html", context)
