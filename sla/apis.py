from typing import TYPE_CHECKING

from django.db import transaction
from django.db.models import ProtectedError, RestrictedError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework import mixins, permissions, status, viewsets
from rest_framework.decorators import action
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from config.errors import ConflictError
from config.openapi import DetailErrorBody, errors
from handler_groups.selectors import supervises_any
from ticketing.models import OPEN_STATUSES, ProcessStatus, Ticket

from .ladder import Level
from .models import SlaRule
from .renderers import ReportCsvRenderer
from .reports import report_scope, sla_report
from .rules import rule_save
from .serializers import (
    RecomputeOutput,
    RecomputeQuery,
    ReportOutput,
    ReportQuery,
    SlaRuleSerializer,
)
from .services import sla_recompute

if TYPE_CHECKING:
    from django_stubs_ext import StrPromise


class SlaReportView(APIView):
    """SLA report over tickets completed, or closed before completion, in the range: counts,
    breaches and breach rates, clocks closed before due, median/p90 business minutes, grouped
    by handler group (group), priority, category, handler or tag (a ticket with two tags
    counts in both rows; one without under the null key); `?tag=` keeps the tickets carrying
    it. Staff see every group; group
    leaders only the groups they lead; others are refused.

    `?format=csv` (or `Accept: text/csv`) answers the same rows as a CSV attachment
    (sla-report.csv): a header line with the rows' field names, then one line per row. Errors
    are JSON in every format; an unknown format is a 404."""

    # api_settings gives the renderer classes (its stub types the setting as their paths).
    renderer_classes = [*api_settings.DEFAULT_RENDERER_CLASSES, ReportCsvRenderer]  # type: ignore[list-item]

    @extend_schema(
        summary="Get the SLA report",
        parameters=[
            ReportQuery,
            OpenApiParameter(
                "format",
                OpenApiTypes.STR,
                enum=["json", "csv"],
                description="csv: the rows as a CSV attachment (sla-report.csv). Default json.",
            ),
        ],
        responses={
            (200, "application/json"): OpenApiResponse(
                ReportOutput,
                description="The report; with format=csv its rows as a CSV attachment: a "
                "header line with the rows' field names (the group_by value under its own "
                "name, key, count, …), then one line per row.",
            ),
            (200, "text/csv"): OpenApiTypes.STR,
            **{(code, "application/json"): body for code, body in errors(400, 401, 403).items()},
            (404, "application/json"): OpenApiResponse(
                DetailErrorBody, description="An unknown format: only json and csv are served."
            ),
        },
    )
    def get(self, request: Request) -> Response:
        report_scope(request.user)  # refused before the query is read, as before
        query = ReportQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        data = query.validated_data
        groups = report_scope(request.user, handler_group=data.get("handler_group"))
        rows = sla_report(
            date_from=data["from"],
            date_to=data["to"],
            group_by=data["group_by"],
            handler_group_ids=groups,
            priority=data.get("priority"),
            category=data.get("category"),
            tag=data.get("tag"),
        )
        return Response(
            {
                "group_by": data["group_by"],
                "date_from": data["from"],
                "date_to": data["to"],
                "rows": rows,
            }
        )

    def finalize_response(self, request, response, *args, **kwargs):
        # The CSV renderer draws reports only: an error, or OPTIONS' description of the view,
        # is JSON whatever format was asked for.
        not_a_report = getattr(response, "exception", False) or request.method != "GET"
        if not_a_report and isinstance(
            getattr(request, "accepted_renderer", None), ReportCsvRenderer
        ):
            request.accepted_renderer = JSONRenderer()
            request.accepted_media_type = JSONRenderer.media_type
        return super().finalize_response(request, response, *args, **kwargs)


class StaffWritesLeadersRead(permissions.BasePermission):
    """Staff read and write; group leaders (of at least one handler group) only read."""

    message: "str | StrPromise" = gettext_lazy("Only staff may change SLA rules.")

    def has_permission(self, request, view) -> bool:
        user = request.user
        if user.is_staff:
            return True
        if not supervises_any(user):
            self.message = _("Only staff and group leaders may read SLA rules.")
            return False
        return request.method in permissions.SAFE_METHODS


def _as_levels(levels: list[dict] | None) -> list[Level] | None:
    if levels is None:
        return None
    return [
        Level(
            position=position,
            clock=level["clock"],
            trigger=level["trigger"],
            value=level["value"],
            notify=tuple(level["notify"]),
            template_code=level["template_code"],
            reassign_group_id=level["reassign_group_id"],
            raise_priority=level["raise_priority"],
        )
        for position, level in enumerate(levels, start=1)
    ]


