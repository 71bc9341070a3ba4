from django.utils import timezone
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import mixins, permissions, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from config.errors import Forbidden
from config.openapi import errors

from . import presence
from .metrics import assignment_metrics
from .models import AgentPresence, HandlerGroup
from .selectors import groups_of_member, presence_rows
from .serializers import (
    HandlerGroupSerializer,
    MetricsOutput,
    MetricsQuery,
    PresenceOutput,
    PresenceStateInput,
)
from .services import ROUTING_FIELDS, handler_group_save


class IsStaffOrReadOnly(permissions.BasePermission):
    def has_permission(self, request, view) -> bool:
        return request.method in permissions.SAFE_METHODS or bool(request.user.is_staff)


@extend_schema_view(
    list=extend_schema(responses={200: HandlerGroupSerializer(many=True), **errors(400, 401, 404)}),
    retrieve=extend_schema(responses={200: HandlerGroupSerializer, **errors(401, 404)}),
    create=extend_schema(responses={201: HandlerGroupSerializer, **errors(400, 401, 403)}),
    update=extend_schema(responses={200: HandlerGroupSerializer, **errors(400, 401, 403, 404)}),
    partial_update=extend_schema(
        responses={200: HandlerGroupSerializer, **errors(400, 401, 403, 404)}
    ),
)
class HandlerGroupViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.UpdateModelMixin,
    viewsets.GenericViewSet,
):
    """Handler groups; every authenticated user may read them, staff may create and update."""

    queryset = HandlerGroup.objects.all().order_by("id")
    serializer_class = HandlerGroupSerializer
    lookup_value_regex = r"\d+"  # a non-numeric id is no route (404), never a 500
    permission_classes = [permissions.IsAuthenticated, IsStaffOrReadOnly]

    def create(self, request, *args, **kwargs):
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        group = handler_group_save(**serializer.validated_data)
        return Response(self.get_serializer(group).data, status=status.HTTP_201_CREATED)

    def update(self, request, *args, **kwargs):
        group = self.get_object()
        partial = kwargs.get("partial", False)
        serializer = self.get_serializer(group, data=request.data, partial=partial)
        serializer.is_valid(raise_exception=True)
        current = {field: getattr(group, field) for field in ROUTING_FIELDS}
        values = {
            "name": group.name,
            "member_ids": group.member_ids,
            "assign_strategy": group.assign_strategy,
            "status": group.status,
            "leader_id": group.leader_id,
            **current,
            **serializer.validated_data,
        }
        group = handler_group_save(group=group, **values)
        return Response(self.get_serializer(group).data)


class PresenceViewSet(viewsets.ViewSet):
    """Agent presence. Agents heartbeat and set their own state; a leader sees the members
    of the groups they lead, staff see everyone, others see themselves."""

    @extend_schema(responses={200: PresenceOutput(many=True), **errors(401)})
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

    @extend_schema(request=None, responses={200: PresenceOutput, **errors(401, 403)})
    @action(detail=False, methods=["post"])
    def heartbeat(self, request):
        presence.heartbeat(user=request.user)
        return Response(self._mine(request))

    @extend_schema(
        request=PresenceStateInput, responses={200: PresenceOutput, **errors(400, 401, 403)}
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
        parameters=[MetricsQuery], responses={200: MetricsOutput, **errors(400, 401, 403, 404)}
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
