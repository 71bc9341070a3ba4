from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import mixins, permissions, status, viewsets
from rest_framework.response import Response

from config.openapi import errors

from .models import HandlerGroup
from .serializers import (
    HandlerGroupSerializer,
)
from .services import ROUTING_FIELDS, handler_group_save


class IsStaffOrReadOnly(permissions.BasePermission):
    def has_permission(self, request, view) -> bool:
        return request.method in permissions.SAFE_METHODS or bool(request.user.is_staff)


@extend_schema_view(
    list=extend_schema(
        summary="List handler groups",
        responses={200: HandlerGroupSerializer(many=True), **errors(400, 401, 404)},
    ),
    retrieve=extend_schema(
        summary="Get a handler group", responses={200: HandlerGroupSerializer, **errors(401, 404)}
    ),
    create=extend_schema(
        summary="Create a handler group",
        responses={201: HandlerGroupSerializer, **errors(400, 401, 403)},
    ),
    update=extend_schema(
        summary="Replace a handler group",
        responses={200: HandlerGroupSerializer, **errors(400, 401, 403, 404)},
    ),
    partial_update=extend_schema(
        summary="Update some fields of a handler group",
        responses={200: HandlerGroupSerializer, **errors(400, 401, 403, 404)},
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
    lookup_value_converter = "int"  # a non-numeric id is no route (404), never a 500
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
            "escalation_contact_id": group.escalation_contact_id,
            **current,
            **serializer.validated_data,
        }
        group = handler_group_save(group=group, **values)
        return Response(self.get_serializer(group).data)
