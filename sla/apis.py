from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.errors import Forbidden
from config.openapi import errors
from handler_groups.models import HandlerGroup

from .reports import sla_report
from .serializers import ReportOutput, ReportQuery


class SlaReportView(APIView):
    """SLA report over completed tickets: counts, breach rates, median/p90 business minutes,
    grouped by handler group (group), priority, category or handler. Staff see every group;
    group leaders only the groups they lead; others are refused."""

    @extend_schema(
        summary="Get the SLA report",
        parameters=[ReportQuery],
        responses={200: ReportOutput, **errors(400, 401, 403)},
    )
    def get(self, request: Request) -> Response:
        allowed = None
        if not request.user.is_staff:
            allowed = list(
                HandlerGroup.objects.filter(leader=request.user).values_list("pk", flat=True)
            )
            if not allowed:
                raise Forbidden("Only staff and group leaders may read SLA reports.")
        query = ReportQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        data = query.validated_data
        groups = allowed
        if data.get("handler_group") is not None:
            if allowed is not None and data["handler_group"] not in allowed:
                raise Forbidden("You lead no handler group with this id.")
            groups = [data["handler_group"]]
        rows = sla_report(
            date_from=data["from"],
            date_to=data["to"],
            group_by=data["group_by"],
            handler_group_ids=groups,
            priority=data.get("priority"),
            category=data.get("category"),
        )
        return Response(
            {
                "group_by": data["group_by"],
                "date_from": data["from"],
                "date_to": data["to"],
                "rows": rows,
            }
        )
