"""Canned responses: list what the caller may use (`?q=`, `?language=`), create, read, change
and delete (the scope's rules: toolbox.scopes), and render one for a ticket (nothing sent)."""

from django.urls import path
from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.openapi import errors
from toolbox import canned as services
from toolbox.models import CannedResponse, Scope
from toolbox.scopes import may_edit
from workflow.selectors import ticket_for

SCOPE_HELP = _(
    "personal (yours), group (that group's members use it; its leader and staff edit it) or "
    "global (the whole team uses it; staff edit it)."
)
BODY_HELP = _(
    "Text with placeholders {{ ticket.bill_code }}, {{ ticket.title }}, {{ applicant.name }}, "
    "{{ agent.name }}, {{ group.name }}; any other {{ … }} is a 400 naming it."
)


class CannedInput(serializers.Serializer):
    name = serializers.CharField(max_length=100)
    body = serializers.CharField(max_length=20000, help_text=BODY_HELP)
    scope = serializers.ChoiceField(
        choices=Scope.choices, default=Scope.PERSONAL, help_text=SCOPE_HELP
    )
    group_id = serializers.IntegerField(required=False, allow_null=True, default=None)
    language = serializers.CharField(
        max_length=10,
        required=False,
        allow_blank=True,
        default="",
        help_text=_("en, zh-hans, or blank for any language."),
    )


class CannedPatch(CannedInput):
    def __init__(self, *args, **kwargs):
        kwargs["partial"] = True
        super().__init__(*args, **kwargs)


class CannedOutput(serializers.ModelSerializer):
    group_id = serializers.IntegerField(read_only=True, allow_null=True)
    owner_id = serializers.IntegerField(read_only=True, allow_null=True)
    editable = serializers.SerializerMethodField()

    class Meta:
        model = CannedResponse
        fields = [
            "id",
            "name",
            "body",
            "scope",
            "group_id",
            "owner_id",
            "language",
            "editable",
            "created",
            "updated",
        ]

    def get_editable(self, item: CannedResponse) -> bool:
        return may_edit(self.context["request"].user, item)


class CannedQuery(serializers.Serializer):
    q = serializers.CharField(
        max_length=services.Q_MAX_LENGTH, required=False, allow_blank=True, default=""
    )
    language = serializers.CharField(max_length=10, required=False, allow_blank=True, default="")


class RenderOutput(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    text = serializers.CharField(help_text=_("The body with its placeholders filled in."))


class CannedListView(APIView):
    @extend_schema(
        operation_id="canned_responses_list",
        summary="List the canned responses I may use",
        description="Personal ones, your groups', and global ones (the team's), by name. `q` "
        "matches the name or the body; `language` keeps those in it and those for any.",
        parameters=[CannedQuery],
        responses={200: CannedOutput(many=True), **errors(400, 401)},
    )
    def get(self, request: Request) -> Response:
        query = CannedQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        items = services.canned_for(request.user, **query.validated_data)
        return Response(CannedOutput(items, many=True, context={"request": request}).data)

    @extend_schema(
        operation_id="canned_responses_create",
        summary="Create a canned response",
        description="The support team only (403). A group's needs its leader or staff, a "
        "global one staff (403); a group scope without group_id, or a group_id on another "
        "scope, is a 400 naming `group`; an unknown placeholder a 400 naming `body`.",
        request=CannedInput,
        responses={201: CannedOutput, **errors(400, 401, 403)},
    )
    def post(self, request: Request) -> Response:
        data = CannedInput(data=request.data)
        data.is_valid(raise_exception=True)
        item = services.canned_create(user=request.user, **data.validated_data)
        return Response(
            CannedOutput(item, context={"request": request}).data, status=status.HTTP_201_CREATED
        )


class CannedDetailView(APIView):
    @extend_schema(
        operation_id="canned_responses_retrieve",
        summary="Get a canned response",
        description="404 for one you may not use.",
        responses={200: CannedOutput, **errors(401, 404)},
    )
    def get(self, request: Request, id: int) -> Response:
        item = services.usable_item(CannedResponse, request.user, id)
        return Response(CannedOutput(item, context={"request": request}).data)

    @extend_schema(
        operation_id="canned_responses_partial_update",
        summary="Change a canned response",
        description="Its owner (personal), the group's leader or staff (group), staff "
        "(global); 403 for someone who may use it but not edit it, 404 for anyone else. A new "
        "scope or group is checked as on creation.",
        request=CannedPatch,
        responses={200: CannedOutput, **errors(400, 401, 403, 404)},
    )
    def patch(self, request: Request, id: int) -> Response:
        data = CannedPatch(data=request.data)
        data.is_valid(raise_exception=True)
        item = services.canned_update(user=request.user, canned_id=id, changes=data.validated_data)
        return Response(CannedOutput(item, context={"request": request}).data)

    @extend_schema(
        operation_id="canned_responses_destroy",
        summary="Delete a canned response",
        description="Who may edit it (see PATCH); 403 / 404 likewise.",
        request=None,
        responses={204: None, **errors(401, 403, 404)},
    )
    def delete(self, request: Request, id: int) -> Response:
        services.canned_delete(user=request.user, canned_id=id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class CannedRenderView(APIView):
    @extend_schema(
        operation_id="tickets_canned_responses_render",
        summary="Fill in a canned response for a ticket",
        description="The text the composer inserts; nothing is sent. 404 for a ticket you "
        "may not see or a response you may not use (another group's, someone's personal "
        "one); 403 when you see the ticket but are not on its team.",
        request=None,
        responses={200: RenderOutput, **errors(401, 403, 404)},
    )
    def post(self, request: Request, id: int, cid: int) -> Response:
        ticket = ticket_for(request.user, id)
        item, text = services.canned_render(user=request.user, ticket=ticket, canned_id=cid)
        return Response(RenderOutput({"id": item.pk, "name": item.name, "text": text}).data)


urlpatterns: list = [
    path("canned-responses/", CannedListView.as_view(), name="canned-responses"),
    path("canned-responses/<int:id>/", CannedDetailView.as_view(), name="canned-response"),
    path(
        "tickets/<int:id>/canned-responses/<int:cid>/render/",
        CannedRenderView.as_view(),
        name="ticket-canned-render",
    ),
]
