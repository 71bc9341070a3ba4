from rest_framework import serializers

from .reports import GROUPINGS


class ReportQuery(serializers.Serializer):
    # "from" is a Python keyword: the field is declared under its query-string name below.
    to = serializers.DateTimeField()
    group_by = serializers.ChoiceField(choices=list(GROUPINGS), default="handler_group")
    handler_group = serializers.IntegerField(min_value=1, required=False)
    priority = serializers.ChoiceField(choices=[1, 2, 3, 4], required=False)
    category = serializers.CharField(max_length=50, required=False)

    def validate(self, attrs):
        if attrs["from"] >= attrs["to"]:
            raise serializers.ValidationError({"to": ["Must be after 'from'."]})
        return attrs


ReportQuery._declared_fields["from"] = serializers.DateTimeField()


class ReportRow(serializers.Serializer):
    key = serializers.CharField(allow_null=True, help_text="The group_by value of this row.")
    tickets = serializers.IntegerField()
    response_breaches = serializers.IntegerField()
    response_breach_rate = serializers.FloatField(allow_null=True)
    resolve_breaches = serializers.IntegerField()
    resolve_breach_rate = serializers.FloatField(allow_null=True)
    response_minutes_p50 = serializers.FloatField(allow_null=True)
    response_minutes_p90 = serializers.FloatField(allow_null=True)
    resolve_minutes_p50 = serializers.FloatField(allow_null=True)
    resolve_minutes_p90 = serializers.FloatField(allow_null=True)


class ReportOutput(serializers.Serializer):
    group_by = serializers.CharField()
    rows = ReportRow(many=True)
