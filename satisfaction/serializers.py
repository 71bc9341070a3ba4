"""The rating API's shapes; satisfaction.services decides."""

from rest_framework import serializers

from .models import COMMENT_MAX, RATING_MAX, RATING_MIN, Survey


class SatisfactionInput(serializers.Serializer):
    rating = serializers.IntegerField(
        min_value=RATING_MIN, max_value=RATING_MAX, help_text="1 (very poor) to 5 (very good)."
    )
    comment = serializers.CharField(
        max_length=COMMENT_MAX,
        required=False,
        allow_blank=True,
        default="",
        trim_whitespace=False,
        help_text="What the applicant wants to say about the help, at most 2,000 characters.",
    )


class SurveyOutput(serializers.ModelSerializer):
    ticket_id = serializers.IntegerField(read_only=True)
    rating = serializers.IntegerField(
        read_only=True, allow_null=True, help_text="1–5; null until answered."
    )

    class Meta:
        model = Survey
        fields = ["id", "ticket_id", "asked", "expires", "rating", "comment", "answered"]
        read_only_fields = fields


class TicketSatisfactionOutput(serializers.Serializer):
    """A ticket's rating as its ticket shows it (workflow.serializers.TicketOutput)."""

    rating = serializers.IntegerField(allow_null=True, help_text="1–5; null until answered.")
    comment = serializers.CharField(allow_blank=True)
    answered = serializers.DateTimeField(allow_null=True)
