from django.db.models import Prefetch, QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from attachments import selectors as attachment_selectors
from attachments.models import Attachment
from config.openapi import errors
from idempotency.apis import IDEMPOTENCY_KEY, KEY_REUSED, respond_once
from routing.decisions import decisions_for
from routing.serializers import RoutingDecisionOutput
from sla import services as sla_services
from ticketing import access
from ticketing import fields as ticket_fields
from ticketing.models import ReplyType, Ticket

from . import selectors, services
from .serializers import (
    REPLY_TYPES,
    DeclineInput,
    PoolQuery,
    RecordOutput,
    RejectInput,
    ReopenInput,
    ReplyInput,
    ReplyOutput,
    TicketOutput,
    TicketSubmitInput,
    TransferInput,
)

# The files submitted with each listed ticket, in one query per page.
OWN_FILES = Prefetch(
    "attachments",
    queryset=Attachment.objects.filter(reply=None).select_related("blob").order_by("id"),
    to_attr="own_files",
)


class TicketViewSet(mixins.ListModelMixin, viewsets.GenericViewSet):
    """Tickets the caller may see. Commands are POST actions; each calls one service."""

    serializer_class = TicketOutput
    lookup_value_converter = "int"  # a non-numeric id is no route (404), never a 500
    filterset_fields = ["priority", "category", "ticket_status", "process_status", "handler_group"]

    def get_queryset(self) -> QuerySet[Ticket]:
        return (
            access.visible_tickets(self.request.user)
            .select_related("sla_outcome", "survey")
            .prefetch_related("sla_events", OWN_FILES)
            .order_by("-id")
        )

    def get_serializer_context(self) -> dict:
        return {**super().get_serializer_context(), "audience": self._audience()}

    def _audience(self) -> access.Audience:
        if not hasattr(self, "_caller_audience"):
            self._caller_audience = access.audience_for(self.request.user)
        return self._caller_audience

    @extend_schema(
        summary="List the tickets I may see",
        responses={200: TicketOutput(many=True), **errors(400, 401, 404)},
    )
    def list(self, request: Request, *args, **kwargs) -> Response:
        return super().list(request, *args, **kwargs)

    def _ticket(self) -> Ticket:
        """The ticket in the URL if the caller may see it, else 404."""
        return selectors.ticket_for(self.request.user, int(self.kwargs["pk"]))

    def _respond(self, ticket: Ticket, code: int = status.HTTP_200_OK) -> Response:
        data = TicketOutput(ticket, context=self.get_serializer_context()).data
        return Response(data, status=code)

    @extend_schema(
        summary="Submit a ticket",
        request=TicketSubmitInput,
        parameters=[IDEMPOTENCY_KEY],
        responses={201: TicketOutput, **errors(400, 401), **KEY_REUSED},
    )
    def create(self, request: Request) -> Response:
        def submit() -> Response:
            data = _valid(TicketSubmitInput, request.data)
            ticket = services.ticket_submit(creator=request.user, **data)
            return self._respond(ticket, status.HTTP_201_CREATED)

        return respond_once(request, submit)

    @extend_schema(summary="Get a ticket", responses={200: TicketOutput, **errors(401, 404)})
    def retrieve(self, request: Request, pk=None) -> Response:
        return self._respond(self._ticket())

    @extend_schema(
        summary="Approve a submitted ticket",
        request=None,
        responses={200: TicketOutput, **errors(401, 403, 404, 409)},
    )
    @action(detail=True, methods=["post"])
    def approve(self, request: Request, pk=None) -> Response:
        ticket = self._ticket()
        access.require("approve", request.user, ticket)
        return self._respond(services.ticket_approve(ticket_id=ticket.pk, approver=request.user))

    @extend_schema(
        summary="Reject a submitted ticket",
        request=RejectInput,
        responses={200: TicketOutput, **errors(400, 401, 403, 404, 409)},
    )
    @action(detail=True, methods=["post"])
    def reject(self, request: Request, pk=None) -> Response:
        ticket = self._ticket()
        access.require("reject", request.user, ticket)
        data = _valid(RejectInput, request.data)
        return self._respond(
            services.ticket_reject(
                ticket_id=ticket.pk, approver=request.user, reason=data["reason"]
            )
        )

    @extend_schema(
        summary="Cancel a ticket",
        request=None,
        responses={200: TicketOutput, **errors(401, 403, 404, 409)},
    )
    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, pk=None) -> Response:
        ticket = self._ticket()
        access.require("cancel", request.user, ticket)
        return self._respond(services.ticket_cancel(ticket_id=ticket.pk, user=request.user))

    @extend_schema(
        summary="Accept a ticket to handle it",
        request=None,
        responses={200: TicketOutput, **errors(401, 403, 404, 409)},
    )
    @action(detail=True, methods=["post"])
    def accept(self, request: Request, pk=None) -> Response:
        ticket = self._ticket()
        access.require("accept", request.user, ticket)
        return self._respond(services.ticket_accept(ticket_id=ticket.pk, handler=request.user))

    @extend_schema(
        summary="Decline an offered or auto-assigned ticket",
        request=DeclineInput,
        responses={200: TicketOutput, **errors(400, 401, 403, 404, 409)},
    )
    @action(detail=True, methods=["post"])
    def decline(self, request: Request, pk=None) -> Response:
        """Only the agent the ticket is offered or assigned to, before accepting it: the
        ticket is routed again without them (they never get it back), and the decline is
        counted for them apart from missed offers. Someone else's, an accepted or a pool
        ticket is a 409."""
        ticket = self._ticket()
        access.require("decline", request.user, ticket)
        data = _valid(DeclineInput, request.data)
        return self._respond(
            services.ticket_decline(
                ticket_id=ticket.pk, handler=request.user, reason=data["reason"]
            )
        )

    @extend_schema(
        summary="Complete a ticket",
        request=None,
        responses={200: TicketOutput, **errors(401, 403, 404, 409)},
    )
    @action(detail=True, methods=["post"])
    def complete(self, request: Request, pk=None) -> Response:
        ticket = self._ticket()
        access.require("complete", request.user, ticket)
        return self._respond(services.ticket_complete(ticket_id=ticket.pk, handler=request.user))

    @extend_schema(
        summary="Reopen a completed ticket",
        description="Back to processing with the same handler; the resolve clock runs on "
        "from where it stopped (the time while completed does not count) and the SLA outcome "
        "is no longer final. The ticket's team may reopen it at any time, its applicant within "
        "REOPEN_DAYS (default 14) of the completion: 403 for anyone else, and for the "
        "applicant after the window (the message names it; they open a new ticket then). "
        "409 when the ticket is not completed (open, closed, merged, or reopened already); "
        "nothing changes on a refusal.",
        request=ReopenInput,
        responses={200: TicketOutput, **errors(400, 401, 403, 404, 409)},
    )
    @action(detail=True, methods=["post"])
    def reopen(self, request: Request, pk=None) -> Response:
        """Who may is a rule about people (access "reopen"): a 403, also for the applicant
        past the window, which is about who they are for this ticket now (its team still
        may); whether its state allows it is the service's compare-and-set (409)."""
        ticket = self._ticket()
        access.require("reopen", request.user, ticket)
        data = _valid(ReopenInput, request.data)
        return self._respond(
            services.ticket_reopen(ticket_id=ticket.pk, user=request.user, reason=data["reason"])
        )

    @extend_schema(
        summary="Close a ticket",
        request=None,
        responses={200: TicketOutput, **errors(401, 403, 404, 409)},
    )
    @action(detail=True, methods=["post"])
    def close(self, request: Request, pk=None) -> Response:
        ticket = self._ticket()
        access.require("close", request.user, ticket)
        return self._respond(services.ticket_close(ticket_id=ticket.pk, user=request.user))

    @extend_schema(
        summary="Pause the resolve clock: waiting on the applicant",
        request=None,
        responses={200: TicketOutput, **errors(401, 403, 404, 409)},
    )
    @action(detail=True, methods=["post"])
    def pause(self, request: Request, pk=None) -> Response:
        """Waiting on applicant: the resolve clock stops until resumed or the applicant
        replies publicly."""
        ticket = self._ticket()
        access.require("pause", request.user, ticket)
        return self._respond(sla_services.sla_pause(ticket_id=ticket.pk, user=request.user))

    @extend_schema(
        summary="Resume the resolve clock",
        request=None,
        responses={200: TicketOutput, **errors(401, 403, 404, 409)},
    )
    @action(detail=True, methods=["post"])
    def resume(self, request: Request, pk=None) -> Response:
        ticket = self._ticket()
        access.require("resume", request.user, ticket)
        return self._respond(sla_services.sla_resume(ticket_id=ticket.pk, user=request.user))

    @extend_schema(
        summary="Transfer a ticket to another handler or group",
        request=TransferInput,
        responses={200: TicketOutput, **errors(400, 401, 403, 404, 409)},
    )
    @action(detail=True, methods=["post"])
    def transfer(self, request: Request, pk=None) -> Response:
        ticket = self._ticket()
        access.require("transfer", request.user, ticket)
        data = _valid(TransferInput, request.data)
        # Whoever transferred it sees the result as they saw the ticket, even when it has
        # left their groups (a later GET may then be a 404).
        was_internal = self._audience().sees_internals(ticket)
        ticket = services.ticket_transfer(
            ticket_id=ticket.pk,
            user=request.user,
            handler_id=data.get("handler_id"),
            handler_group_id=data.get("handler_group_id"),
        )
        context = {**self.get_serializer_context(), "internal": was_internal}
        return Response(TicketOutput(ticket, context=context).data)

    @extend_schema(
        methods=["GET"],
        summary="List a ticket's replies",
        request=None,
        responses={200: ReplyOutput(many=True), **errors(401, 404)},
    )
    @extend_schema(
        methods=["POST"],
        summary="Reply to a ticket",
        request=ReplyInput,
        parameters=[IDEMPOTENCY_KEY],
        responses={201: ReplyOutput, **errors(400, 401, 403, 404, 409), **KEY_REUSED},
    )
    @action(detail=True, methods=["get", "post"], pagination_class=None, filter_backends=[])
    def replies(self, request: Request, pk=None) -> Response:
        ticket = self._ticket()
        if request.method == "GET":
            replies = list(selectors.replies_for(self._audience(), ticket))
            context = {"reply_files": attachment_selectors.by_reply(replies)}
            return Response(ReplyOutput(replies, many=True, context=context).data)

        def reply() -> Response:
            data = _valid(ReplyInput, request.data)
            reply_type = REPLY_TYPES[data["reply_type"]]
            if reply_type == ReplyType.INTERNAL:
                access.require("internal_reply", request.user, ticket)
            access.require("reply", request.user, ticket)
            created = services.ticket_reply(
                ticket_id=ticket.pk,
                author=request.user,
                reply_type=reply_type,
                content=data["content"],
                attachment_ids=data["attachment_ids"],
            )
            return Response(ReplyOutput(created).data, status=status.HTTP_201_CREATED)

        return respond_once(request, reply)

    @extend_schema(
        summary="List a ticket's history records",
        request=None,
        responses={200: RecordOutput(many=True), **errors(401, 404)},
    )
    @action(detail=True, methods=["get"], pagination_class=None, filter_backends=[])
    def records(self, request: Request, pk=None) -> Response:
        ticket = self._ticket()
        records = selectors.records_for(self._audience(), ticket)
        return Response(RecordOutput(records, many=True).data)

    @extend_schema(
        summary="Why this agent: a ticket's routing decisions",
        description="Every routing decision about the ticket, oldest first: the strategy, "
        "every member with their figures and, if not eligible, why, and the outcome. The "
        "ticket's team only (its group's members and leader, its handler, staff): 404 for "
        "everyone else.",
        request=None,
        responses={200: RoutingDecisionOutput(many=True), **errors(401, 404)},
    )
    @action(detail=True, methods=["get"], pagination_class=None, filter_backends=[])
    def routing(self, request: Request, pk=None) -> Response:
        ticket = self._ticket()
        if not self._audience().sees_internals(ticket):
            raise Ticket.DoesNotExist  # routing internals: the team's only
        return Response(RoutingDecisionOutput(decisions_for(ticket.pk), many=True).data)

    @extend_schema(
        summary="List the tickets awaiting approval",
        request=None,
        responses={200: TicketOutput(many=True), **errors(400, 401, 403, 404)},
    )
    @action(
        detail=False,
        methods=["get"],
        url_path="awaiting-approval",
        filterset_fields=None,
        filter_backends=[],
    )
    def awaiting_approval(self, request: Request) -> Response:
        """Submitted tickets waiting for an approver, oldest first (approvers only)."""
        access.require_approver(request.user)
        return _approvals_page(self, request)

    @extend_schema(
        summary="List the pool: tickets to take, tickets in hand, or all",
        parameters=[PoolQuery],
        responses={200: TicketOutput(many=True), **errors(400, 401, 404)},
    )
    @action(detail=False, methods=["get"], filterset_fields=None, filter_backends=[])
    def pool(self, request: Request) -> Response:
        query = _valid(PoolQuery, request.query_params)
        # `field.<key>=<value>`: custom fields, checked against their types (400 naming one).
        query["fields"] = ticket_fields.field_filters_from(request.query_params)
        qs = (
            selectors.pool_for(request.user, **query)
            .select_related("sla_outcome", "survey")
            .prefetch_related("sla_events", OWN_FILES)
        )
        page = self.paginate_queryset(qs)
        return self.get_paginated_response(
            TicketOutput(page, many=True, context=self.get_serializer_context()).data
        )


def _approvals_page(view, request):
    qs = (
        selectors.awaiting_approval_for(request.user)
        .select_related("survey")
        .prefetch_related(OWN_FILES)
    )
    page = view.paginate_queryset(qs)
    return view.get_paginated_response(
        TicketOutput(page, many=True, context=view.get_serializer_context()).data
    )


def _valid(serializer_class, data) -> dict:
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data
