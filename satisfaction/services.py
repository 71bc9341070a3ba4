"""Asking and answering: a completed ticket's applicant is asked once (survey_ask, in the
completion's transaction), and answers once (survey_answer, a compare-and-set); a low rating
tells the group's leader."""

import logging
from datetime import datetime

from django.conf import settings
from django.db import connection, transaction
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from config.errors import ConflictError, InvalidArgument
from handler_groups.models import HandlerGroup
from notifications.rendering import TemplateError
from notifications.sending import send
from ticketing.models import Ticket
from ticketing.transitions import record

from .models import COMMENT_MAX, RATING_MAX, RATING_MIN, Survey
from .tokens import SURVEY_VALID_FOR, make_token

logger = logging.getLogger(__name__)

# A rating at or below this alerts the group's leader.
LOW_RATING_MAX = 2

ASK_SQL = """
INSERT INTO oa_ticket_survey
    (ticket_id, applicant_id, handler_id, handler_group_id, asked, expires, comment)
VALUES (%(ticket)s, %(applicant)s, %(handler)s, %(group)s, %(asked)s, %(expires)s, '')
ON CONFLICT (ticket_id) DO NOTHING
RETURNING id
"""
"""The ticket's survey, unless it has one (a completion after a reopen asks no second
time): the id when it was written now, no row when it was there already. Locks the new row
only; the ticket's own row lock is the completion's (its compare-and-set)."""


class SurveyAnswered(ConflictError):
    def __init__(self):
        super().__init__(_("This survey has been answered already."))


class SurveyExpired(ConflictError):
    def __init__(self):
        super().__init__(
            _("This survey has expired: it could be answered for %(days)s days.")
            % {"days": SURVEY_VALID_FOR.days}
        )


class NotAsked(ConflictError):
    def __init__(self):
        super().__init__(_("Nobody has been asked about this ticket: it is not completed yet."))


def survey_url(survey: Survey) -> str:
    """The survey page's absolute address (settings.SITE_URL), its token signed now."""
    token = make_token(survey_id=survey.pk, ticket_id=survey.ticket_id)
    path = reverse("survey-page", kwargs={"token": token})
    return settings.SITE_URL.rstrip("/") + path


def survey_ask(*, ticket: Ticket, now: datetime) -> Survey | None:
    """Ask the applicant of a just-completed ticket how it went, once per ticket: the survey
    (expiring SURVEY_VALID_FOR from now, rating the ticket's handler and group as they are
    now) and the applicant's notice carrying the signed link (in-app and e-mail, in their
    language). Returns the survey written, None when the ticket was asked before. Runs in
    the completion's transaction (ticket_complete holds the ticket's row lock)."""
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(
                ASK_SQL,
                {
                    "ticket": ticket.pk,
                    "applicant": ticket.creator_id,
                    "handler": ticket.handler_id,
                    "group": ticket.handler_group_id,
                    "asked": now,
                    "expires": now + SURVEY_VALID_FOR,
                },
            )
            row = cursor.fetchone()
        if row is None:
            return None
        survey = Survey(
            pk=row[0],
            ticket_id=ticket.pk,
            applicant_id=ticket.creator_id,
            handler_id=ticket.handler_id,
            handler_group_id=ticket.handler_group_id,
            asked=now,
            expires=now + SURVEY_VALID_FOR,
        )
        _notify(
            recipients=[ticket.creator_id],
            template_code="ticket-survey",
            params={
                "billCode": ticket.bill_code,
                "title": ticket.title,
                "ticketId": ticket.pk,
                "days": SURVEY_VALID_FOR.days,
                "link": survey_url(survey),
            },
            dedupe_key=f"ticket:{ticket.pk}:survey",
            ticket_id=ticket.pk,
            now=now,
        )
    return survey


