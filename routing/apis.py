from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from config.openapi import errors
from handler_groups.selectors import groups_led_by, groups_of_member

from . import presence
from .models import AgentPresence
from .selectors import presence_rows
from .serializers import PresenceOutput, PresenceStateInput


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
        else:
            # Only members of a handler group have presence; leaders see their members'.
            ids = {user.pk} if groups_of_member(user.pk).exists() else set()
        for group in groups_led_by(user):
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
