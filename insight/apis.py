"""The supervisors' API: strategy simulations, assignment and queue figures, Erlang C and
staffing. Every read about a group is for staff and the group's leader (the leader rule,
handler_groups.access); Erlang C, a calculator, also for anyone who works in a group."""

from django.utils import timezone
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework import status, viewsets
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from config.errors import Forbidden, InvalidArgument
from config.openapi import errors
from handler_groups.access import require_leader, require_supervisor, supervised_group
from handler_groups.models import HandlerGroup
from handler_groups.selectors import group_ids_for_user, groups_led_by, supervises
from satisfaction.selectors import satisfaction_figures

from . import erlang, services
from .assignment_figures import assignment_figures
from .models import Simulation
from .queue_figures import queue_figures
from .serializers import (
    ErlangCOutput,
    ErlangCQuery,
    MetricsOutput,
    MetricsQuery,
    QueueMetricsOutput,
    QueueMetricsQuery,
    SatisfactionMetricsOutput,
    SatisfactionMetricsQuery,
    SimulationInput,
    SimulationOutput,
    SimulationQueued,
    StaffingOutput,
    StaffingQuery,
)
from .staffing import staffing


def visible_to(user, simulation: Simulation) -> bool:
    """Staff see every simulation; others those they asked for and those of groups they
    lead."""
    # A synthetic day belongs to no group: only staff see another's.
    return simulation.created_by_id == user.pk or supervises(user, simulation.group)


class SimulationViewSet(viewsets.GenericViewSet):
    """Strategy simulations (insight/simulator.py): a group's recorded arrivals, handle times
    and presence windows — or a synthetic day — replayed through each strategy's real code in
    a worker. Staff for any group, leaders for the groups they lead (and synthetic days);
    nobody else."""

    lookup_value_converter = "int"  # a non-numeric id is no route (404), never a 500
    queryset = Simulation.objects.none()  # for the schema
    serializer_class = SimulationOutput

    @extend_schema(
        summary="Start a strategy simulation",
        request=SimulationInput,
        responses={202: SimulationQueued, **errors(400, 401, 403)},
    )
    def create(self, request):
        user = request.user
        require_supervisor(user, _("Only staff and group leaders may run simulations."))
        data = SimulationInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        params = {"strategies": values.get("strategies") or [1, 2, 3, 4], "seed": values["seed"]}
        group = None
        if "synthetic" in values:
            params["synthetic"] = values["synthetic"]
        else:
            group = HandlerGroup.objects.filter(pk=values["group"]).first()
            if group is None:
                raise InvalidArgument("group", _("No handler group with this id."))
            require_leader(
                user, group, _("Only staff and the group's leader may simulate its routing.")
            )
            params.update(
                group=group.pk,
                **{"from": values["from"].isoformat(), "to": values["to"].isoformat()},
            )
            if "response_budget_seconds" in values:
                params["response_budget_seconds"] = values["response_budget_seconds"]
        simulation = services.simulation_request(user=user, group=group, params=params)
        return Response(
            {"id": simulation.pk, "status": simulation.status}, status=status.HTTP_202_ACCEPTED
        )

    @extend_schema(
        summary="Get a strategy simulation and its result",
        responses={200: SimulationOutput, **errors(401, 403, 404)},
    )
    def retrieve(self, request, pk=None):
        user = request.user
        require_supervisor(user, _("Only staff and group leaders may read simulations."))
        simulation = Simulation.objects.select_related("group").filter(pk=int(pk)).first()
        if simulation is None or not visible_to(user, simulation):
            raise NotFound()
        return Response(
            {
                "id": simulation.pk,
                "status": simulation.status,
                "params": simulation.params,
                "result": simulation.result,
                "error": simulation.error,
            }
        )


def _group_and_day(request, query_class, refusal: str):
    """The supervised group and local day (default today) a figures read is about: 400 for a
    bad query, 404 for no such group, 403 (`refusal`) unless the caller supervises it."""
    query = query_class(data=request.query_params)
    query.is_valid(raise_exception=True)
    group = supervised_group(request.user, query.validated_data["group"], refusal)
    return group, query.validated_data.get("date") or timezone.localdate()


class AssignmentMetricsView(APIView):
    """Per-agent assignment counts, misses, the spread (standard deviation) of per-agent
    counts and pick latency percentiles for one group and day. Staff and the group's leader."""

    @extend_schema(
        summary="Get a group's assignment metrics for one day",
        parameters=[MetricsQuery],
        responses={200: MetricsOutput, **errors(400, 401, 403, 404)},
    )
    def get(self, request):
        group, day = _group_and_day(
            request, MetricsQuery, _("Only staff and the group's leader may read its metrics.")
        )
        return Response(assignment_figures(group=group, day=day))


