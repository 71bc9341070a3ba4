"""The leaders' SLA page: compliance per day (response and resolve, met, breached, closed
before due) as a chart and a table, with the filters of GET /api/sla/report/ (read by its
query serializer, so a bad filter is a 400 naming the field, as on the API)."""

from datetime import timedelta
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, QueryDict
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from config.errors import Forbidden
from console.charts import SERIES, daily_chart_svg
from console.pages import render_console
from handler_groups.models import HandlerGroup
from satisfaction.selectors import satisfaction_figures
from sla.reports import report_scope, sla_daily
from sla.serializers import ReportQuery
from ticketing.models import Priority

DEFAULT_DAYS = 30
MAX_DAYS = 366
FILTERS = ("from", "to", "handler_group", "priority", "category")


def _query(request: HttpRequest) -> dict[str, str]:
    """The filters as the report reads them: blanks (an empty form field) left out, and by
    default the last 30 days in the viewer's zone, today included."""
    query = {name: request.GET[name] for name in FILTERS if request.GET.get(name, "").strip()}
    if "from" not in query and "to" not in query:
        today = timezone.localdate()
        query["from"] = (today - timedelta(days=DEFAULT_DAYS - 1)).isoformat()
        query["to"] = today.isoformat()
    return query


def _totals(days: list[dict]) -> dict:
    totals = {s.key: sum(day[s.key] for day in days) for s in SERIES}
    for clock in ("response", "resolve"):
        met, breached = totals[f"{clock}_met"], totals[f"{clock}_breached"]
        totals[f"{clock}_compliance"] = (
            round(100 * met / (met + breached)) if met + breached else None
        )
    return totals


def _satisfaction(scope: list[int] | None, date_from, date_to) -> dict:
    figures = satisfaction_figures(
        group_ids=scope, date_from=date_from, date_to=date_to, bucket="day"
    )
    return {
        "asked": figures["asked"],
        "responses": figures["responses"],
        "csat": None if figures["csat"] is None else round(100 * figures["csat"]),
        "mean": figures["mean"],
    }


@login_required
@require_GET
def sla_compliance(request: HttpRequest) -> HttpResponse:
    try:
        allowed = report_scope(request.user)
    except Forbidden as exc:
        raise PermissionDenied(str(exc)) from None
    query = _query(request)
    groups = HandlerGroup.objects.order_by("name")
    if allowed is not None:
        groups = groups.filter(pk__in=allowed)
    context: dict[str, Any] = {
        "query": query,
        "groups": list(groups),
        "priorities": Priority.choices,
        "series": SERIES,
        "zone": timezone.get_current_timezone_name(),
    }
    form = ReportQuery(data=query)
    if not form.is_valid():
        context["errors"] = sorted(form.errors.items())
        return render_console(request, "console/sla.html", context, status=400)
    data = form.validated_data
    if data["to"] - data["from"] > timedelta(days=MAX_DAYS):
        message = _("At most %(days)s days per chart: narrow the range.") % {"days": MAX_DAYS}
        context["errors"] = [("from", [message])]
        return render_console(request, "console/sla.html", context, status=400)
    try:
        scope = report_scope(request.user, handler_group=data.get("handler_group"))
    except Forbidden as exc:
        raise PermissionDenied(str(exc)) from None
    days = sla_daily(
        date_from=data["from"],
        date_to=data["to"],
        handler_group_ids=scope,
        priority=data.get("priority"),
        category=data.get("category"),
    )
    csv_query = QueryDict(mutable=True)
    csv_query.update({**query, "format": "csv"})
    context.update(
        {
            "days": days,
            "active_days": [day for day in days if any(day[s.key] for s in SERIES)],
            "totals": _totals(days),
            "chart": daily_chart_svg(days),
            "first_day": days[0]["day"] if days else None,
            "last_day": days[-1]["day"] if days else None,
            "csv_url": f"{reverse('sla-report')}?{csv_query.urlencode()}",
            # Beside compliance: the satisfaction of the same days and groups (surveys asked
            # then; priority and category do not narrow it).
            "satisfaction": _satisfaction(scope, data["from"], data["to"]),
        }
    )
    return render_console(request, "console/sla.html", context)
