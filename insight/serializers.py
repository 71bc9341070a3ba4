from datetime import datetime, time, timedelta

from django.utils import timezone
from django.utils.translation import gettext as _
from rest_framework import serializers

from satisfaction.selectors import BUCKETS as SATISFACTION_BUCKETS
from sla.serializers import DayOrDateTimeField

from . import erlang
from .queue_figures import BUCKETS as QUEUE_BUCKETS
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


class GroupDayQuery(serializers.Serializer):
    """One group and one local day (default today): the figures' and staffing's query."""

    group = serializers.IntegerField(min_value=1)
    date = serializers.DateField(required=False, help_text="A local date; default today.")

    def validate_date(self, value):
        if value.year < 2000 or value.year > 9000:
            raise serializers.ValidationError(_("Out of range."))
        return value


class MetricsQuery(GroupDayQuery):
    pass


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
    """The Erlang C calculator's inputs (query parameters); defaults in insight/erlang.py."""

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


class StaffingQuery(GroupDayQuery):
    pass


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


def checked_range(attrs: dict, *, default_back: timedelta, limit_days: dict[str, int]) -> dict:
    """A metrics query's [from, to): `to` defaults to the end of today, `from` to
    `default_back` before `to`; `from` must come first, and the range span at most
    `limit_days[bucket]` wall-clock days (one tzinfo on both sides: a daylight-saving change
    does not count). A bad range is reported on the bound the caller gave last: `to`, or
    `from` alone."""
    blame = "to" if "to" in attrs or "from" not in attrs else "from"
    if "to" not in attrs:
        attrs["to"] = timezone.make_aware(
            datetime.combine(timezone.localdate() + timedelta(days=1), time.min)
        )
    if "from" not in attrs:
        try:
            attrs["from"] = timezone.localtime(attrs["to"]) - default_back
        except OverflowError:
            raise serializers.ValidationError({"to": [_("Out of range.")]}) from None
    if attrs["from"] >= attrs["to"]:
        message = _("Must be after 'from'.") if blame == "to" else _("Must be before 'to'.")
        raise serializers.ValidationError({blame: [message]})
    limit = limit_days[attrs["bucket"]]
    if timezone.localtime(attrs["to"]) - timezone.localtime(attrs["from"]) > timedelta(days=limit):
        raise serializers.ValidationError(
            {
                blame: [
                    _("At most %(limit)s days from 'from' to 'to' with %(bucket)s buckets.")
                    % {"limit": limit, "bucket": attrs["bucket"]}
                ]
            }
        )
    return attrs


# GET /api/metrics/queue/ (insight/queue_figures.py computes it).
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
    group_by = serializers.ChoiceField(
        choices=["tag"],
        required=False,
        help_text="tag: each bucket also gives its arrivals' figures per tag (`by_tag`).",
    )

    def validate(self, attrs):
        back = timedelta(days=1 if attrs["bucket"] == "hour" else 7)
        return checked_range(attrs, default_back=back, limit_days=QUEUE_RANGE_LIMIT_DAYS)


# "from" is a Python keyword: declare the field under its query-string name.
QueueMetricsQuery._declared_fields["from"] = DayOrDateTimeField(
    required=False,
    help_text="Start of the range (a date: that day's start). Default: a day (hour buckets) "
    "or a week (day buckets) before 'to'.",
)


class QueueAgentMetrics(serializers.Serializer):
    user_id = serializers.IntegerField()
    username = serializers.CharField(allow_null=True)
    assigned = serializers.IntegerField(
        help_text="The group's assignments to them, picks from its pool included."
    )
    occupancy = serializers.FloatField(
        allow_null=True,
        help_text="Time with at least one active ticket (assigned, not yet completed or "
        "closed) ÷ time available (0..1); null when nothing of the bucket was available.",
    )


