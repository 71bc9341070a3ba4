from drf_spectacular.utils import extend_schema
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.response import Response

from config.openapi import errors

from . import inbox, selectors
from .models import Notification
from .serializers import InboxQuery, NotificationOutput, ReadAllOutput, UnreadCountOutput


class NotificationViewSet(viewsets.GenericViewSet):
    """The caller's in-app inbox. Nobody sees or marks another user's messages: every query
    is filtered by recipient = caller, and another user's message is a 404."""

    serializer_class = NotificationOutput
    lookup_value_converter = "int"  # a non-numeric id is no route (404), never a 500
    queryset = Notification.objects.none()  # for the schema; requests use get_queryset

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return Notification.objects.none()
        return selectors.inbox_for(self.request.user)

    @extend_schema(
        summary="List my notifications",
        parameters=[InboxQuery],
        responses={200: NotificationOutput(many=True), **errors(400, 401, 404)},
    )
    def list(self, request):
        query = InboxQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        qs = selectors.inbox_for(request.user, unread_only=query.validated_data["unread"])
        page = self.paginate_queryset(qs)
        return self.get_paginated_response(NotificationOutput(page, many=True).data)

    @extend_schema(
        summary="Get one of my notifications",
        responses={200: NotificationOutput, **errors(401, 404)},
    )
    def retrieve(self, request, pk=None):
        return Response(NotificationOutput(self.get_queryset().get(pk=int(pk))).data)

    @extend_schema(
        summary="Count my unread notifications",
        responses={200: UnreadCountOutput, **errors(401)},
    )
    @action(detail=False, methods=["get"], url_path="unread-count")
    def unread_count(self, request):
        unread = selectors.unread_count(request.user)
        return Response({"unread": unread, "count": unread})

    @extend_schema(
        summary="Mark a notification read",
        request=None,
        responses={200: NotificationOutput, **errors(401, 404)},
    )
    @action(detail=True, methods=["post"])
    def read(self, request, pk=None):
        try:
            notification_id = int(pk)
        except (TypeError, ValueError):
            raise NotFound() from None
        if not inbox.inbox_mark_read(user=request.user, notification_id=notification_id):
            raise NotFound()
        return Response(NotificationOutput(self.get_queryset().get(pk=notification_id)).data)

    @extend_schema(
        summary="Mark all my notifications read",
        request=None,
        responses={200: ReadAllOutput, **errors(401)},
    )
    @action(detail=False, methods=["post"], url_path="read-all")
    def read_all(self, request):
        return Response({"marked": inbox.inbox_mark_all_read(user=request.user)})
