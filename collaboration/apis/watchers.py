"""Watchers and CC: list (anyone who sees the ticket), add and remove (the rules of
collaboration.selectors.watchers), and the composer's @mention candidates (the team only)."""

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from collaboration.selectors.watchers import watchers_of
from collaboration.serializers.watchers import (
    MentionableOutput,
    MentionableQuery,
    WatcherInput,
    WatcherOutput,
)
from collaboration.services import watchers as services
from config.errors import Forbidden
from config.openapi import errors
from ticketing import access
from workflow import mentions
from workflow.selectors import ticket_for


class TicketWatchersView(APIView):
    @extend_schema(
        operation_id="tickets_watchers_list",
        summary="List a ticket's watchers",
        description="Everyone told of the ticket's public replies and status changes, in the "
        "order they were added. Anyone who may see the ticket may read it.",
        responses={200: WatcherOutput(many=True), **errors(401, 404)},
    )
    def get(self, request: Request, id: int) -> Response:
        ticket = ticket_for(request.user, id)
        return Response(WatcherOutput(watchers_of(ticket), many=True).data)

    @extend_schema(
        operation_id="tickets_watchers_create",
        summary="Add a watcher to a ticket",
        description="The ticket's team adds anyone active (source `team`); its applicant "
        "copies colleagues in (`cc`); anyone who may see the ticket adds themselves "
        "(`self`); anyone else gets a 403. 201 with the new watcher, who is told (in-app and "
        "by e-mail, in their language) unless they added themselves; someone already "
        "watching is a 200 with the watcher as it was, nothing changed. 400 naming "
        "`user_id` for an unknown or inactive person or the ticket's own applicant.",
        request=WatcherInput,
        responses={
            201: WatcherOutput,
            200: WatcherOutput,
            **errors(400, 401, 403, 404),
        },
    )
    def post(self, request: Request, id: int) -> Response:
        ticket = ticket_for(request.user, id)
        data = WatcherInput(data=request.data)
        data.is_valid(raise_exception=True)
        watcher, created = services.watcher_add(
            ticket_id=ticket.pk, user_id=data.validated_data["user_id"], actor=request.user
        )
        return Response(
            WatcherOutput(watcher).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )


class TicketWatcherView(APIView):
    @extend_schema(
        operation_id="tickets_watchers_destroy",
        summary="Remove a watcher from a ticket",
        description="Anyone may remove themselves; the ticket's team removes anyone; its "
        "applicant removes those they copied in; anyone else gets a 403. 404 for someone "
        "who does not watch the ticket.",
        request=None,
        responses={204: None, **errors(401, 403, 404)},
    )
    def delete(self, request: Request, id: int, user_id: int) -> Response:
        ticket = ticket_for(request.user, id)
        services.watcher_remove(ticket_id=ticket.pk, user_id=user_id, actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class TicketMentionableView(APIView):
    @extend_schema(
        operation_id="tickets_mentionable_list",
        summary="Who an internal note on a ticket could mention",
        description="For the composer's @ autocomplete: up to 10 active people an "
        "`@username` in an internal note would tell (staff, the ticket's group's members and "
        "leader, its handler) whose username, first or last name starts with `q`, by "
        "username. The ticket's team only: 403 for anyone else who may see it.",
        parameters=[MentionableQuery],
        responses={200: MentionableOutput(many=True), **errors(400, 401, 403, 404)},
    )
    def get(self, request: Request, id: int) -> Response:
        ticket = ticket_for(request.user, id)
        if not access.can_work_on(request.user, ticket):
            raise Forbidden(str(access.DENIED["internal_reply"]))
        query = MentionableQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        people = mentions.mentionable(ticket, query.validated_data["q"])
        return Response(MentionableOutput(people, many=True).data)