class ErlangCView(APIView):
    """Erlang C staffing calculator: the smallest number of agents that answers the given
    share of arrivals within the target time without exceeding the occupancy cap, that
    number grossed up for shrinkage, and the service level, occupancy, probability of waiting
    and average speed of answer at it. Staff and anyone who leads or works in a group."""

    @extend_schema(
        summary="Calculate required agents with Erlang C",
        parameters=[ErlangCQuery],
        responses={200: ErlangCOutput, **errors(400, 401, 403)},
    )
    def get(self, request):
        user = request.user
        if not user.is_staff and not group_ids_for_user(user):
            raise Forbidden(_("Only staff and members or leaders of a handler group may use this."))
        query = ErlangCQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        data = query.validated_data
        result = erlang.staff(
            arrivals=data["arrivals"],
            aht_seconds=data["aht_seconds"],
            interval_minutes=data["interval_minutes"],
            target_seconds=data["target_seconds"],
            service_level_target=data["service_level"],
            shrinkage=data["shrinkage"],
            max_occupancy=data["max_occupancy"],
        )
        return Response(
            ErlangCOutput(
                {
                    "raw_agents": result.raw_agents,
                    "agents": result.agents,
                    "service_level": round(result.service_level, 6),
                    "occupancy": round(result.occupancy, 6),
                    "probability_of_waiting": round(result.probability_of_waiting, 6),
                    "asa_seconds": round(result.asa_seconds, 3),
                }
            ).data
        )


class StaffingView(APIView):
    """Required against available agents per local hour of one day for a group: forecast
    arrivals (the same weekday over the previous 4 weeks), measured handle time, Erlang C's
    required agents at the group's targets, average agents available (presence history) and
    the gap. Staff and the group's leader."""

    @extend_schema(
        summary="Get a group's required and available agents per hour",
        parameters=[StaffingQuery],
        responses={200: StaffingOutput, **errors(400, 401, 403, 404)},
    )
    def get(self, request):
        group, day = _group_and_day(
            request, StaffingQuery, _("Only staff and the group's leader may read its staffing.")
        )
        return Response(StaffingOutput(staffing(group=group, day=day)).data)


class QueueMetricsView(APIView):
    """A group's queue per local hour or day: arrivals, assignments, time to assignment and
    to acceptance (p50/p95), abandoned tickets, the service level against the group's
    target_answer_seconds, and per agent their assignments (with the spread) and occupancy.
    Definitions in insight/queue_figures.py. Staff and the group's leader."""

    @extend_schema(
        summary="Get a group's queue metrics per hour or day",
        parameters=[QueueMetricsQuery],
        responses={200: QueueMetricsOutput, **errors(400, 401, 403, 404)},
    )
    def get(self, request):
        query = QueueMetricsQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        data = query.validated_data
        group = supervised_group(
            request.user,
            data["group"],
            _("Only staff and the group's leader may read its metrics."),
        )
        return Response(
            queue_figures(
                group=group,
                date_from=data["from"],
                date_to=data["to"],
                bucket=data["bucket"],
                group_by=data.get("group_by"),
            )
        )


class SatisfactionMetricsView(APIView):
    """Satisfaction over the surveys asked in a window (satisfaction.selectors): asked,
    responses, response rate, CSAT (share of 4–5), mean, per local day or week of the
    caller's zone and per agent. Staff for any group (or all), leaders for the groups they
    lead (all of them without `group`); a 403 for anyone else."""

    @extend_schema(
        summary="Get satisfaction (CSAT) figures per day or week and per agent",
        parameters=[SatisfactionMetricsQuery],
        responses={200: SatisfactionMetricsOutput, **errors(400, 401, 403, 404)},
    )
    def get(self, request):
        user = request.user
        refusal = _("Only staff and the group's leader may read its satisfaction figures.")
        require_supervisor(user, refusal)
        query = SatisfactionMetricsQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        data = query.validated_data
        group_id = data.get("group")
        if group_id is not None:
            group_ids: list[int] | None = [supervised_group(user, group_id, refusal).pk]
        elif user.is_staff:
            group_ids = None
        else:
            group_ids = list(groups_led_by(user).order_by("pk").values_list("pk", flat=True))
        figures = satisfaction_figures(
            group_ids=group_ids,
            date_from=data["from"],
            date_to=data["to"],
            bucket=data["bucket"],
        )
        return Response(
            SatisfactionMetricsOutput({"group": group_id, "groups": group_ids, **figures}).data
        )
