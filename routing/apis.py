from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from config.errors import Forbidden
from config.openapi import errors
from handler_groups.models import HandlerGroup
from handler_groups.selectors import groups_of_member

from . import presence
from .metrics import assignment_metrics
from .models import AgentPresence
from .selectors import presence_rows
from .serializers import MetricsOutput, MetricsQuery, PresenceOutput, PresenceStateInput


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
        group = HandlerGroup.objects.filter(pk=query.validated_data["group"]).first()
        if group is None:
            raise NotFound("No handler group with this id.")
        if not request.user.is_staff and group.leader_id != request.user.pk:
            raise Forbidden("Only staff and the group's leader may read its metrics.")
        day = query.validated_data.get("date") or timezone.localdate()
        return Response(assignment_metrics(group=group, day=day))