def validate_answer(*, rating: object, comment: str) -> int:
    """The rating as an int, or InvalidArgument naming the field (rating outside 1–5, a
    comment over COMMENT_MAX characters)."""
    if isinstance(rating, bool) or not isinstance(rating, int):
        raise InvalidArgument("rating", _("Give a whole number from 1 to 5."))
    if not RATING_MIN <= rating <= RATING_MAX:
        raise InvalidArgument("rating", _("Give a whole number from 1 to 5."))
    if len(comment) > COMMENT_MAX:
        raise InvalidArgument(
            "comment",
            _("At most %(max)s characters (this one has %(n)s).")
            % {"max": COMMENT_MAX, "n": len(comment)},
        )
    return rating


def survey_answer(*, survey: Survey, rating: int, comment: str = "", now: datetime) -> Survey:
    """The applicant's answer, exactly once: a compare-and-set on the survey (unanswered and
    not expired) with the ticket's "rated" record; a rating of 1–2 tells the leader of the
    group it rates. 400 (InvalidArgument) for a bad rating or comment, 409 when answered
    already (SurveyAnswered, also for the loser of two parallel answers: the UPDATE takes
    the survey's row lock and the second re-checks `rating IS NULL` after the first
    commits) or expired (SurveyExpired); nothing changes then."""
    rating = validate_answer(rating=rating, comment=comment)
    comment = comment.strip()
    with transaction.atomic():
        answered = Survey.objects.filter(pk=survey.pk, rating__isnull=True, expires__gt=now).update(
            rating=rating, comment=comment, answered=now
        )
        if not answered:
            current = Survey.objects.filter(pk=survey.pk).values_list("rating", flat=True)
            if current.first() is not None:
                raise SurveyAnswered()
            raise SurveyExpired()
        survey.rating, survey.comment, survey.answered = rating, comment, now
        record(
            ticket_id=survey.ticket_id,
            action="rated",
            actor_id=survey.applicant_id,
            now=now,
            detail={"rating": rating},
        )
        if rating <= LOW_RATING_MAX:
            _alert_leader(survey, now=now)
    return survey


def _alert_leader(survey: Survey, *, now: datetime) -> None:
    """The low rating, to the leader of the group the survey rates (in-app and e-mail, in
    their language). A survey of no group, or of a group without a leader, tells nobody:
    the rating is on the ticket and in the figures, and staff read those."""
    if survey.handler_group_id is None:
        return
    group = (
        HandlerGroup.objects.filter(pk=survey.handler_group_id).values("leader_id", "name").first()
    )
    if group is None or group["leader_id"] is None:
        return
    if group["leader_id"] == survey.applicant_id:
        return  # a leader who rated their own group's help knows
    ticket = Ticket.objects.filter(pk=survey.ticket_id).values("bill_code", "title").get()
    handler = (
        survey.handler.get_username() if survey.handler_id and survey.handler else None
    ) or gettext_lazy("nobody")
    _notify(
        recipients=[group["leader_id"]],
        template_code="ticket-low-rating",
        params={
            "billCode": ticket["bill_code"],
            "title": ticket["title"],
            "ticketId": survey.ticket_id,
            "group": group["name"],
            "handler": handler,
            "rating": survey.rating,
            # The e-mail carries the comment itself (notifications/channels/email.py).
            "body": survey.comment,
        },
        dedupe_key=f"ticket:{survey.ticket_id}:low-rating",
        ticket_id=survey.ticket_id,
        now=now,
    )


def _notify(*, recipients, template_code: str, params: dict, dedupe_key: str, ticket_id, now):
    """notifications.send in the caller's transaction; a template problem (logged and
    counted by send) does not undo the survey (as ticketing.notify)."""
    try:
        send(
            recipients=recipients,
            template_code=template_code,
            params=params,
            dedupe_key=dedupe_key,
            ticket_id=ticket_id,
            now=now,
        )
    except TemplateError:
        logger.warning(
            "notification not sent", extra={"ticket_id": ticket_id, "template": template_code}
        )
