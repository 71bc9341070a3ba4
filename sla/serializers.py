import re
from datetime import date, datetime, time, timedelta

from django.utils import timezone
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from .reports import GROUPINGS

# "group" is how the report's consumers say handler_group.
GROUP_BY_ALIASES = {"group": "handler_group"}
_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@extend_schema_field(
    {
        "type": "string",
        "description": "YYYY-MM-DD or an ISO-8601 date-time",
        "example": "2026-03-31",
    }
)
class DayOrDateTimeField(serializers.DateTimeField):
    """A date-time, or a plain date meaning the start of that day — or, for the end of a
    range, the whole of that day (to=2026-03-31 includes March 31)."""

    def __init__(self, *, end_of_range: bool = False, **kwargs):
        self.end_of_range = end_of_range
        super().__init__(**kwargs)

    def to_internal_value(self, value):
        if isinstance(value, str) and _DATE_ONLY.match(value.strip()):
            try:
                day = date.fromisoformat(value.strip())
            except ValueError:
                self.fail("invalid", format="YYYY-MM-DD or ISO-8601")
            try:
                moment = timezone.make_aware(datetime.combine(day, time.min))
                return moment + timedelta(days=1) if self.end_of_range else moment
            except OverflowError:
                self.fail("invalid", format="a date between years 1 and 9999")
        return super().to_internal_value(value)


class ReportQuery(serializers.Serializer):
    """Tickets completed in [from, to); by default the last 30 days."""

    to = DayOrDateTimeField(end_of_range=True, required=False)
    group_by = serializers.ChoiceField(
        choices=[*GROUPINGS, *GROUP_BY_ALIASES], default="handler_group"
    )
    handler_group = serializers.IntegerField(min_value=1, required=False)
    priority = serializers.ChoiceField(choices=[1, 2, 3, 4], required=False)
    category = serializers.CharField(max_length=50, required=False)

    def validate(self, attrs):
        attrs["group_by"] = GROUP_BY_ALIASES.get(attrs["group_by"], attrs["group_by"])
        if "to" not in attrs:
            attrs["to"] = timezone.now()
        if "from" not in attrs:
            try:
                attrs["from"] = attrs["to"] - timedelta(days=30)
            except OverflowError:
                raise serializers.ValidationError({"to": ["Out of range."]}) from None
        if attrs["from"] >= attrs["to"]:
            raise serializers.ValidationError({"to": ["Must be after 'from'."]})
        return attrs


# "from" is a Python keyword: declare the field under its query-string name.
ReportQuery._declared_fields["from"] = DayOrDateTimeField(required=False)


@extend_schema_field(
    {"oneOf": [{"type": "integer"}, {"type": "string"}], "nullable": True},
)
class GroupKeyField(serializers.JSONField):
    """A handler group, priority or handler id, or a category."""


class ReportRow(serializers.Serializer):
    key = GroupKeyField(
        allow_null=True, help_text="The group_by value of this row (also under its own name)."
    )
    count = serializers.IntegerField(help_text="Tickets completed in the range.")
    response_breaches = serializers.IntegerField()
    response_breach_rate = serializers.FloatField(allow_null=True)
    resolve_breaches = serializers.IntegerField()
    resolve_breach_rate = serializers.FloatField(allow_null=True)
    response_minutes_median = serializers.FloatField(allow_null=True)
    response_minutes_p90 = serializers.FloatField(allow_null=True)
    resolve_minutes_median = serializers.FloatField(allow_null=True)
    resolve_minutes_p90 = serializers.FloatField(allow_null=True)


class ReportOutput(serializers.Serializer):
    group_by = serializers.CharField()
    date_from = serializers.DateTimeField(source="from")
    date_to = serializers.DateTimeField(source="to")
    rows = ReportRow(many=True)
