"""Custom ticket fields: everyone signed in reads the active ones (those of a category with
`?category=`), staff create, change and delete them; the ticket's team edits a ticket's
values (PATCH /api/tickets/{id}/fields/). ticketing.fields holds the rules."""

from django.db import transaction
from django.urls import path
from django.utils import timezone, translation
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.errors import Forbidden, InvalidArgument
from config.openapi import errors
from ticketing import access
from ticketing import fields as services
from ticketing.models import Category, FieldType, TicketField
from workflow.selectors import ticket_for

VALUE_SHAPES = (
    'Values by type: text a string, number a JSON number, date a "YYYY-MM-DD" string, '
    "choice one of `choices`, multi_choice a list of them, user an active user's id, "
    "checkbox true or false."
)


class TicketFieldOutput(serializers.ModelSerializer):
    label = serializers.SerializerMethodField(help_text="In the caller's language.")  # type: ignore[assignment]
    label_default = serializers.CharField(
        source="label", help_text="The label where no translation applies."
    )
    label_translations = serializers.DictField(child=serializers.CharField())
    choices = serializers.ListField(child=serializers.CharField())
    categories = serializers.SerializerMethodField(
        help_text="The names of the categories it applies to; empty: every ticket."
    )

    class Meta:
        model = TicketField
        fields = [
            "id",
            "key",
            "label",
            "label_default",
            "label_translations",
            "type",
            "required",
            "choices",
            "help_text",
            "categories",
            "order",
            "active",
        ]
        read_only_fields = fields

    def get_label(self, field: TicketField) -> str:
        return field.label_in(translation.get_language())

    def get_categories(self, field: TicketField) -> list[str]:
        return [category.name for category in field.categories.all()]


class TicketFieldInput(serializers.Serializer):
    key = serializers.SlugField(
        max_length=40, help_text="Unique; the key of its values in a ticket's `fields`. Fixed."
    )
    label = serializers.CharField(max_length=100)  # type: ignore[assignment]
    label_translations = serializers.DictField(
        child=serializers.CharField(max_length=100), required=False
    )
    type = serializers.ChoiceField(choices=FieldType.choices, help_text="Fixed after creation.")
    required = serializers.BooleanField(required=False)  # type: ignore[assignment]
    choices = serializers.ListField(
        child=serializers.CharField(max_length=100),
        required=False,
        max_length=200,
        help_text="For choice and multi_choice: the values offered, in order.",
    )
    help_text = serializers.CharField(max_length=300, required=False, allow_blank=True)  # type: ignore[assignment]
    categories = serializers.ListField(
        child=serializers.CharField(max_length=50),
        required=False,
        help_text="Category names it applies to; empty: every ticket.",
    )
    order = serializers.IntegerField(required=False, min_value=0, max_value=1_000_000)
    active = serializers.BooleanField(required=False)


class TicketFieldQuery(serializers.Serializer):
    category = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=50,
        help_text="Only the fields a ticket of this category carries (blank: of no category).",
    )
    all = serializers.BooleanField(
        required=False, default=False, help_text="Staff: the inactive fields too."
    )


class TicketFieldsInput(serializers.Serializer):
    fields = serializers.DictField(  # type: ignore[assignment]
        help_text="{key: value} of the fields to change; null clears one. " + VALUE_SHAPES
    )


class TicketFieldsOutput(serializers.Serializer):
    fields = serializers.DictField(help_text="The ticket's fields afterwards.")  # type: ignore[assignment]


def _require_staff(request: Request) -> None:
    if not request.user.is_staff:
        raise Forbidden(translation.gettext("Only staff may change ticket fields."))


def _category_ids(names: list[str] | None) -> list[int] | None:
    if names is None:
        return None
    found = dict(Category.objects.filter(name__in=names).values_list("name", "pk"))
    unknown = [name for name in names if name not in found]
    if unknown:
        raise InvalidArgument(
            "categories",
            translation.gettext("No category has this name: %(name)s.") % {"name": unknown[0]},
        )
    return [found[name] for name in names]


def _output(field_id: int) -> dict:
    field = TicketField.objects.prefetch_related("categories").get(pk=field_id)
    return dict(TicketFieldOutput(field).data)


