from rest_framework import serializers

from .presence import SETTABLE_STATES


class PresenceStateInput(serializers.Serializer):
    state = serializers.ChoiceField(choices=sorted(SETTABLE_STATES))


class PresenceOutput(serializers.Serializer):
    user_id = serializers.IntegerField()
    username = serializers.CharField()
    state = serializers.CharField()
    since = serializers.DateTimeField(allow_null=True)
    last_heartbeat = serializers.DateTimeField(allow_null=True)
    online_since = serializers.DateTimeField(allow_null=True)
    wrap_up_until = serializers.DateTimeField(allow_null=True)
    active_tickets = serializers.IntegerField()
    assignments_today = serializers.IntegerField()


class MetricsQuery(serializers.Serializer):
    group = serializers.IntegerField(min_value=1)
    date = serializers.DateField(required=False)

    def validate_date(self, value):
        if value.year < 2000 or value.year > 9000:
            raise serializers.ValidationError("Out of range.")
        return value


class AgentMetrics(serializers.Serializer):
    user_id = serializers.IntegerField()
    username = serializers.CharField(allow_null=True)
    assigned = serializers.IntegerField()
    missed = serializers.IntegerField()


class MetricsOutput(serializers.Serializer):
    group = serializers.IntegerField()
    date = serializers.DateField()
    agents = AgentMetrics(many=True)
    assigned = serializers.IntegerField()
    missed = serializers.IntegerField()
    overflowed = serializers.IntegerField()
    reclaimed_then_assigned = serializers.IntegerField()
    stddev_assigned = serializers.FloatField(allow_null=True)
    pick_ms_p50 = serializers.FloatField(allow_null=True)
    pick_ms_p95 = serializers.FloatField(allow_null=True)
