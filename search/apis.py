from drf_spectacular.utils import extend_schema
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from config.openapi import errors
from config.pagination import Pagination, RowCount
from ticketing import access
from ticketing.fields import field_filters_from
from ticketing.models import Ticket
from workflow.apis import OWN_FILES

from . import selectors
from .highlights import highlights_for
from .serializers import SearchQuery, SearchResultOutput


class SearchView(GenericAPIView):
    """Full-text search over the tickets the caller may see."""

    serializer_class = SearchResultOutput
    pagination_class = Pagination
    queryset = Ticket.objects.none()  # (the schema's model; the selector decides what is seen)

    @extend_schema(
        summary="Search tickets",
        description="Tickets whose title and content, public replies, internal notes (the "
        "ticket's team only) or file names match every word of `q` (English by word form, "
        "Chinese by its characters), or whose bill code it is; ranked by relevance, then "
        "newest first. Each result has `highlights`: escaped snippets with `<mark>` around "
        "the matches, only of text the caller may read. `tag` keeps the tickets carrying "
        "it among those whose team the caller is on; `field.<key>=<value>` (any number) "
        "those whose custom field holds the value, read by the field's type (400 naming "
        "`field.<key>` for an unknown key or a value it cannot hold).",
        parameters=[SearchQuery],
        responses={200: SearchResultOutput(many=True), **errors(400, 401, 404)},
    )
    def get(self, request: Request) -> Response:
        query = SearchQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        data = dict(query.validated_data)
        found = selectors.search_validated(
            request.user, data, fields=field_filters_from(request.query_params)
        )
        paginator = Pagination()
        ids: list[int] = paginator.paginate_queryset(found.ticket_ids, request, view=self)
        if found.capped:
            paginator.counted = RowCount(len(found.ticket_ids), True, at_least=True)
        audience = access.audience_for(request.user)
        tickets = selectors.tickets_in_order(
            ids,
            Ticket.objects.select_related("sla_outcome").prefetch_related("sla_events", OWN_FILES),
        )
        context = {
            **self.get_serializer_context(),
            "audience": audience,
            "highlights": highlights_for(audience, tickets, found.query, found.tsquery),
        }
        return paginator.get_paginated_response(
            SearchResultOutput(tickets, many=True, context=context).data
        )