class TicketFieldsView(APIView):
    @extend_schema(
        operation_id="ticket_fields_list",
        summary="List custom ticket fields",
        description="The active fields in order; with `?category=` only those a ticket of "
        "that category carries (its own and those of every category). Everyone signed in; "
        "`?all=1` (staff only) adds the inactive ones. " + VALUE_SHAPES,
        parameters=[TicketFieldQuery],
        responses={200: TicketFieldOutput(many=True), **errors(400, 401, 403)},
    )
    def get(self, request: Request) -> Response:
        query = TicketFieldQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        if query.validated_data["all"]:
            _require_staff(request)
            listed = list(TicketField.objects.prefetch_related("categories"))
        elif "category" in query.validated_data:
            ids = [f.pk for f in services.fields_for(query.validated_data["category"])]
            listed = list(TicketField.objects.filter(pk__in=ids).prefetch_related("categories"))
        else:
            listed = services.active_fields()
        return Response(TicketFieldOutput(listed, many=True).data)

    @extend_schema(
        operation_id="ticket_fields_create",
        summary="Create a custom ticket field",
        description="Staff only. 400 naming `key` (taken), `type`, `choices` (a choice field "
        "without values, a value twice, values for another type) or `categories` (no such "
        "name).",
        request=TicketFieldInput,
        responses={201: TicketFieldOutput, **errors(400, 401, 403)},
    )
    def post(self, request: Request) -> Response:
        _require_staff(request)
        data = TicketFieldInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        category_ids = _category_ids(values.pop("categories", None))
        field = services.field_create(values=values, category_ids=category_ids)
        return Response(_output(field.pk), status=status.HTTP_201_CREATED)


ID = OpenApiParameter("id", int, OpenApiParameter.PATH)


class TicketFieldView(APIView):
    @extend_schema(
        operation_id="ticket_fields_retrieve",
        summary="Get a custom ticket field",
        parameters=[ID],
        responses={200: TicketFieldOutput, **errors(401, 404)},
    )
    def get(self, request: Request, id: int) -> Response:
        field = TicketField.objects.get(pk=id)
        if not field.active and not request.user.is_staff:
            raise TicketField.DoesNotExist
        return Response(_output(id))

    @extend_schema(
        operation_id="ticket_fields_partial_update",
        summary="Change a custom ticket field",
        description="Staff only; only what is sent changes (`categories` replaces the list). "
        "The key and the type are fixed (400 naming them). Tickets keep the values they "
        "hold.",
        parameters=[ID],
        request=TicketFieldInput(partial=True),
        responses={200: TicketFieldOutput, **errors(400, 401, 403, 404)},
    )
    def patch(self, request: Request, id: int) -> Response:
        _require_staff(request)
        TicketField.objects.get(pk=id)  # (404 before judging the input)
        data = TicketFieldInput(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        with transaction.atomic():
            category_ids = _category_ids(values.pop("categories", None))
            services.field_update(field_id=id, values=values, category_ids=category_ids)
        return Response(_output(id))

    @extend_schema(
        operation_id="ticket_fields_destroy",
        summary="Delete a custom ticket field",
        description="Staff only. A field no ticket holds a value for is deleted (204); one "
        "that tickets hold values for is deactivated instead (200 with the field, "
        "`active: false`): no longer offered, its values kept on the tickets and in their "
        "history.",
        parameters=[ID],
        request=None,
        responses={204: None, 200: TicketFieldOutput, **errors(401, 403, 404)},
    )
    def delete(self, request: Request, id: int) -> Response:
        _require_staff(request)
        if services.field_delete(field_id=id):
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(_output(id))


class TicketFieldValuesView(APIView):
    @extend_schema(
        operation_id="tickets_fields_partial_update",
        summary="Change a ticket's custom fields",
        description="The ticket's team only (403 for anyone else who may see it; 404 when "
        "not visible). Only the keys sent change; null clears a field (400 for a required "
        "one). Each change is recorded in the ticket's history (action `fields`, "
        '{"changes": {key: [old, new]}}). 400 naming `fields.<key>`: no such field for '
        "the ticket's category, a value its type cannot hold, a choice not offered, a user "
        "who does not exist. 409 for a closed, rejected or cancelled ticket. " + VALUE_SHAPES,
        parameters=[ID],
        request=TicketFieldsInput,
        responses={200: TicketFieldsOutput, **errors(400, 401, 403, 404, 409)},
    )
    def patch(self, request: Request, id: int) -> Response:
        ticket = ticket_for(request.user, id)
        access.require("edit_fields", request.user, ticket)
        data = TicketFieldsInput(data=request.data)
        data.is_valid(raise_exception=True)
        fields = services.fields_set(
            ticket_id=ticket.pk,
            values=data.validated_data["fields"],
            actor_id=request.user.pk,
            now=timezone.now(),
        )
        return Response({"fields": fields})


urlpatterns: list = [
    path("ticket-fields/", TicketFieldsView.as_view(), name="ticket-fields"),
    path("ticket-fields/<int:id>/", TicketFieldView.as_view(), name="ticket-field"),
    path("tickets/<int:id>/fields/", TicketFieldValuesView.as_view(), name="ticket-field-values"),
]
