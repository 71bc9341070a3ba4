from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

RATING_MIN, RATING_MAX = 1, 5
COMMENT_MAX = 2000


class Survey(models.Model):
    """The applicant of a completed ticket, asked once how it went: written at the (first)
    completion, answered at most once (`rating` set by a compare-and-set). `handler` and
    `handler_group` are who completed it, kept so the figures do not move when the ticket
    is transferred later."""

    ticket = models.OneToOneField(
        "ticketing.Ticket",
        verbose_name=_("ticket"),
        on_delete=models.CASCADE,
        related_name="survey",
    )
    applicant = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("applicant"),
        on_delete=models.CASCADE,
        related_name="+",
        db_index=False,
    )
    handler = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("handler"),
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_index=False,
    )
    handler_group = models.ForeignKey(
        "handler_groups.HandlerGroup",
        verbose_name=_("handler group"),
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_index=False,  # survey_group_asked_idx leads with it
    )
    asked = models.DateTimeField(verbose_name=_("asked"))
    expires = models.DateTimeField(verbose_name=_("expires"))
    rating = models.PositiveSmallIntegerField(verbose_name=_("rating"), null=True, blank=True)
    comment = models.TextField(verbose_name=_("comment"), blank=True, default="")
    answered = models.DateTimeField(verbose_name=_("answered"), null=True, blank=True)

    class Meta:
        verbose_name = _("satisfaction survey")
        verbose_name_plural = _("satisfaction surveys")
        db_table = "oa_ticket_survey"
        ordering = ["-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(rating__isnull=True)
                | Q(rating__gte=RATING_MIN, rating__lte=RATING_MAX),
                name="survey_rating_range",
            ),
            models.CheckConstraint(
                condition=Q(rating__isnull=True, answered__isnull=True)
                | Q(rating__isnull=False, answered__isnull=False),
                name="survey_answered_with_rating",
            ),
        ]
        indexes = [
            # The figures: a group's (or everyone's) surveys asked in a window.
            models.Index(fields=["handler_group", "asked"], name="survey_group_asked_idx"),
            models.Index(fields=["asked"], name="survey_asked_idx"),
        ]

    def __str__(self) -> str:
        return f"survey of {self.ticket_id}"