class QueueTagFigures(serializers.Serializer):
    tag = serializers.CharField(
        allow_null=True, help_text="The tag; null for the arrivals carrying none."
    )
    arrivals = serializers.IntegerField(
        help_text="The bucket's arrivals carrying the tag (a ticket with two tags counts "
        "under both)."
    )
    time_to_assign_p50_seconds = serializers.FloatField(allow_null=True)
    time_to_assign_p95_seconds = serializers.FloatField(allow_null=True)
    time_to_accept_p50_seconds = serializers.FloatField(allow_null=True)
    time_to_accept_p95_seconds = serializers.FloatField(allow_null=True)
    abandoned = serializers.IntegerField()
    service_level = serializers.FloatField(allow_null=True)


class QueueBucket(serializers.Serializer):
    start = serializers.DateTimeField()
    arrivals = serializers.IntegerField(help_text="Tickets approved into the group.")
    assigned = serializers.IntegerField(
        help_text="The group's assignments: routing's, and picks from its pool."
    )
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
    by_tag = QueueTagFigures(
        many=True,
        required=False,
        help_text="With group_by=tag only: the arrivals' figures per tag, by tag (the "
        "untagged last). Assignments and occupancy are the agents' and are not split.",
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


# GET /api/metrics/satisfaction/ (satisfaction.selectors.satisfaction_figures computes it).
# The longest range per bucket size: a year of days, two years of weeks.
SATISFACTION_RANGE_LIMIT_DAYS = {"day": 366, "week": 731}
SATISFACTION_DEFAULT_DAYS = 30


class SatisfactionMetricsQuery(serializers.Serializer):
    """Surveys asked in [from, to), of one group or of every group the caller may read."""

    group = serializers.IntegerField(
        min_value=1,
        required=False,
        help_text="The handler group's id; default every group the caller leads (staff: "
        "every survey).",
    )
    to = DayOrDateTimeField(
        end_of_range=True,
        required=False,
        help_text="End of the range (exclusive; a date includes that day). Default: the end "
        "of today.",
    )
    bucket = serializers.ChoiceField(
        choices=list(SATISFACTION_BUCKETS), default="day", help_text="day (default) or week."
    )

    def validate(self, attrs):
        return checked_range(
            attrs,
            default_back=timedelta(days=SATISFACTION_DEFAULT_DAYS),
            limit_days=SATISFACTION_RANGE_LIMIT_DAYS,
        )


# "from" is a Python keyword: declare the field under its query-string name.
SatisfactionMetricsQuery._declared_fields["from"] = DayOrDateTimeField(
    required=False,
    help_text="Start of the range (a date: that day's start). Default: 30 days before 'to'.",
)


class SatisfactionFigures(serializers.Serializer):
    asked = serializers.IntegerField(help_text="Surveys asked (tickets completed).")
    responses = serializers.IntegerField(help_text="Surveys answered.")
    response_rate = serializers.FloatField(
        allow_null=True, help_text="responses ÷ asked (0..1); null when nobody was asked."
    )
    csat = serializers.FloatField(
        allow_null=True,
        help_text="Share of the responses rating 4 or 5 (0..1); null without responses.",
    )
    mean = serializers.FloatField(
        allow_null=True, help_text="Mean rating of the responses (1..5); null without any."
    )


class SatisfactionBucket(SatisfactionFigures):
    start = serializers.DateTimeField(help_text="The local day's or week's (Monday's) start.")


class SatisfactionAgent(serializers.Serializer):
    handler_id = serializers.IntegerField(
        allow_null=True, help_text="Who completed the tickets asked about."
    )
    username = serializers.CharField(allow_null=True)
    asked = serializers.IntegerField()
    responses = serializers.IntegerField()
    csat = serializers.FloatField(allow_null=True)
    mean = serializers.FloatField(allow_null=True)


class SatisfactionMetricsOutput(SatisfactionFigures):
    group = serializers.IntegerField(allow_null=True, help_text="The group asked for, or null.")
    groups = serializers.ListField(
        child=serializers.IntegerField(),
        allow_null=True,
        help_text="The groups counted; null for every survey (staff without `group`).",
    )
    bucket = serializers.ChoiceField(choices=list(SATISFACTION_BUCKETS))
    zone = serializers.CharField(help_text="The time zone the buckets are local days of.")
    buckets = SatisfactionBucket(many=True)
    agents = SatisfactionAgent(many=True)