@extend_schema_view(
    list=extend_schema(
        summary="List SLA rules",
        responses={200: SlaRuleSerializer(many=True), **errors(400, 401, 403, 404)},
    ),
    retrieve=extend_schema(
        summary="Get an SLA rule", responses={200: SlaRuleSerializer, **errors(401, 403, 404)}
    ),
    create=extend_schema(
        summary="Create an SLA rule",
        request=SlaRuleSerializer,
        responses={201: SlaRuleSerializer, **errors(400, 401, 403)},
    ),
    partial_update=extend_schema(
        summary="Update some fields of an SLA rule",
        request=SlaRuleSerializer,
        responses={200: SlaRuleSerializer, **errors(400, 401, 403, 404)},
    ),
    destroy=extend_schema(
        summary="Delete an SLA rule",
        responses={204: None, **errors(401, 403, 404, 409)},
    ),
)
class SlaRuleViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet,
):
    """SLA rules with their escalation ladders (`levels`, in order). Staff read and write;
    group leaders only read; others are refused. A change applies to new tickets; the
    recompute action moves the open ones.

    Level errors name the level's index and field, as the queue-ranking errors do:
    {"code": "invalid_argument", "errors": {"levels": {"1": {"value": ["…"]}}}}."""

    queryset = SlaRule.objects.prefetch_related("levels").order_by("sort", "id")
    serializer_class = SlaRuleSerializer
    lookup_value_converter = "int"  # a non-numeric id is no route (404), never a 500
    permission_classes = [permissions.IsAuthenticated, StaffWritesLeadersRead]

    def _output(self, rule: SlaRule) -> dict:
        return self.get_serializer(self.get_queryset().get(pk=rule.pk)).data

    def create(self, request: Request, *args, **kwargs) -> Response:
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        fields = dict(serializer.validated_data)
        levels = _as_levels(fields.pop("levels", None))
        rule = rule_save(levels=levels, **fields)
        return Response(self._output(rule), status=status.HTTP_201_CREATED)

    def partial_update(self, request: Request, *args, **kwargs) -> Response:
        """Only the fields sent change; `levels`, when sent, replaces the whole ladder."""
        rule = self.get_object()
        serializer = self.get_serializer(rule, data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        fields = dict(serializer.validated_data)
        levels = _as_levels(fields.pop("levels", None))
        rule = rule_save(rule=rule, levels=levels, **fields)
        return Response(self._output(rule))

    def destroy(self, request: Request, *args, **kwargs) -> Response:
        """Refused (409) while open tickets run on the rule: their deadlines and escalation
        levels come from it. Disable it instead (status 0) and recompute to move them to
        the rule that matches them now. Finished tickets keep their outcome, without the
        rule."""
        rule = self.get_object()
        with transaction.atomic():
            rule = SlaRule.objects.select_for_update().get(pk=rule.pk)
            open_tickets = Ticket.objects.filter(
                sla_rule=rule,
                process_status=ProcessStatus.APPROVED,
                ticket_status__in=OPEN_STATUSES,
            ).count()
            if open_tickets:
                raise ConflictError(
                    _(
                        "%(count)d open ticket(s) run on this rule; deleting it would drop "
                        "their escalation ladder. Disable it instead (PATCH status=0), then POST "
                        "%(url)s to move them to the rule that matches them now."
                    )
                    % {"count": open_tickets, "url": f"/api/sla/rules/{rule.pk}/recompute/"}
                )
            try:
                rule.delete()
            except (ProtectedError, RestrictedError) as exc:
                raise ConflictError(
                    _(
                        "Other records still refer to this rule; disable it instead "
                        "(PATCH status=0)."
                    )
                ) from exc
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(
        summary="Recompute open tickets on an SLA rule",
        parameters=[RecomputeQuery],
        request=None,
        responses={200: RecomputeOutput, **errors(400, 401, 403, 404)},
    )
    @action(detail=True, methods=["post"])
    def recompute(self, request: Request, *args, **kwargs) -> Response:
        """Re-match the open approved tickets on this rule (now, or after re-matching),
        recompute their deadlines and re-time their pending escalation levels. With
        dry_run=1 nothing is written: the answer shows what would change."""
        rule = self.get_object()
        query = RecomputeQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        dry_run = query.validated_data["dry_run"]
        result = sla_recompute(dry_run=dry_run, rule_id=rule.pk)
        body = {
            "dry_run": dry_run,
            "examined": result.examined,
            "moved": result.moved,
            "events_changed": result.events_changed,
            "newly_breached": result.newly_breached,
            "changes": result.changes,
        }
        return Response(RecomputeOutput(body).data)
