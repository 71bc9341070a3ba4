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


class DecisionMemberOutput(serializers.Serializer):
    user_id = serializers.IntegerField()
    username = serializers.CharField()
    state = serializers.CharField()
    active = serializers.IntegerField()
    max_active = serializers.IntegerField(allow_null=True)
    open_offers = serializers.IntegerField(required=False)
    online_since = serializers.DateTimeField(allow_null=True, required=False)
    idle_since = serializers.DateTimeField(allow_null=True)
    assigned_today = serializers.IntegerField()
    eligible = serializers.BooleanField()
    reason = serializers.CharField(allow_null=True, help_text="null when eligible")
    why = serializers.CharField(help_text="This member's line in plain words")


class RoutingDecisionOutput(serializers.Serializer):
    created = serializers.DateTimeField()
    trigger = serializers.CharField()
    group_id = serializers.IntegerField(allow_null=True)
    group_name = serializers.CharField(allow_null=True)
    strategy = serializers.IntegerField()
    strategy_label = serializers.CharField()
    outcome = serializers.CharField()
    chosen_id = serializers.IntegerField(allow_null=True)
    chosen_username = serializers.CharField(allow_null=True)
    headline = serializers.CharField()
    members = DecisionMemberOutput(many=True)
    summary = serializers.CharField(help_text='"Why this agent?" in plain words')
