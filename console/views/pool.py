"""The agent's page: the tabs My work / Pending / All with their counts, then the saved
views the agent may use (toolbox.saved_views) with theirs, search, sort, filters, SLA badges,
Accept; checkboxes on the rows and a bulk bar (toolbox.bulk, `bulk_action`). `/console/`
(console.views.home) renders it for agents; `?saved_view=<id>` lists one saved view."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from django.views.decorators.http import require_GET, require_POST

from config.errors import Forbidden, InvalidArgument
from config.pagination import EstimatedPaginator, count_text
from console.badges import with_badges
from console.forms import DEFAULT_SORT, POOL_VIEWS, PoolFilterForm
from console.pages import LIST_RELATED, PAGE_SIZE, render_console, safe_next
from handler_groups.models import HandlerGroup
from ticketing import access
from ticketing.lifecycle import actions_allowed_now
from ticketing.models import Priority, Ticket
from toolbox import bulk, saved_views
from toolbox.models import Macro, SavedView
from toolbox.scopes import may_edit, usable
from workflow import selectors

# The bulk bar's actions, as the select offers them (toolbox.bulk.BULK_ACTIONS).
BULK_ACTION_LABELS = (
    ("add_tags", gettext_lazy("Add tags")),
    ("remove_tags", gettext_lazy("Remove tags")),
    ("set_priority", gettext_lazy("Set priority")),
    ("transfer", gettext_lazy("Transfer to group")),
    ("close", gettext_lazy("Close")),
    ("apply_macro", gettext_lazy("Apply macro")),
)

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


def _saved_tabs(request: HttpRequest, audience: access.Audience) -> list[SavedView]:
    """The saved views the agent may use, each with `count_text` (one counting statement)."""
    if not audience.is_handler:
        return []
    views = list(saved_views.views_for(request.user).select_related("group"))
    counts = saved_views.view_counts(request.user, views, now=timezone.now())
    for view in views:
        counted = counts.get(view.pk)
        view.count_text = count_text(counted) if counted else "—"  # type: ignore[attr-defined]
    return views


def _bulk_bar(request: HttpRequest, audience: access.Audience) -> dict | None:
    """What the bulk bar offers the team: actions, groups, priorities, usable macros."""
    if not audience.is_handler:
        return None
    return {
        "actions": BULK_ACTION_LABELS,
        "groups": HandlerGroup.objects.order_by("name").only("pk", "name"),
        "priorities": Priority.choices,
        "macros": usable(Macro.objects.all(), request.user).order_by("name", "id"),
        "max_ids": bulk.BULK_MAX_IDS,
    }


@login_required
@require_GET
def pool(request: HttpRequest, default_view: str = "mine") -> HttpResponse:
    audience = access.audience_for(request.user)  # read once for every row
    tabs = _saved_tabs(request, audience)
    saved = None
    if request.GET.get("saved_view"):
        chosen = request.GET["saved_view"]
        saved = next((v for v in tabs if str(v.pk) == chosen), None)
        if saved is None:
            raise Http404
    form = PoolFilterForm(request.GET, user=request.user)
    view = request.GET.get("view") or default_view
    view = {"my_handling": "mine"}.get(view, view)
    if view not in dict(POOL_VIEWS):
        view = default_view
    status = 200
    sort = request.GET.get("sort") or DEFAULT_SORT[view]
    if saved is not None:
        view, sort, filtered = "saved", saved.sort or "-age", False
        try:
            tickets = saved_views.view_tickets(request.user, saved, now=timezone.now())
        except InvalidArgument as exc:
            messages.error(request, _("This view's filters no longer hold: %s") % exc.message)
            tickets = Ticket.objects.none()
        tickets = tickets.select_related(*LIST_RELATED)
    elif form.is_valid():
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
    for ticket in rows:
        ticket.can_accept = (  # type: ignore[attr-defined]  # the row's flag for the template
            "accept" in actions_allowed_now(ticket)
            and access.can_accept(request.user, ticket, audience)
        )
    counts = selectors.pool_counts_for(request.user)
    if saved is not None:
        empty = _("No tickets in this view right now.")
    else:
        empty = empty_message(view, filtered, searched=bool(request.GET.get("q")))
    return render_console(
        request,
        "console/pool.html",
        {
            "form": form,
            "view": view,
            "views": [(code, label, count_text(counts[code])) for code, label in POOL_VIEWS],
            "saved_tabs": tabs,
            "saved": saved,
            "saved_editable": saved is not None and may_edit(request.user, saved),
            "may_save_view": audience.is_handler,
            "bulk_bar": _bulk_bar(request, audience) if rows else None,
            "sort": sort,
            "filter_count": form.filter_count(),
            "page": page,
            "tickets": rows,
            "sections": work_sections(rows) if view == "mine" and status == 200 else [],
            "filtered": filtered,
            "empty_message": empty,
        },
        status=status,
    )


def _filters_of(arguments: dict) -> dict:
    """The pool page's filters (PoolFilterForm.pool_arguments) as a saved view's."""
    filters: dict = {}
    if arguments.get("ticket_status") is not None:
        filters["status"] = [arguments["ticket_status"]]
    if arguments.get("priority") is not None:
        filters["priority"] = arguments["priority"]
    if arguments.get("handler_group") is not None:
        filters["group"] = arguments["handler_group"]
    for name in ("category", "q"):
        if arguments.get(name):
            filters[name] = arguments[name]
    if arguments.get("view") == "mine":
        filters["handler"] = "me"
    return filters


@login_required
@require_POST
def view_save(request: HttpRequest) -> HttpResponse:
    """Save the page's search and filters (the posted query) as a personal view: its tab."""
    form = PoolFilterForm(request.POST, user=request.user)
    name = (request.POST.get("name") or "").strip()
    if not form.is_valid():
        messages.error(request, _("The view was not saved: fix the filters first."))
        return redirect(safe_next(request, reverse("console:pool")))
    arguments = form.pool_arguments("all")
    try:
        view = saved_views.view_create(
            user=request.user,
            name=name,
            filters=_filters_of(arguments),
            sort=form.cleaned_data.get("sort") or None,
        )
    except (InvalidArgument, Forbidden) as exc:
        why = exc.message if isinstance(exc, InvalidArgument) else str(exc)
        messages.error(request, _("The view was not saved: %(why)s") % {"why": why})
        return redirect(safe_next(request, reverse("console:pool")))
    messages.success(request, _("Saved the view “%(name)s”.") % {"name": view.name})
    return redirect(f"{reverse('console:pool')}?saved_view={view.pk}")


