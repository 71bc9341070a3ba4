from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from config.openapi import errors

from .apis import led_group
from .queue_metrics import queue_metrics
from .queue_serializers import QueueMetricsOutput, QueueMetricsQuery


class QueueMetricsView(APIView):
    """A group's queue per local hour or day: arrivals, assignments, time to assignment and
    to acceptance (p50/p95), abandoned tickets, the service level against the group's
    target_answer_seconds, and per agent their assignments (with the spread) and occupancy.
    Definitions in routing/queue_metrics.py. Staff and the group's leader."""

    @extend_schema(
        summary="Get a group's queue metrics per hour or day",
        parameters=[QueueMetricsQuery],
        responses={200: QueueMetricsOutput, **errors(400, 401, 403, 404)},
    )
    def get(self, request):
        query = QueueMetricsQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        data = query.validated_data
        group = led_group(
            request.user,
            data["group"],
            _("Only staff and the group's leader may read its metrics."),
        )
        return Response(
            queue_metrics(
                group=group, date_from=data["from"], date_to=data["to"], bucket=data["bucket"]
            )
        )
