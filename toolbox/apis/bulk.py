"""Bulk actions (`POST /api/tickets/bulk/`, toolbox.bulk) and the CSV export
(`GET /api/tickets/export/?<pool filters>&format=csv`, toolbox.export)."""

from django.http import StreamingHttpResponse
from django.urls import path
from django.utils import timezone, translation
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.openapi import errors
from ticketing import fields as ticket_fields
from toolbox import bulk, export
from workflow.serializers import PoolQuery


class BulkInput(serializers.Serializer):
    ids = serializers.ListField(
        child=serializers.IntegerField(min_value=1),
        min_length=1,
        max_length=bulk.BULK_MAX_IDS,
    )
    action = serializers.ChoiceField(choices=bulk.BULK_ACTIONS)
    group_id = serializers.IntegerField(min_value=1, required=False, help_text="transfer")
    tags = serializers.ListField(
        child=serializers.CharField(max_length=200),
        required=False,
        max_length=50,
        help_text="add_tags, remove_tags",
    )
    priority = serializers.IntegerField(required=False, help_text="set_priority (1-4)")
    macro_id = serializers.IntegerField(min_value=1, required=False, help_text="apply_macro")


class BulkResultOutput(serializers.Serializer):
    id = serializers.IntegerField()
    ok = serializers.BooleanField()
    status = serializers.IntegerField(required=False, help_text="400, 403, 404 or 409")
    detail = serializers.JSONField(
        required=False,
        help_text="The refusal's message; for a 400 {field: [messages]}; for a macro's "
        'step {"step", "action", "detail"}.',
    )


class BulkOutput(serializers.Serializer):
    results = BulkResultOutput(many=True)


class BulkView(APIView):
    @extend_schema(
        operation_id="tickets_bulk_create",
        summary="Run one action on many tickets",
        description="Up to 200 ids (repeats once), each ticket checked and changed on its own "
        "transaction, in the order given: one result per id, `ok` or the status and detail "
        "it would have got alone (404 not visible, 403 not allowed, 409 not now, 400 bad "
        "for that ticket, e.g. a 21st tag). Actions: transfer (`group_id`: to that group's "
        "pool; its leader or staff), add_tags / remove_tags (`tags`; the team), "
        "set_priority (`priority`; the team), close (the applicant or staff), apply_macro "
        "(`macro_id`, one the caller may use; each ticket's run is one transaction). More "
        "than 200 ids, an unknown action or missing or bad parameters: 400, nothing done.",
        request=BulkInput,
        responses={200: BulkOutput, **errors(400, 401)},
    )
    def post(self, request: Request) -> Response:
        data = BulkInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        params = bulk.BulkParams(
            group_id=values.get("group_id"),
            tags=list(values.get("tags") or []),
            priority=values.get("priority"),
            macro_id=values.get("macro_id"),
        )
        results = bulk.bulk_apply(
            user=request.user, ids=values["ids"], action=values["action"], params=params
        )
        return Response({"results": results})


class ExportQuery(PoolQuery):
    view = serializers.ChoiceField(
        choices=export.EXPORT_VIEWS,
        default="visible",
        help_text="visible (default): every ticket the caller may see; or one pool list.",
    )
    format = serializers.ChoiceField(choices=["csv"], default="csv")


class ExportView(APIView):
    # Errors answer in JSON: `format=csv` names the file's format, not the error's.
    def perform_content_negotiation(self, request, force=False):
        return JSONRenderer(), JSONRenderer.media_type

    @extend_schema(
        operation_id="tickets_export",
        summary="Export tickets as CSV",
        description="The tickets the caller may see (`view=` narrows to a pool list), with "
        "the pool's filters (`field.<key>=` included) and sort, streamed as CSV: a column per "
        "active custom field, `tags` for the ticket team only, formula-like cells quoted as "
        "text. At most TOOLBOX_EXPORT_MAX_ROWS (default 100,000) tickets: more is a 400 "
        "(narrow the filters).",
        parameters=[ExportQuery],
        responses={
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="The CSV."),
            **errors(400, 401),
        },
    )
    def get(self, request: Request) -> StreamingHttpResponse:
        query = ExportQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        arguments = dict(query.validated_data)
        arguments.pop("format")
        arguments["fields"] = ticket_fields.field_filters_from(request.query_params)
        now = timezone.now()
        qs = export.export_tickets(request.user, now=now, **arguments)
        export.check_size(qs)
        language = translation.get_language()
        zone = timezone.get_current_timezone()

        def lines():
            # Streamed after the view returns: in the request's language and zone still.
            with translation.override(language), timezone.override(zone):
                yield from export.csv_lines(request.user, qs, language=language)

        response = StreamingHttpResponse(lines(), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="tickets-{now:%Y%m%d}.csv"'
        return response


urlpatterns: list = [
    path("tickets/bulk/", BulkView.as_view(), name="tickets-bulk"),
    path("tickets/export/", ExportView.as_view(), name="tickets-export"),
]
