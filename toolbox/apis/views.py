"""Saved views (toolbox.saved_views): list with live counts, create, read, change, delete, and
the tickets of one view (`GET /api/views/{id}/tickets/`, the pool's page of them)."""

from django.urls import path
from django.utils import timezone
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.openapi import errors
from config.pagination import RowCount, count_text
from ticketing import access
from ticketing.models import Ticket
from toolbox import saved_views
from toolbox.models import SavedView
from toolbox.scopes import may_edit
from workflow.apis import OWN_FILES
from workflow.selectors import POOL_SORTS
from workflow.serializers import TicketOutput


@extend_schema_field(saved_views.ViewFilters)
class FiltersField(serializers.JSONField):
    """The filters as given (an object), for the service to check."""


class ViewInput(serializers.Serializer):
    name = serializers.CharField(max_length=100)
    scope = serializers.ChoiceField(choices=saved_views.VIEW_SCOPES, default="personal")
    group_id = serializers.IntegerField(min_value=1, required=False, allow_null=True)
    # Checked by the service (saved_views.clean_filters) with the pool's rules, 400 naming
    # `filters.<name>`; the schema shows their shape.
    filters = FiltersField(required=False)
    sort = serializers.ChoiceField(choices=POOL_SORTS, required=False, allow_blank=True)
    order = serializers.IntegerField(min_value=0, max_value=10_000, required=False)


class ViewOutput(serializers.ModelSerializer):
    filters = saved_views.ViewFilters(read_only=True)
    count = serializers.SerializerMethodField(help_text="Tickets in the view now (capped).")
    count_is_estimate = serializers.SerializerMethodField(
        help_text='True when the count is "more than" it (EXACT_COUNT_LIMIT).'
    )
    count_text = serializers.SerializerMethodField(help_text='e.g. "12", "more than 1,000".')
    editable = serializers.SerializerMethodField()

    class Meta:
        model = SavedView
        fields = [
            "id",
            "name",
            "scope",
            "group_id",
            "owner_id",
            "filters",
            "sort",
            "order",
            "count",
            "count_is_estimate",
            "count_text",
            "editable",
            "created",
            "updated",
        ]
        read_only_fields = fields

    def _count(self, view) -> RowCount | None:
        return self.context.get("counts", {}).get(view.pk)

    def get_count(self, view) -> int | None:
        counted = self._count(view)
        return counted.value if counted else None

    def get_count_is_estimate(self, view) -> bool:
        counted = self._count(view)
        return bool(counted and counted.is_estimate)

    def get_count_text(self, view) -> str:
        counted = self._count(view)
        return count_text(counted) if counted else "—"

    def get_editable(self, view) -> bool:
        return may_edit(self.context["user"], view)


def _output(request, views: list[SavedView], **kwargs) -> dict | list:
    counts = saved_views.view_counts(request.user, views, now=timezone.now())
    context = {"user": request.user, "counts": counts}
    if kwargs.get("many"):
        return ViewOutput(views, many=True, context=context).data
    return ViewOutput(views[0], context=context).data


class ViewsView(APIView):
    @extend_schema(
        operation_id="views_list",
        summary="List my saved views with their counts",
        description="The views the caller may use (their own, their groups'; staff: every "
        "group's), by order then name, each with the number of tickets it lists now: all "
        "of them counted in one statement, each count exact up to EXACT_COUNT_LIMIT (1,000) "
        "and `count_is_estimate` beyond it. A view lists from the caller's pool (their "
        "groups' approved tickets) narrowed by its filters.",
        responses={200: ViewOutput(many=True), **errors(401)},
    )
    def get(self, request: Request) -> Response:
        views = list(saved_views.views_for(request.user).select_related("group"))
        return Response(_output(request, views, many=True))

    @extend_schema(
        operation_id="views_create",
        summary="Save a view",
        description="`filters` are the pool's (status: a list, priority, group, category, "
        'tag, fields {key: value}, handler: "me" | "none" | id, sla: response_due_1h | '
        "resolve_due_1h | breached | paused, q), checked by the pool's rules: 400 naming "
        "`filters.<name>`. `scope` personal (the caller's) or group (`group_id`; its leader "
        "or staff only: 403). Anyone off the ticket team: 403.",
        request=ViewInput,
        responses={201: ViewOutput, **errors(400, 401, 403)},
    )
    def post(self, request: Request) -> Response:
        data = ViewInput(data=request.data)
        data.is_valid(raise_exception=True)
        view = saved_views.view_create(user=request.user, **data.validated_data)
        return Response(_output(request, [view]), status=status.HTTP_201_CREATED)


class ViewView(APIView):
    @extend_schema(
        operation_id="views_retrieve",
        summary="Read a saved view",
        responses={200: ViewOutput, **errors(401, 404)},
    )
    def get(self, request: Request, id: int) -> Response:
        return Response(_output(request, [saved_views.view_for(request.user, id)]))

    @extend_schema(
        operation_id="views_partial_update",
        summary="Change a saved view",
        description="Only the given fields change. Its owner edits a personal view, the "
        "group's leader or staff a group's (403 for another member); a view the caller may "
        "not use is a 404. Bad filters: 400 naming `filters.<name>`.",
        request=ViewInput(partial=True),
        responses={200: ViewOutput, **errors(400, 401, 403, 404)},
    )
    def patch(self, request: Request, id: int) -> Response:
        data = ViewInput(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        view = saved_views.view_update(view_id=id, user=request.user, changes=data.validated_data)
        return Response(_output(request, [view]))

    @extend_schema(
        operation_id="views_destroy",
        summary="Delete a saved view",
        description="Who may change it may delete it (403 otherwise; 404 if not usable).",
        request=None,
        responses={204: None, **errors(401, 403, 404)},
    )
    def delete(self, request: Request, id: int) -> Response:
        saved_views.view_delete(view_id=id, user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ViewTicketsView(GenericAPIView):
    serializer_class = TicketOutput
    queryset = Ticket.objects.none()  # for the schema: the rows come from the view

    @extend_schema(
        operation_id="views_tickets_list",
        summary="List a saved view's tickets",
        description="The pool's page of the tickets the view lists for the caller now (their "
        "scope, its filters, its sort; newest first without one). 404 for a view the caller "
        "may not use.",
        responses={200: TicketOutput(many=True), **errors(400, 401, 404)},
    )
    def get(self, request: Request, id: int) -> Response:
        view = saved_views.view_for(request.user, id)
        qs = (
            saved_views.view_tickets(request.user, view, now=timezone.now())
            .select_related("sla_outcome", "survey")
            .prefetch_related("sla_events", OWN_FILES)
        )
        page = self.paginate_queryset(qs)
        context = {**self.get_serializer_context(), "audience": access.audience_for(request.user)}
        return self.get_paginated_response(TicketOutput(page, many=True, context=context).data)


urlpatterns: list = [
    path("views/", ViewsView.as_view(), name="views"),
    path("views/<int:id>/", ViewView.as_view(), name="view"),
    path("views/<int:id>/tickets/", ViewTicketsView.as_view(), name="view-tickets"),
]
