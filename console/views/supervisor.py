"""The supervisor dashboard (/console/supervisor/): for leaders their groups, for staff all.
Live part (refreshed every few seconds without a reload, by static/js/supervisor.js fetching
`?part=live`): agents and their states, waiting tickets and the oldest wait per group, SLA
deadlines and escalation levels due in the next 30 minutes. Day part: today's assignments per
agent and their spread, required vs available agents per hour (Erlang C, insight/staffing.py),
and the latest strategy simulation side by side. Quality part (`?part=quality`, fetched once
the page is shown): SLA compliance beside satisfaction per group over 30 days, a report's
cost kept out of the page's own render."""

import statistics
from datetime import timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from console.charts import comparison_chart_svg, staffing_chart_svg
from console.pages import render_console
from handler_groups.models import GroupStatus, HandlerGroup
from handler_groups.selectors import groups_led_by, supervises
from insight import services as insight_services
from insight.models import Simulation, SimulationStatus
from insight.staffing import staffing
from routing.models import AssignmentEvent, PresenceState
from routing.selectors import presence_rows, waiting_by_group
from satisfaction.selectors import satisfaction_by_group
from sla.models import SlaEvent
from sla.reports import sla_report
from ticketing.models import OPEN_STATUSES, ProcessStatus

if TYPE_CHECKING:
    from django_stubs_ext import StrPromise

# Under 5 s with the render time: the page agrees with the agents' presence within 5 s.
LIVE_REFRESH_MS = 4000
DUE_HORIZON = timedelta(minutes=30)


def groups_in_scope(user) -> list[HandlerGroup]:
    """The enabled groups the dashboard shows `user` (the leader rule: groups_led_by)."""
    return list(groups_led_by(user).filter(status=GroupStatus.ENABLED).order_by("name"))


def _presence_label(state: str) -> "str | StrPromise":
    try:
        return PresenceState(state).label
    except ValueError:
        return state


def live_figures(groups: list[HandlerGroup], now) -> dict:
    """Agents now, queues now, and what falls due in the next 30 minutes."""
    group_ids = [g.pk for g in groups]
    member_ids = sorted({m for g in groups for m in g.member_ids})
    agents = {row["user_id"]: row for row in presence_rows(member_ids, now)}
    queues = waiting_by_group(group_ids)
    per_group = []
    for group in groups:
        queue = queues.get(group.pk)
        members = [
            {**agents[m], "state_label": _presence_label(agents[m]["state"])}
            for m in group.member_ids
            if m in agents
        ]
        per_group.append(
            {
                "group": group,
                "waiting": queue["n"] if queue else 0,
                "oldest_wait": (now - queue["since"]) if queue and queue["since"] else None,
                "members": members,
                "available": sum(1 for m in members if m["state"] == "available"),
            }
        )
    until = now + DUE_HORIZON
    running = Q(ticket__process_status=ProcessStatus.APPROVED) & Q(
        ticket__ticket_status__in=OPEN_STATUSES
    )
    due = (
        SlaEvent.objects.filter(
            running,
            ticket__handler_group_id__in=group_ids,
            state="pending",
            due_at__isnull=False,
            due_at__lte=until,
        )
        .filter(
            Q(clock="resolve", ticket__sla_paused=False)
            | Q(clock="response", ticket__responded_time__isnull=True)
        )
        .select_related("ticket", "ticket__handler_group", "ticket__handler")
        .order_by("due_at")[:25]
    )
    return {"groups": per_group, "due": list(due), "now": now, "horizon": until}


def today_counts(groups: list[HandlerGroup], now) -> dict:
    start = timezone.localtime(now).replace(hour=0, minute=0, second=0, microsecond=0)
    counts = dict(
        AssignmentEvent.objects.filter(
            group__in=groups, kind=AssignmentEvent.Kind.ASSIGNED, created__gte=start
        )
        .values("user_id")
        .annotate(n=Count("pk"))
        .values_list("user_id", "n")
    )
    member_ids = sorted({m for g in groups for m in g.member_ids} | set(counts))
    names = dict(get_user_model().objects.filter(pk__in=member_ids).values_list("pk", "username"))
    rows = sorted(
        ({"username": names.get(m, str(m)), "count": counts.get(m, 0)} for m in member_ids),
        key=lambda r: (-r["count"], r["username"]),
    )
    values = [r["count"] for r in rows]
    return {
        "rows": rows,
        "spread": round(statistics.pstdev(values), 2) if len(values) > 1 else 0.0,
        "total": sum(values),
    }


