"""Merging duplicates: POST /api/tickets/{id}/merge/ {"into": <ticket id>} merges ticket `id`
(the source) into `into` (collaboration.services.merging) and answers with the target."""

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from collaboration.serializers.merging import MergeInput
from collaboration.services.merging import ticket_merge
from config.openapi import errors
from ticketing import access
from workflow.selectors import ticket_for
from workflow.serializers import TicketOutput


class TicketMergeView(APIView):
    @extend_schema(
        operation_id="tickets_merge",
        summary="Merge a duplicate into another ticket",
        description="A leader of both tickets' groups, or staff. The source's replies, notes, "
        "files and watchers move to the target (each reply keeps its time and says where it "
        "came from), its description becomes a public reply there, its applicant watches "
        "the target; the source is closed with `merged_into` set and its SLA clocks finalised "
        "as merged; both applicants are told. Answers with the target. 400 for a missing or "
        "non-integer `into`; 404 when the caller cannot see either ticket; 403 for anyone "
        "but a leader of both groups or staff; 409 for a ticket merged into itself, a source "
        "that is not approved, closed or already merged, or a target that is not approved, "
        "closed or merged. Nothing changes on a refusal.",
        request=MergeInput,
        responses={200: TicketOutput, **errors(400, 401, 403, 404, 409)},
    )
    def post(self, request: Request, id: int) -> Response:
        source = ticket_for(request.user, id)
        data = MergeInput(data=request.data)
        data.is_valid(raise_exception=True)
        target = ticket_for(request.user, data.validated_data["into"])
        merged = ticket_merge(source_id=source.pk, target_id=target.pk, user=request.user)
        context = {"audience": access.audience_for(request.user), "request": request}
        return Response(TicketOutput(merged, context=context).data)
