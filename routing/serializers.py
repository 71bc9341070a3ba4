from django.utils.translation import gettext as _
from rest_framework import serializers

from . import erlang
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
            raise serializers.ValidationError(_("Out of range."))
        return value


class AgentMetrics(serializers.Serializer):
    user_id = serializers.IntegerField()
    username = serializers.CharField(allow_null=True)
    assigned = serializers.IntegerField()
    missed = serializers.IntegerField()
    declined = serializers.IntegerField()


class MetricsOutput(serializers.Serializer):
    group = serializers.IntegerField()
    date = serializers.DateField()
    agents = AgentMetrics(many=True)
    assigned = serializers.IntegerField()
    missed = serializers.IntegerField()
    declined = serializers.IntegerField()
    overflowed = serializers.IntegerField()
    reclaimed_then_assigned = serializers.IntegerField()
    stddev_assigned = serializers.FloatField(allow_null=True)
    pick_ms_p50 = serializers.FloatField(allow_null=True)
    pick_ms_p95 = serializers.FloatField(allow_null=True)


def _above(limit: float, value: float) -> float:
    if value <= limit:
        raise serializers.ValidationError(_("Must be greater than %(limit)s.") % {"limit": limit})
    return value


def _below(limit: float, value: float) -> float:
    if value >= limit:
        raise serializers.ValidationError(_("Must be less than %(limit)s.") % {"limit": limit})
    return value


class ErlangCQuery(serializers.Serializer):
    """The Erlang C calculator's inputs (query parameters); defaults in routing/erlang.py."""

    arrivals = serializers.FloatField(
        min_value=0, max_value=10_000_000, help_text="Arrivals in the interval (may be a mean)."
    )
    aht_seconds = serializers.FloatField(
        max_value=30 * 86400, help_text="Average handle time in seconds; greater than 0."
    )
    interval_minutes = serializers.FloatField(
        default=erlang.DEFAULT_INTERVAL_MINUTES,
        max_value=1440,
        help_text="Length of the interval the arrivals fall in, in minutes; greater than 0.",
    )
    target_seconds = serializers.FloatField(
        default=erlang.DEFAULT_TARGET_SECONDS,
        min_value=0,
        max_value=30 * 86400,
        help_text="Service-level answer time in seconds.",
    )
    service_level = serializers.FloatField(
        default=erlang.DEFAULT_SERVICE_LEVEL,
        help_text="Share to answer within target_seconds; strictly between 0 and 1.",
    )
    shrinkage = serializers.FloatField(
        default=erlang.DEFAULT_SHRINKAGE,
        min_value=0,
        help_text="Share of paid time not available to take work; at least 0, less than 1.",
    )
    max_occupancy = serializers.FloatField(
        default=erlang.DEFAULT_MAX_OCCUPANCY,
        max_value=1,
        help_text="Occupancy cap (traffic ÷ agents); greater than 0, at most 1.",
    )

    def validate_aht_seconds(self, value):
        return _above(0, value)

    def validate_interval_minutes(self, value):
        return _above(0, value)

    def validate_service_level(self, value):
        return _below(1, _above(0, value))

    def validate_shrinkage(self, value):
        return _below(1, value)

    def validate_max_occupancy(self, value):
        return _above(0, value)

    def validate(self, attrs):
        load = erlang.traffic(attrs["arrivals"], attrs["interval_minutes"], attrs["aht_seconds"])
        if load > erlang.MAX_TRAFFIC_ERLANGS:
            message = _("Traffic over %(max)s Erlangs is not supported.") % {
                "max": erlang.MAX_TRAFFIC_ERLANGS
            }
            raise serializers.ValidationError({"arrivals": [message], "aht_seconds": [message]})
        return attrs


class ErlangCOutput(serializers.Serializer):
    raw_agents = serializers.IntegerField(
        help_text="Smallest number of agents meeting the service level and the occupancy cap."
    )
    agents = serializers.IntegerField(
        help_text="raw_agents grossed up for shrinkage: ceil(raw_agents / (1 − shrinkage))."
    )
    service_level = serializers.FloatField(help_text="Service level at raw_agents.")
    occupancy = serializers.FloatField(help_text="Occupancy at raw_agents.")
    probability_of_waiting = serializers.FloatField(help_text="Erlang C at raw_agents.")
    asa_seconds = serializers.FloatField(help_text="Average speed of answer at raw_agents.")


class StaffingQuery(serializers.Serializer):
    group = serializers.IntegerField(min_value=1)
    date = serializers.DateField(required=False, help_text="A local date; default today.")

    def validate_date(self, value):
        if value.year < 2000 or value.year > 9000:
            raise serializers.ValidationError(_("Out of range."))
        return value


class StaffingHour(serializers.Serializer):
    hour = serializers.IntegerField()
    start = serializers.DateTimeField()
    forecast_arrivals = serializers.FloatField()
    traffic_erlangs = serializers.FloatField()
    aht_seconds = serializers.FloatField()
    required_agents = serializers.IntegerField(allow_null=True)
    available_agents = serializers.FloatField(
        allow_null=True, help_text="Average members available over the hour; null if ahead."
    )
    gap = serializers.FloatField(allow_null=True, help_text="available − required.")


class StaffingOutput(serializers.Serializer):
    group = serializers.IntegerField()
    date = serializers.DateField()
    time_zone = serializers.CharField()
    weeks = serializers.IntegerField()
    interval_minutes = serializers.IntegerField()
    target_answer_seconds = serializers.IntegerField()
    service_level_target = serializers.FloatField()
    max_occupancy = serializers.FloatField()
    aht_seconds = serializers.FloatField()
    aht_measured = serializers.BooleanField(
        help_text="False when the group completed nothing in the weeks: aht_seconds is a default."
    )
    aht_sample = serializers.IntegerField()
    hours = StaffingHour(many=True)


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
