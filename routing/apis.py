from django.utils import timezone
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from config.errors import Forbidden
from config.openapi import errors
from handler_groups.models import HandlerGroup
from handler_groups.selectors import group_ids_for_user, groups_of_member

from . import erlang, presence
from .metrics import assignment_metrics
from .models import AgentPresence
from .selectors import presence_rows
from .serializers import (
    ErlangCOutput,
    ErlangCQuery,
    MetricsOutput,
    MetricsQuery,
    PresenceOutput,
    PresenceStateInput,
    StaffingOutput,
    StaffingQuery,
)
from .staffing import staffing


class PresenceViewSet(viewsets.ViewSet):
    """Agent presence. Agents heartbeat and set their own state; a leader sees the members
    of the groups they lead, staff see everyone, others see themselves."""

    @extend_schema(
        summary="List the presence of the agents I may see",
        responses={200: PresenceOutput(many=True), **errors(401)},
    )
    def list(self, request):
        user = request.user
        if user.is_staff:
            ids = set(AgentPresence.objects.values_list("pk", flat=True))
            for group in HandlerGroup.objects.all():
                ids.update(group.member_ids)
        else:
            # Only members of a handler group have presence; leaders see their members'.
            ids = {user.pk} if groups_of_member(user.pk).exists() else set()
            for group in HandlerGroup.objects.filter(leader=user):
                ids.update(group.member_ids)
        return Response(PresenceOutput(presence_rows(sorted(ids), timezone.now()), many=True).data)

    @extend_schema(
        summary="Send my presence heartbeat",
        request=None,
        responses={200: PresenceOutput, **errors(401, 403)},
    )
    @action(detail=False, methods=["post"])
    def heartbeat(self, request):
        presence.heartbeat(user=request.user)
        return Response(self._mine(request))

    @extend_schema(
        summary="Set my presence state",
        request=PresenceStateInput,
        responses={200: PresenceOutput, **errors(400, 401, 403)},
    )
    @action(detail=False, methods=["post"])
    def state(self, request):
        data = PresenceStateInput(data=request.data)
        data.is_valid(raise_exception=True)
        presence.set_state(user=request.user, state=data.validated_data["state"])
        return Response(self._mine(request))

    def _mine(self, request) -> dict:
        return PresenceOutput(presence_rows([request.user.pk], timezone.now())[0]).data


def led_group(user, group_id: int, refusal: str) -> HandlerGroup:
    """The group a supervisor's read is about: 404 when there is none, 403 (`refusal`) unless
    the caller is staff or leads it."""
    group = HandlerGroup.objects.filter(pk=group_id).first()
    if group is None:
        raise NotFound(_("No handler group with this id."))
    if not user.is_staff and group.leader_id != user.pk:
        raise Forbidden(refusal)
    return group


class AssignmentMetricsView(APIView):
    """Per-agent assignment counts, misses, the spread (standard deviation) of per-agent
    counts and pick latency percentiles for one group and day. Staff and the group's leader."""

    @extend_schema(
        summary="Get a group's assignment metrics for one day",
        parameters=[MetricsQuery],
        responses={200: MetricsOutput, **errors(400, 401, 403, 404)},
    )
    def get(self, request):
        query = MetricsQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        group = led_group(
            request.user,
            query.validated_data["group"],
            _("Only staff and the group's leader may read its metrics."),
        )
        day = query.validated_data.get("date") or timezone.localdate()
        return Response(assignment_metrics(group=group, day=day))


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
        query = StaffingQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        group = led_group(
            request.user,
            query.validated_data["group"],
            _("Only staff and the group's leader may read its staffing."),
        )
        day = query.validated_data.get("date") or timezone.localdate()
        return Response(StaffingOutput(staffing(group=group, day=day)).data)
