from django.utils.translation import gettext as _
from rest_framework import serializers

from .scenarios import MAX_RECORDED_DAYS, ParamsError, parse_synthetic
from .simulator import SIMULATED_STRATEGIES


class SimulationInput(serializers.Serializer):
    """Either a group's record between two dates (group, from, to) or a synthetic day
    (synthetic); strategies and seed for both."""

    group = serializers.IntegerField(
        min_value=1, required=False, help_text="The handler group whose record is replayed."
    )
    to = serializers.DateField(required=False, help_text="Last day replayed (inclusive).")
    synthetic = serializers.DictField(
        required=False,
        help_text='A synthetic day instead of a record, e.g. {"agents": 4, "calls": 80, '
        '"hours": 8, "aht": 300, "wrap_up": 60}; keys as `simulate_routing --synthetic`.',
    )
    strategies = serializers.ListField(
        child=serializers.ChoiceField(choices=list(SIMULATED_STRATEGIES)),
        min_length=1,
        max_length=len(SIMULATED_STRATEGIES),
        required=False,
        help_text="Strategy codes (1 round robin, 2 least load, 3 online priority, "
        "4 longest idle); default all four.",
    )
    seed = serializers.IntegerField(min_value=0, max_value=2**31 - 1, default=0)
    response_budget_seconds = serializers.FloatField(
        min_value=1,
        required=False,
        help_text="Recorded mode: one response budget for every ticket instead of each "
        "ticket's SLA rule.",
    )

    def validate_strategies(self, value):
        if len(set(value)) != len(value):
            raise serializers.ValidationError(_("Each strategy at most once."))
        return value

    def validate_synthetic(self, value):
        try:
            parse_synthetic(value)
        except ParamsError as exc:
            raise serializers.ValidationError(
                [
                    _("%(key)s: %(message)s") % {"key": key, "message": message}
                    for key, message in exc.errors.items()
                ]
            ) from None
        return value

    def validate(self, attrs):
        if "synthetic" in attrs:
            extra = [f for f in ("group", "from", "to", "response_budget_seconds") if f in attrs]
            if extra:
                raise serializers.ValidationError(
                    {f: [_("Not with a synthetic simulation.")] for f in extra}
                )
            return attrs
        missing = [f for f in ("group", "from", "to") if f not in attrs]
        if missing:
            raise serializers.ValidationError(
                {f: [_("Required (or give `synthetic` instead).")] for f in missing}
            )
        if attrs["from"] > attrs["to"]:
            raise serializers.ValidationError({"to": [_("Must not be before 'from'.")]})
        if (attrs["to"] - attrs["from"]).days + 1 > MAX_RECORDED_DAYS:
            raise serializers.ValidationError(
                {"to": [_("At most %(days)s days from 'from'.") % {"days": MAX_RECORDED_DAYS}]}
            )
        return attrs


# "from" is a Python keyword: declare the field under its JSON name.
SimulationInput._declared_fields["from"] = serializers.DateField(
    required=False, help_text="First day replayed."
)


class SimulationOutput(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()
    params = serializers.JSONField()
    result = serializers.JSONField(allow_null=True)
    error = serializers.CharField(allow_blank=True)


class SimulationQueued(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()
