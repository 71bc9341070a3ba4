"""Query and response of GET /api/metrics/queue/ (routing/queue_metrics.py computes it)."""

from datetime import datetime, time, timedelta

from django.utils import timezone
from django.utils.translation import gettext as _
from rest_framework import serializers

from sla.serializers import DayOrDateTimeField

from .queue_metrics import BUCKETS as QUEUE_BUCKETS

# The longest range per bucket size: a month of hours, a year of days.
QUEUE_RANGE_LIMIT_DAYS = {"hour": 31, "day": 366}


class QueueMetricsQuery(serializers.Serializer):
    """One group's queue metrics per hour or day over [from, to), widened to whole buckets."""

    group = serializers.IntegerField(min_value=1, help_text="The handler group's id.")
    to = DayOrDateTimeField(
        end_of_range=True,
        required=False,
        help_text="End of the range (exclusive; a date includes that day). Default: the end "
        "of today.",
    )
    bucket = serializers.ChoiceField(
        choices=list(QUEUE_BUCKETS), default="hour", help_text="hour (default) or day."
    )

    def validate(self, attrs):
        # A bad range is reported on the bound the caller gave last: `to`, or `from` alone.
        blame = "to" if "to" in attrs or "from" not in attrs else "from"
        if "to" not in attrs:
            attrs["to"] = timezone.make_aware(
                datetime.combine(timezone.localdate() + timedelta(days=1), time.min)
            )
        limit = QUEUE_RANGE_LIMIT_DAYS[attrs["bucket"]]
        if "from" not in attrs:
            back = timedelta(days=1 if attrs["bucket"] == "hour" else 7)
            try:
                attrs["from"] = timezone.localtime(attrs["to"]) - back
            except OverflowError:
                raise serializers.ValidationError({"to": [_("Out of range.")]}) from None
        if attrs["from"] >= attrs["to"]:
            message = _("Must be after 'from'.") if blame == "to" else _("Must be before 'to'.")
            raise serializers.ValidationError({blame: [message]})
        # Wall-clock days (one tzinfo on both sides): a daylight-saving change does not count.
        if timezone.localtime(attrs["to"]) - timezone.localtime(attrs["from"]) > timedelta(
            days=limit
        ):
            raise serializers.ValidationError(
                {
                    blame: [
                        _("At most %(limit)s days from 'from' to 'to' with %(bucket)s buckets.")
                        % {"limit": limit, "bucket": attrs["bucket"]}
                    ]
                }
            )
        return attrs


# "from" is a Python keyword: declare the field under its query-string name.
QueueMetricsQuery._declared_fields["from"] = DayOrDateTimeField(
    required=False,
    help_text="Start of the range (a date: that day's start). Default: a day (hour buckets) "
    "or a week (day buckets) before 'to'.",
)


class QueueAgentMetrics(serializers.Serializer):
    user_id = serializers.IntegerField()
    username = serializers.CharField(allow_null=True)
    assigned = serializers.IntegerField(help_text="The group's assignments to them.")
    occupancy = serializers.FloatField(
        allow_null=True,
        help_text="Time with at least one accepted ticket ÷ time available (0..1); null when "
        "nothing of the bucket was available.",
    )


class QueueBucket(serializers.Serializer):
    start = serializers.DateTimeField()
    arrivals = serializers.IntegerField(help_text="Tickets approved into the group.")
    assigned = serializers.IntegerField(help_text="The group's assignment events.")
    time_to_assign_p50_seconds = serializers.FloatField(
        allow_null=True, help_text="Approval → first assignment, of the bucket's arrivals."
    )
    time_to_assign_p95_seconds = serializers.FloatField(allow_null=True)
    time_to_accept_p50_seconds = serializers.FloatField(
        allow_null=True, help_text="First assignment → first acceptance, of the arrivals."
    )
    time_to_accept_p95_seconds = serializers.FloatField(allow_null=True)
    abandoned = serializers.IntegerField(help_text="Arrivals closed without ever being accepted.")
    service_level = serializers.FloatField(
        allow_null=True,
        help_text="Share of the arrivals assigned within target_answer_seconds (0..1).",
    )
    agents = QueueAgentMetrics(many=True)
    assigned_stddev = serializers.FloatField(
        allow_null=True, help_text="Population standard deviation of the agents' counts."
    )


class QueueMetricsOutput(serializers.Serializer):
    group = serializers.IntegerField()
    bucket = serializers.ChoiceField(choices=list(QUEUE_BUCKETS))
    target_answer_seconds = serializers.IntegerField()
    occupancy_basis = serializers.ChoiceField(
        choices=["presence", "bucket"],
        help_text="presence (a group routing by presence): time available is the agents' "
        "recorded presence (available, wrap-up); bucket (any other group): the whole bucket "
        "up to now.",
    )
    buckets = QueueBucket(many=True)
