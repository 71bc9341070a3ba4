from django.contrib.auth import get_user_model
from rest_framework import serializers

from .models import GroupStatus, HandlerGroup, assign_strategy_choices


class HandlerGroupSerializer(serializers.ModelSerializer):
    """Members travel as a list of user ids; the comma-separated column is never exposed."""

    member_ids = serializers.ListField(
        child=serializers.IntegerField(min_value=1), allow_empty=True, max_length=500
    )
    leader_id = serializers.IntegerField(required=False, allow_null=True, min_value=1)
    assign_strategy = serializers.ChoiceField(choices=[])
    status = serializers.ChoiceField(choices=GroupStatus.choices, default=GroupStatus.ENABLED)

    class Meta:
        model = HandlerGroup
        fields = [
            "id",
            "name",
            "leader_id",
            "member_ids",
            "assign_strategy",
            "last_assign_index",
            "status",
        ]
        read_only_fields = ["id", "last_assign_index"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["assign_strategy"].choices = assign_strategy_choices()

    def validate_member_ids(self, ids: list[int]) -> list[int]:
        if len(set(ids)) != len(ids):
            raise serializers.ValidationError("Member ids must be unique.")
        found = set(get_user_model().objects.filter(pk__in=ids).values_list("pk", flat=True))
        missing = [i for i in ids if i not in found]
        if missing:
            raise serializers.ValidationError(f"No user with id(s) {missing}.")
        return ids

    def validate_leader_id(self, leader_id: int | None) -> int | None:
        if leader_id is not None and not get_user_model().objects.filter(pk=leader_id).exists():
            raise serializers.ValidationError(f"No user with id {leader_id}.")
        return leader_id


class PresenceStateInput(serializers.Serializer):
    state = serializers.ChoiceField(choices=["offline", "available", "busy", "wrap_up"])


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
