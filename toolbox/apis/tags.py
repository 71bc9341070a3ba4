"""Tags: add to and remove from a ticket (its team: access "tag"), and the autocomplete over
the tags in use (anyone who handles tickets). The rules of a tag are ticketing.tags'."""

from django.urls import path
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.errors import Forbidden
from config.openapi import errors
from ticketing import access
from ticketing.tags import SUGGESTIONS, TAG_MAX_LENGTH, TAGS_PER_TICKET, tag_suggestions
from ticketing.tags import tags_add as add_tags
from ticketing.tags import tags_remove as remove_tags
from workflow.selectors import ticket_for


class TagsInput(serializers.Serializer):
    tags = serializers.ListField(
        child=serializers.CharField(allow_blank=True, trim_whitespace=False, max_length=200),
        allow_empty=False,
        max_length=100,
        help_text=f"Tags to add: each lower-cased, trimmed, its inner spaces made one, 1 to "
        f"{TAG_MAX_LENGTH} characters; the ticket carries at most {TAGS_PER_TICKET}.",
    )


class TagsOutput(serializers.Serializer):
    tags = serializers.ListField(
        child=serializers.CharField(), help_text="The ticket's tags, in the order added."
    )


class TagQuery(serializers.Serializer):
    q = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=TAG_MAX_LENGTH,
        help_text="Part of a tag's name (any case); tags starting with it come first.",
    )


class TagOutput(serializers.Serializer):
    name = serializers.CharField()
    ticket_count = serializers.IntegerField(help_text="How many tickets carry it.")


class TicketTagsView(APIView):
    @extend_schema(
        operation_id="tickets_tags_create",
        summary="Tag a ticket",
        description="Adds the tags the ticket does not carry yet (normalised: lower case, "
        "trimmed, inner white space one space), recorded in its history (action `tags`, "
        'detail `{"added": [...]}`); tags it carries already change nothing and record '
        "nothing. 200 with the ticket's tags whatever its state. The ticket's team only "
        "(403 for its applicant, a watcher or an approver); 404 for a ticket the caller may "
        f"not see. 400 naming `tags` for an empty tag, one over {TAG_MAX_LENGTH} characters, "
        f"or more than {TAGS_PER_TICKET} on the ticket: nothing changed.",
        request=TagsInput,
        responses={200: TagsOutput, **errors(400, 401, 403, 404)},
    )
    def post(self, request: Request, id: int) -> Response:
        ticket = ticket_for(request.user, id)
        access.require("tag", request.user, ticket)
        data = TagsInput(data=request.data)
        data.is_valid(raise_exception=True)
        tags = add_tags(
            ticket_id=ticket.pk, tags=data.validated_data["tags"], actor_id=request.user.pk
        )
        return Response({"tags": tags})


class TicketTagView(APIView):
    @extend_schema(
        operation_id="tickets_tags_destroy",
        summary="Remove a tag from a ticket",
        description="Removes the tag (matched after normalising, so any case), recorded in "
        'the ticket\'s history (action `tags`, detail `{"removed": [...]}`). 200 with the '
        "tags the ticket keeps. The ticket's team only (403 otherwise); 404 for a ticket the "
        "caller may not see, and for a tag the ticket does not carry (nothing changed).",
        request=None,
        responses={200: TagsOutput, **errors(400, 401, 403, 404)},
    )
    def delete(self, request: Request, id: int, tag: str) -> Response:
        ticket = ticket_for(request.user, id)
        access.require("tag", request.user, ticket)
        tags = remove_tags(
            ticket_id=ticket.pk, tags=[tag], actor_id=request.user.pk, require_present=True
        )
        return Response({"tags": tags})


class TagsView(APIView):
    @extend_schema(
        operation_id="tags_list",
        summary="Autocomplete tags",
        description=f"Up to {SUGGESTIONS} tags in use (carried by at least one ticket) whose "
        "name holds `q`: those starting with it first, then the most used, then by name. "
        "Anyone who handles tickets (staff, members and leaders of a group, holders of the "
        "handle permission); 403 for anyone else.",
        parameters=[TagQuery],
        responses={200: TagOutput(many=True), **errors(400, 401, 403)},
    )
    def get(self, request: Request) -> Response:
        if not access.is_handler(request.user):
            raise Forbidden(_("Only the support team reads the tags."))
        query = TagQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        return Response(TagOutput(tag_suggestions(query.validated_data["q"]), many=True).data)


urlpatterns: list = [
    path("tags/", TagsView.as_view(), name="tags"),
    path("tickets/<int:id>/tags/", TicketTagsView.as_view(), name="ticket-tags"),
    # (path: a tag may hold a slash)
    path("tickets/<int:id>/tags/<path:tag>/", TicketTagView.as_view(), name="ticket-tag"),
]
