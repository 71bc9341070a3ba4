"""Links between tickets: list (anyone who sees the ticket, each link as they may see it),
add and remove (the team of both tickets: collaboration.services.links)."""

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from collaboration.selectors.links import LinkEntry, links_of
from collaboration.serializers.links import LinkInput, LinkOutput
from collaboration.services import links as services
from collaboration.services.links import kind_from
from config.openapi import errors
from workflow.selectors import ticket_for


class TicketLinksView(APIView):
    @extend_schema(
        operation_id="tickets_links_list",
        summary="List a ticket's links",
        description="Parent, children, related tickets, and the merge relation (read-only "
        "entries with a null id). Outside the ticket's team, only links to tickets the caller "
        "may see are listed.",
        responses={200: LinkOutput(many=True), **errors(401, 404)},
    )
    def get(self, request: Request, id: int) -> Response:
        ticket = ticket_for(request.user, id)
        return Response(LinkOutput(links_of(request.user, ticket), many=True).data)

    @extend_schema(
        operation_id="tickets_links_create",
        summary="Link another ticket to a ticket",
        description="The team of both tickets (staff, their handlers, their groups' members "
        "and leaders). 400 for an unknown kind, a `ticket` that is this one or that the "
        "caller cannot see, a second parent or a cycle; 409 for a pair already linked (in "
        "either direction, of any kind) or a merged ticket.",
        request=LinkInput,
        responses={201: LinkOutput, **errors(400, 401, 403, 404, 409)},
    )
    def post(self, request: Request, id: int) -> Response:
        ticket = ticket_for(request.user, id)
        data = LinkInput(data=request.data)
        data.is_valid(raise_exception=True)
        link = services.link_add(
            ticket_id=ticket.pk,
            other_id=data.validated_data["ticket"],
            kind=data.validated_data["kind"],
            user=request.user,
        )
        other = link.target if link.source_id == ticket.pk else link.source
        entry = LinkEntry(
            id=link.pk, kind=kind_from(link, ticket.pk), ticket=other, created=link.created
        )
        return Response(LinkOutput(entry).data, status=status.HTTP_201_CREATED)


class TicketLinkView(APIView):
    @extend_schema(
        operation_id="tickets_links_destroy",
        summary="Remove a link between two tickets",
        description="The team of both tickets. 404 for a link that is not this ticket's.",
        request=None,
        responses={204: None, **errors(401, 403, 404)},
    )
    def delete(self, request: Request, id: int, link_id: int) -> Response:
        ticket = ticket_for(request.user, id)
        services.link_remove(ticket_id=ticket.pk, link_id=link_id, user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)
