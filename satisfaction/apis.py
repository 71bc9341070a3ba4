"""The rating API: the applicant answers their completed ticket's survey once; the applicant
and the team read it. The figures are insight's (GET /api/metrics/satisfaction/)."""

from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.openapi import errors
from ticketing import access as ticket_access
from ticketing.models import Ticket

from . import selectors, services
from .serializers import SatisfactionInput, SurveyOutput


def _visible_ticket(user, ticket_id: int) -> Ticket:
    """The ticket with its survey if the caller may see it, else 404."""
    ticket = (
        ticket_access.visible_tickets(user).select_related("survey").filter(pk=ticket_id).first()
    )
    if ticket is None:
        raise NotFound()
    return ticket


class TicketSatisfactionView(APIView):
    @extend_schema(
        operation_id="tickets_satisfaction_retrieve",
        summary="Get a ticket's satisfaction survey",
        description="The survey its applicant was asked at the ticket's completion, with "
        "the rating once given. For the applicant and the ticket's team; a 404 for anyone "
        "else, and for a ticket nobody was asked about.",
        responses={200: SurveyOutput, **errors(401, 404)},
    )
    def get(self, request: Request, id: int) -> Response:
        ticket = _visible_ticket(request.user, id)
        audience = ticket_access.audience_for(request.user)
        survey = selectors.survey_of(ticket)
        if survey is None or not ticket_access.may("read_rating", request.user, ticket, audience):
            raise NotFound()
        return Response(SurveyOutput(survey).data)

    @extend_schema(
        operation_id="tickets_satisfaction_create",
        summary="Rate the help on a completed ticket",
        description="The applicant's answer, once: 201 with the survey. 400 naming `rating` "
        "outside 1–5 or `comment` over 2,000 characters; 403 for anyone but the applicant; "
        "409 when nobody was asked (the ticket is not completed), when it was answered "
        "already, or when the 14 days to answer are over. A rating of 1 or 2 tells the "
        "group's leader.",
        request=SatisfactionInput,
        responses={201: SurveyOutput, **errors(400, 401, 403, 404, 409)},
    )
    def post(self, request: Request, id: int) -> Response:
        ticket = _visible_ticket(request.user, id)
        ticket_access.require("rate", request.user, ticket)
        data = SatisfactionInput(data=request.data)
        data.is_valid(raise_exception=True)
        survey = selectors.survey_of(ticket)
        if survey is None:
            raise services.NotAsked()
        answered = services.survey_answer(
            survey=survey,
            rating=data.validated_data["rating"],
            comment=data.validated_data["comment"],
            now=timezone.now(),
        )
        return Response(SurveyOutput(answered).data, status=status.HTTP_201_CREATED)
