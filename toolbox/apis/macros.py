"""Macros: list what the caller may apply, create, read, change and delete (the scope's rules:
toolbox.scopes), and apply one to a ticket (toolbox.macros.macro_apply: one transaction, one
history entry; a failing step answers naming it, nothing changed)."""

from django.urls import path
from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import (
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
    inline_serializer,
)
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.openapi import errors
from toolbox import macros as services
from toolbox.canned import usable_item
from toolbox.models import Macro, Scope
from toolbox.scopes import may_edit
from workflow.serializers import TicketOutput

ACTIONS_HELP = _(
    'An ordered list of steps, each {"action": ..., params}: reply {text, internal}, pause, '
    "resume, complete, set_priority {priority 1-4}, transfer {group_id}, add_tags {tags}, "
    "remove_tags {tags}, set_field {key, value}. A bad step is a 400 naming "
    "actions[<i>].<param>."
)


class MacroStep(serializers.Serializer):
    action = serializers.ChoiceField(choices=list(services.ACTIONS))
    text = serializers.CharField(required=False)
    internal = serializers.BooleanField(required=False)
    priority = serializers.IntegerField(required=False, min_value=1, max_value=4)
    group_id = serializers.IntegerField(required=False)
    tags = serializers.ListField(child=serializers.CharField(), required=False)
    key = serializers.CharField(required=False)
    value = serializers.JSONField(required=False)


@extend_schema_field(MacroStep(many=True))
class StepsField(serializers.JSONField):
    """The steps as given: checked step by step by the service (400 naming
    actions[<i>].<param>), documented as MacroStep."""


class MacroInput(serializers.Serializer):
    name = serializers.CharField(max_length=100)
    actions = StepsField(help_text=ACTIONS_HELP)
    scope = serializers.ChoiceField(choices=Scope.choices, default=Scope.PERSONAL)
    group_id = serializers.IntegerField(required=False, allow_null=True, default=None)


class MacroPatch(MacroInput):
    def __init__(self, *args, **kwargs):
        kwargs["partial"] = True
        super().__init__(*args, **kwargs)


class MacroOutput(serializers.ModelSerializer):
    group_id = serializers.IntegerField(read_only=True, allow_null=True)
    owner_id = serializers.IntegerField(read_only=True, allow_null=True)
    actions = MacroStep(many=True, read_only=True)
    editable = serializers.SerializerMethodField()

    class Meta:
        model = Macro
        fields = [
            "id",
            "name",
            "actions",
            "scope",
            "group_id",
            "owner_id",
            "editable",
            "created",
            "updated",
        ]

    def get_editable(self, item: Macro) -> bool:
        return may_edit(self.context["request"].user, item)


class MacroQuery(serializers.Serializer):
    q = serializers.CharField(max_length=100, required=False, allow_blank=True, default="")


StepFailedBody = inline_serializer(
    name="MacroStepFailed",
    fields={
        "code": serializers.CharField(),
        "step": serializers.IntegerField(help_text="The failing step's index in actions."),
        "action": serializers.CharField(),
        "detail": serializers.CharField(),
        "errors": serializers.DictField(required=False, help_text="A 400's field errors."),
    },
)
# The error shape's codes (config/exceptions.py) of the statuses a step answers with.
STEP_CODES = {400: "invalid_argument", 403: "permission_denied", 404: "not_found", 409: "conflict"}
STEP_FAILED = OpenApiResponse(
    StepFailedBody,
    description="A step could not run (403 not allowed, 404 its target gone, 409 the "
    "ticket's state, 400 its input): nothing of the run changed.",
)


class MacroListView(APIView):
    @extend_schema(
        operation_id="macros_list",
        summary="List the macros I may apply",
        description="Personal ones, your groups', and global ones (the team's), by name.",
        parameters=[MacroQuery],
        responses={200: MacroOutput(many=True), **errors(400, 401)},
    )
    def get(self, request: Request) -> Response:
        query = MacroQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        items = services.macros_for(request.user, q=query.validated_data["q"])
        return Response(MacroOutput(items, many=True, context={"request": request}).data)

    @extend_schema(
        operation_id="macros_create",
        summary="Create a macro",
        description="The support team only (403); scopes as for canned responses.",
        request=MacroInput,
        responses={201: MacroOutput, **errors(400, 401, 403)},
    )
    def post(self, request: Request) -> Response:
        data = MacroInput(data=request.data)
        data.is_valid(raise_exception=True)
        item = services.macro_create(user=request.user, **data.validated_data)
        return Response(
            MacroOutput(item, context={"request": request}).data, status=status.HTTP_201_CREATED
        )


class MacroDetailView(APIView):
    @extend_schema(
        operation_id="macros_retrieve",
        summary="Get a macro",
        description="404 for one you may not use.",
        responses={200: MacroOutput, **errors(401, 404)},
    )
    def get(self, request: Request, id: int) -> Response:
        item = usable_item(Macro, request.user, id)
        return Response(MacroOutput(item, context={"request": request}).data)

    @extend_schema(
        operation_id="macros_partial_update",
        summary="Change a macro",
        description="As for canned responses: 403 for someone who may use it but not edit it, "
        "404 for anyone else.",
        request=MacroPatch,
        responses={200: MacroOutput, **errors(400, 401, 403, 404)},
    )
    def patch(self, request: Request, id: int) -> Response:
        data = MacroPatch(data=request.data)
        data.is_valid(raise_exception=True)
        item = services.macro_update(user=request.user, macro_id=id, changes=data.validated_data)
        return Response(MacroOutput(item, context={"request": request}).data)

    @extend_schema(
        operation_id="macros_destroy",
        summary="Delete a macro",
        request=None,
        responses={204: None, **errors(401, 403, 404)},
    )
    def delete(self, request: Request, id: int) -> Response:
        services.macro_delete(user=request.user, macro_id=id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class MacroApplyView(APIView):
    @extend_schema(
        operation_id="tickets_macros_apply",
        summary="Apply a macro to a ticket",
        description="Runs its steps in order as one transaction, through the same services "
        "(and rules) as each action alone, with one history entry (action `macro`). 404 for "
        "a ticket you may not see or a macro you may not use; 403 when you are not on the "
        "ticket's team. A step that may not run — checked for permission before anything "
        "runs, and for the ticket's state as it runs — answers with its status (403, 404, "
        "409, 400) naming the step (`step`, `action`), and nothing changed.",
        request=None,
        responses={
            200: TicketOutput,
            400: STEP_FAILED,
            403: STEP_FAILED,
            404: STEP_FAILED,
            409: STEP_FAILED,
            **errors(401),
        },
    )
    def post(self, request: Request, id: int, mid: int) -> Response:
        try:
            ticket = services.macro_apply(ticket_id=id, macro_id=mid, user=request.user)
        except services.MacroStepFailed as failed:
            return Response(
                {"code": STEP_CODES.get(failed.status, "error"), **failed.as_dict()},
                status=failed.status,
            )
        # The caller was on the team when applying it (a transfer may have taken the
        # ticket out of their groups): the team's view of it.
        return Response(TicketOutput(ticket, context={"request": request, "internal": True}).data)


urlpatterns: list = [
    path("macros/", MacroListView.as_view(), name="macros"),
    path("macros/<int:id>/", MacroDetailView.as_view(), name="macro"),
    path(
        "tickets/<int:id>/macros/<int:mid>/apply/",
        MacroApplyView.as_view(),
        name="ticket-macro-apply",
    ),
]