@login_required
@require_GET
def supervisor(request: HttpRequest) -> HttpResponse:
    groups = groups_in_scope(request.user)
    if not groups and not request.user.is_staff:
        raise PermissionDenied(_("The dashboard is for group leaders and staff."))
    now = timezone.now()
    if request.GET.get("part") == "quality":
        # (fetched by the page: a 30-day report, kept out of the dashboard's own render)
        return render(
            request, "console/_supervisor_quality.html", {"quality": quality_figures(groups, now)}
        )
    live = live_figures(groups, now)
    refresh_ms = getattr(settings, "SUPERVISOR_REFRESH_MS", LIVE_REFRESH_MS)
    context = {"live": live, "refresh_ms": refresh_ms}
    if request.GET.get("part") == "live":
        return render(request, "console/_supervisor_live.html", context)

    selected = next((g for g in groups if str(g.pk) == request.GET.get("group")), None)
    selected = selected or (groups[0] if groups else None)
    plan = staffing(group=selected, day=timezone.localdate(now), now=now) if selected else None
    context.update(
        groups=groups,
        selected=selected,
        today=today_counts(groups, now),
        plan=plan,
        plan_chart=staffing_chart_svg(plan["hours"]) if plan else None,
        simulation=latest_simulation(selected),
        started=started_simulation(request.user, request.GET.get("simulation")),
        simulate_days=SIMULATE_DAYS,
    )
    return render_console(request, "console/supervisor.html", context)


# The quality card's window: SLA compliance and satisfaction over the same last days.
QUALITY_DAYS = 30


def _compliance(breach_rate: float | None) -> int | None:
    return None if breach_rate is None else round(100 * (1 - breach_rate))


def quality_figures(groups: list[HandlerGroup], now) -> dict:
    """Per group, over the last QUALITY_DAYS days: SLA compliance (response and resolve, met
    over met and breached: sla.reports) beside satisfaction (responses, CSAT, mean:
    satisfaction.selectors); two statements for all the groups."""
    start = timezone.localtime(now).replace(hour=0, minute=0, second=0, microsecond=0)
    since = start - timedelta(days=QUALITY_DAYS - 1)
    ids = [g.pk for g in groups]
    sla = {
        row["key"]: row
        for row in sla_report(
            date_from=since, date_to=now, group_by="handler_group", handler_group_ids=ids
        )
    }
    csat = satisfaction_by_group(group_ids=ids, date_from=since, date_to=now)
    rows = []
    for group in groups:
        outcome = sla.get(group.pk) or {}
        figures = csat[group.pk]
        rows.append(
            {
                "group": group,
                "response_compliance": _compliance(outcome.get("response_breach_rate")),
                "resolve_compliance": _compliance(outcome.get("resolve_breach_rate")),
                "responses": figures["responses"],
                "asked": figures["asked"],
                "csat": None if figures["csat"] is None else round(100 * figures["csat"]),
                "mean": figures["mean"],
            }
        )
    return {"days": QUALITY_DAYS, "since": since, "rows": rows}


def latest_simulation(group: HandlerGroup | None) -> dict | None:
    """The group's latest finished simulation, its strategies side by side."""
    if group is None:
        return None
    simulation = Simulation.objects.filter(group=group, status="done").order_by("-created").first()
    if simulation is None or not simulation.result:
        return None
    # The stored labels are the English ones (gettext_noop where each strategy registers).
    rows = [
        {**row, "strategy_label": _(row["strategy_label"])} if row.get("strategy_label") else row
        for row in simulation.result.get("strategies") or []
    ]
    return {
        "simulation": simulation,
        "rows": rows,
        "wait_chart": comparison_chart_svg(
            rows,
            metric="wait_p95_seconds",
            label=_("Wait to assignment, p95 (seconds)"),
            element_id="simulation-wait",
        ),
        "spread_chart": comparison_chart_svg(
            rows,
            metric="count_stddev",
            label=_("Tickets per agent, standard deviation"),
            element_id="simulation-spread",
        ),
    }


# The page's "Run a simulation" button: the same service as POST /api/simulations/, over the
# group's record of the last SIMULATE_DAYS days before today, every strategy, seed 0.
SIMULATE_DAYS = 7
PENDING = (SimulationStatus.QUEUED, SimulationStatus.RUNNING)


@login_required
@require_POST
def supervisor_simulate(request: HttpRequest) -> HttpResponse:
    groups = groups_in_scope(request.user)
    group = next((g for g in groups if str(g.pk) == request.POST.get("group")), None)
    if group is None or not supervises(request.user, group):
        raise PermissionDenied(_("Only staff and the group's leader may simulate its routing."))
    today = timezone.localdate()
    params = {
        "strategies": [1, 2, 3, 4],
        "seed": 0,
        "group": group.pk,
        "from": (today - timedelta(days=SIMULATE_DAYS)).isoformat(),
        "to": (today - timedelta(days=1)).isoformat(),
    }
    simulation = insight_services.simulation_request(user=request.user, group=group, params=params)
    url = reverse("console:supervisor")
    return redirect(f"{url}?group={group.pk}&simulation={simulation.pk}#simulation")


def started_simulation(user, raw_id: str | None) -> Simulation | None:
    """The simulation this page was asked to follow (?simulation=), if the reader may see it:
    the one who asked for it, or staff and the group's leaders."""
    if not raw_id or not raw_id.isdigit():
        return None
    simulation = Simulation.objects.select_related("group").filter(pk=int(raw_id)).first()
    if simulation is None:
        return None
    if simulation.created_by_id != user.pk and not supervises(user, simulation.group):
        return None
    return simulation