@login_required
@require_POST
def view_delete(request: HttpRequest, view_id: int) -> HttpResponse:
    """Delete a saved view (who may change it: its owner; a group's, its leader or staff)."""
    try:
        saved_views.view_delete(view_id=view_id, user=request.user)
    except SavedView.DoesNotExist:
        raise Http404 from None
    except Forbidden as exc:
        messages.error(request, str(exc))
        return redirect(f"{reverse('console:pool')}?saved_view={view_id}")
    messages.success(request, _("The view was deleted."))
    return redirect(reverse("console:pool"))


def _optional_int(value: str | None) -> int | None:
    text = (value or "").strip()
    return int(text) if text.isascii() and text.isdigit() else None


@login_required
@require_POST
def bulk_action(request: HttpRequest) -> HttpResponse:
    """The bulk bar: one action on the ticked tickets (toolbox.bulk.bulk_apply, each ticket
    on its own); the answer names each ticket that was refused and why. Back to `next`."""
    back = safe_next(request, reverse("console:pool"))
    ids = [i for i in (_optional_int(v) for v in request.POST.getlist("ids")) if i]
    raw_priority = _optional_int(request.POST.get("priority"))
    params = bulk.BulkParams(
        group_id=_optional_int(request.POST.get("group_id")),
        tags=[t for t in (request.POST.get("tags") or "").split(",") if t.strip()],
        priority=raw_priority,
        macro_id=_optional_int(request.POST.get("macro_id")),
    )
    try:
        results = bulk.bulk_apply(
            user=request.user, ids=ids, action=request.POST.get("action") or "", params=params
        )
    except InvalidArgument as exc:
        messages.error(request, _("Nothing was done: %(why)s") % {"why": exc.message})
        return redirect(back)
    # Bill codes of the tickets the caller may see only (an invisible one stays "#id").
    codes = dict(
        access.visible_tickets(request.user)
        .filter(pk__in=[r["id"] for r in results])
        .values_list("pk", "bill_code")
    )
    done = [r for r in results if r["ok"]]
    failed = [r for r in results if not r["ok"]]
    if done:
        messages.success(
            request,
            ngettext("Done on %(count)d ticket.", "Done on %(count)d tickets.", len(done))
            % {"count": len(done)},
        )
    for result in failed:
        messages.warning(
            request,
            _("%(ticket)s: not done (%(why)s)")
            % {
                "ticket": codes.get(result["id"], f"#{result['id']}"),
                "why": _why(result["detail"]),
            },
        )
    return redirect(back)


def _why(detail) -> str:
    """A refusal's words, from its detail (a message, {field: [messages]}, a macro step)."""
    if isinstance(detail, dict):
        if "step" in detail:
            return _("step %(step)d, %(action)s: %(why)s") % {
                "step": detail["step"] + 1,
                "action": detail.get("action", ""),
                "why": _why(detail.get("detail", "")),
            }
        return "; ".join(_why(value) for value in detail.values())
    if isinstance(detail, list):
        return "; ".join(_why(value) for value in detail)
    return str(detail)
