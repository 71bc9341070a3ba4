from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework import status, viewsets
from rest_framework.exceptions import NotFound
from rest_framework.response import Response

from config.errors import Forbidden, InvalidArgument
from config.openapi import errors
from handler_groups.models import HandlerGroup

from . import services
from .models import Simulation
from .serializers import SimulationInput, SimulationOutput, SimulationQueued


def _leads_a_group(user) -> bool:
    return HandlerGroup.objects.filter(leader=user).exists()


def visible_to(user, simulation: Simulation) -> bool:
    """Staff see every simulation; others those they asked for and those of groups they
    lead."""
    return (
        user.is_staff
        or simulation.created_by_id == user.pk
        or (simulation.group is not None and simulation.group.leader_id == user.pk)
    )


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
        if not user.is_staff and not _leads_a_group(user):
            raise Forbidden(_("Only staff and group leaders may run simulations."))
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
            if not user.is_staff and group.leader_id != user.pk:
                raise Forbidden(_("Only staff and the group's leader may simulate its routing."))
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
        if not user.is_staff and not _leads_a_group(user):
            raise Forbidden(_("Only staff and group leaders may read simulations."))
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
