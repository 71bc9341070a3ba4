import re
from datetime import date, datetime, time, timedelta

from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from handler_groups.models import HandlerGroup
from notifications.models import NotifyTemplate
from ticketing.tags import TAG_MAX_LENGTH

from . import ladder
from .models import Calendar, Clock, RuleStatus, SlaRule, Trigger
from .reports import GROUPINGS
from .rules import RULE_FIELDS

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
    """Tickets whose SLA outcome was finalised in [from, to) (completed, or closed unfinished,
    then); by default the last 30 days."""

    to = DayOrDateTimeField(end_of_range=True, required=False)
    group_by = serializers.ChoiceField(
        choices=[*GROUPINGS, *GROUP_BY_ALIASES], default="handler_group"
    )
    handler_group = serializers.IntegerField(min_value=1, required=False)
    priority = serializers.ChoiceField(choices=[1, 2, 3, 4], required=False)
    category = serializers.CharField(max_length=50, required=False)
    tag = serializers.CharField(
        max_length=TAG_MAX_LENGTH,
        required=False,
        help_text="Only tickets carrying this tag (any case). With group_by=tag a ticket "
        "counts under each of its tags; one without tags under the null key.",
    )

    def validate(self, attrs):
        attrs["group_by"] = GROUP_BY_ALIASES.get(attrs["group_by"], attrs["group_by"])
        if "to" not in attrs:
            attrs["to"] = timezone.now()
        if "from" not in attrs:
            try:
                attrs["from"] = attrs["to"] - timedelta(days=30)
            except OverflowError:
                raise serializers.ValidationError({"to": [_("Out of range.")]}) from None
        if attrs["from"] >= attrs["to"]:
            raise serializers.ValidationError({"to": [_("Must be after 'from'.")]})
        return attrs


# "from" is a Python keyword: declare the field under its query-string name.
ReportQuery._declared_fields["from"] = DayOrDateTimeField(required=False)


@extend_schema_field(
    {"oneOf": [{"type": "integer"}, {"type": "string"}], "nullable": True},
)
class GroupKeyField(serializers.JSONField):
    """A handler group, priority or handler id, a category or a tag."""


class ReportRow(serializers.Serializer):
    key = GroupKeyField(
        allow_null=True, help_text="The group_by value of this row (also under its own name)."
    )
    count = serializers.IntegerField(
        help_text=_(
            "Tickets whose SLA outcome was finalised in the range: completed, or closed "
            "before completion."
        )
    )
    closed_before_completion = serializers.IntegerField(
        help_text=_("Of those, tickets closed while still being handled.")
    )
    response_breaches = serializers.IntegerField(
        help_text=_(
            "Response clocks breached: answered late, or still unanswered past the deadline "
            "when the ticket was closed."
        )
    )
    response_breach_rate = serializers.FloatField(
        allow_null=True,
        help_text=_(
            "Breaches over the response clocks met or breached (closed before due and rules "
            "without the clock left out); null when there are none."
        ),
    )
    response_closed_before_due = serializers.IntegerField(
        help_text=_(
            "Response clocks still running and not yet due when the ticket was closed: "
            "neither met nor breached."
        )
    )
    response_merged = serializers.IntegerField(
        help_text=_(
            "Response clocks of duplicates merged into another ticket: neither met nor "
            "breached, left out of the rate."
        )
    )
    resolve_breaches = serializers.IntegerField(
        help_text=_(
            "Resolve clocks breached: completed late, or past the deadline when the ticket "
            "was closed unfinished."
        )
    )
    resolve_breach_rate = serializers.FloatField(
        allow_null=True,
        help_text=_(
            "Breaches over the resolve clocks met or breached (closed before due and rules "
            "without the clock left out); null when there are none."
        ),
    )
    resolve_closed_before_due = serializers.IntegerField(
        help_text=_(
            "Resolve clocks not yet due when the ticket was closed unfinished: neither met "
            "nor breached."
        )
    )
    resolve_merged = serializers.IntegerField(
        help_text=_(
            "Resolve clocks of duplicates merged into another ticket: neither met nor "
            "breached, left out of the rate."
        )
    )
    response_minutes_median = serializers.FloatField(
        allow_null=True,
        help_text=_("Business minutes; clocks cut short by a close before due left out."),
    )
    response_minutes_p90 = serializers.FloatField(allow_null=True)
    resolve_minutes_median = serializers.FloatField(
        allow_null=True,
        help_text=_("Business minutes; clocks cut short by a close before due left out."),
    )
    resolve_minutes_p90 = serializers.FloatField(allow_null=True)


class ReportOutput(serializers.Serializer):
    group_by = serializers.CharField()
    date_from = serializers.DateTimeField(source="from")
    date_to = serializers.DateTimeField(source="to")
    rows = ReportRow(many=True)


# Rules and their escalation ladders ----------------------------------------------------------

MAX_LEVELS = 20


@extend_schema_field(
    {
        "type": "array",
        "items": {"type": "string", "enum": list(ladder.NOTIFY_TARGETS)},
        "uniqueItems": True,
        "default": ["handler", "leader"],
    }
)
class NotifyField(serializers.ListField):
    """Who a level tells: distinct values among ladder.NOTIFY_TARGETS. One message per field,
    not one per list item."""

    def to_internal_value(self, data) -> list[str]:
        if isinstance(data, str) or not isinstance(data, list):
            self.fail("not_a_list", input_type=type(data).__name__)
        unknown = [v for v in data if not isinstance(v, str) or v not in ladder.NOTIFY_TARGETS]
        if unknown:
            raise serializers.ValidationError(
                _("Unknown notify target(s) %(unknown)s; known: %(known)s.")
                % {"unknown": unknown, "known": ", ".join(ladder.NOTIFY_TARGETS)}
            )
        repeated = sorted({v for v in data if data.count(v) > 1})
        if repeated:
            raise serializers.ValidationError(
                _("Notify targets must be unique; given more than once: %(repeated)s.")
                % {"repeated": repeated}
            )
        return list(data)


class LevelListSerializer(serializers.ListSerializer):
    """A ladder: its levels in order (position i+1 is the level at index i). Each level is
    validated on its own, complete (a PATCH replaces the whole ladder), and errors name the
    level's index and field as the queue-ranking errors do:
        {"code": "invalid_argument",
         "errors": {"levels": {"2": {"value": ["…"]}}}}
    Errors about the list as a whole (not a list, too long) are a list under "levels"."""

    def to_internal_value(self, data) -> list[dict]:
        if isinstance(data, str) or not isinstance(data, list):
            raise serializers.ValidationError(
                _('Expected a list of levels but got "%(type)s".') % {"type": type(data).__name__}
            )
        if len(data) > MAX_LEVELS:
            raise serializers.ValidationError(
                _("At most %(max)d levels per rule; got %(count)d.")
                % {"max": MAX_LEVELS, "count": len(data)}
            )
        parsed: dict[int, dict] = {}
        errors: dict[str, dict] = {}
        for index, item in enumerate(data):
            # A serializer of its own, not bound to the rule's: a partial update of the rule
            # must not make a level's fields optional.
            level = EscalationLevelSerializer(data=item)
            if level.is_valid():
                parsed[index] = dict(level.validated_data)
            else:
                errors[str(index)] = dict(level.errors)
        for index, problems in level_reference_errors(parsed).items():
            errors.setdefault(str(index), {}).update(problems)
        if errors:
            raise serializers.ValidationError({key: errors[key] for key in sorted(errors, key=int)})
        return [parsed[index] for index in range(len(data))]


def level_reference_errors(levels: dict[int, dict]) -> dict[int, dict[str, list[str]]]:
    """Levels naming a handler group that does not exist or is disabled, or a notification
    template that does not exist (two queries for the whole ladder)."""
    group_ids = {lv["reassign_group_id"] for lv in levels.values() if lv["reassign_group_id"]}
    groups = {g.pk: g for g in HandlerGroup.objects.filter(pk__in=group_ids).only("status")}
    codes = {lv["template_code"] for lv in levels.values() if lv["template_code"]}
    known = set(NotifyTemplate.objects.filter(code__in=codes).values_list("code", flat=True))
    errors: dict[int, dict[str, list[str]]] = {}
    for index, level in levels.items():
        problems = {}
        group_id = level["reassign_group_id"]
        if group_id is not None:
            if group_id not in groups:
                problems["reassign_group_id"] = [
                    _("No handler group with id %(id)s.") % {"id": group_id}
                ]
            elif not groups[group_id].is_enabled:
                problems["reassign_group_id"] = [
                    _(
                        "Handler group %(id)s is disabled; a level may only move tickets to "
                        "an enabled group."
                    )
                    % {"id": group_id}
                ]
        code = level["template_code"]
        if code and code not in known:
            problems["template_code"] = [
                _("No notification template with code %(code)s.") % {"code": repr(code)}
            ]
        if problems:
            errors[index] = problems
    return errors


class EscalationLevelSerializer(serializers.Serializer):
    """One step of a rule's ladder on one clock: when (`trigger` and `value`) and what
    happens (who is told with which template; optionally a move to another group and a raise
    in priority)."""

    id = serializers.IntegerField(read_only=True)
    position = serializers.IntegerField(
        read_only=True,
        help_text="Order in the ladder, from 1: the level's place in the list. Read-only; "
        "ignored if sent.",
    )
    clock = serializers.ChoiceField(choices=Clock.choices)
    trigger = serializers.ChoiceField(
        choices=Trigger.choices,
        help_text="percent_elapsed: when `value` % of the clock's budget has run (business "
        "time, pauses excluded); minutes_before / minutes_after: `value` minutes before / "
        "after the clock's deadline.",
    )
    value = serializers.DecimalField(
        max_digits=8,
        decimal_places=2,
        min_value=0,
        help_text="percent_elapsed: more than 0 and at most 200; minutes: at least 0.",
    )
    notify = NotifyField(
        child=serializers.CharField(),
        default=["handler", "leader"],
        help_text="Who is told (the approvers when the ticket has neither handler nor leader).",
    )
    template_code = serializers.CharField(
        max_length=64,
        allow_blank=True,
        default="",
        help_text="An existing notification template's code; empty: the warning template "
        "before the deadline, the timeout one after.",
    )
    reassign_group_id = serializers.IntegerField(
        allow_null=True,
        default=None,
        min_value=1,
        help_text="Move the ticket to this handler group (existing and enabled).",
    )
    raise_priority = serializers.BooleanField(default=False)

    class Meta:
        list_serializer_class = LevelListSerializer

    def validate(self, attrs):
        value = attrs["value"]
        if attrs["trigger"] == ladder.PERCENT_ELAPSED and not 0 < value <= 200:
            raise serializers.ValidationError(
                {"value": [_("A percentage of the clock must be more than 0 and at most 200.")]}
            )
        if attrs["trigger"] != ladder.PERCENT_ELAPSED and value < 0:
            raise serializers.ValidationError({"value": [_("Minutes must be at least 0.")]})
        return attrs


@extend_schema_field({"type": "integer", "enum": [0, 1]})
class RuleStatusField(serializers.ChoiceField):
    """Inline in the schema: the handler groups' identical 0/1 choice set keeps its own
    enum component name (HandlerGroupStatusEnum)."""


class SlaRuleSerializer(serializers.ModelSerializer):
    """A rule and its escalation ladder. Without `levels` a new rule gets the default ladder
    (warn `warn_before_minutes` before each deadline, time out at each deadline) and an
    update keeps the ladder it has; `levels` replaces the whole ladder ([]: none)."""

    calendar_id = serializers.IntegerField(
        allow_null=True, required=False, min_value=1, help_text="Business hours; empty = 24×7."
    )
    status = RuleStatusField(
        choices=RuleStatus.choices, default=RuleStatus.ENABLED, help_text="0 disabled, 1 enabled."
    )
    levels = EscalationLevelSerializer(
        many=True,
        required=False,
        max_length=MAX_LEVELS,  # type: ignore[call-arg]  # ListSerializer takes it
        help_text=f"The ladder in order (at most {MAX_LEVELS} levels); positions follow the "
        "list. Absent: a new rule gets the default ladder, an update keeps the ladder.",
    )

    class Meta:
        model = SlaRule
        fields = ["id", *RULE_FIELDS, "levels"]
        read_only_fields = ["id"]
        extra_kwargs = {
            "response_hours": {"min_value": 0},
            "resolve_hours": {"min_value": 0},
            "sort": {"min_value": -(2**31), "max_value": 2**31 - 1},
        }

    def validate_calendar_id(self, calendar_id: int | None) -> int | None:
        if calendar_id is not None and not Calendar.objects.filter(pk=calendar_id).exists():
            raise serializers.ValidationError(
                _("No calendar with id %(id)s.") % {"id": calendar_id}
            )
        return calendar_id


class RecomputeQuery(serializers.Serializer):
    dry_run = serializers.BooleanField(
        default=False,
        help_text="1 or true: only report what would change; 0, false or absent: apply it.",
    )


def _from_to(name: str, make_field, doc: str) -> type[serializers.Serializer]:
    # "from" is a Python keyword: the class is built from a dict of its fields.
    return type(
        name,
        (serializers.Serializer,),
        {"__module__": __name__, "__doc__": doc, "from": make_field(), "to": make_field()},
    )


RuleChange = _from_to(
    "RuleChange",
    lambda: serializers.IntegerField(allow_null=True),
    "The ticket's rule before and after re-matching.",
)
DeadlineChange = _from_to(
    "DeadlineChange",
    lambda: serializers.DateTimeField(allow_null=True),
    "A deadline before and after the recompute.",
)


class PlannedLevel(serializers.Serializer):
    clock = serializers.ChoiceField(choices=Clock.choices)
    level = serializers.IntegerField(help_text="The level's position in the ladder.")
    due_at = serializers.DateTimeField(
        allow_null=True, help_text="Null while the clock is paused with budget left."
    )


class RecomputeChange(serializers.Serializer):
    ticket_id = serializers.IntegerField()
    bill_code = serializers.CharField()
    rule_id = RuleChange()
    response_deadline = DeadlineChange()
    resolve_deadline = DeadlineChange()
    newly_breached = serializers.BooleanField()
    levels = PlannedLevel(
        many=True, help_text="The ticket's pending levels after the recompute (not yet fired)."
    )


class RecomputeOutput(serializers.Serializer):
    dry_run = serializers.BooleanField(help_text="True: nothing was written.")
    examined = serializers.IntegerField(help_text="Open approved tickets on the rule.")
    moved = serializers.IntegerField(help_text="Tickets whose deadlines or rule change.")
    events_changed = serializers.IntegerField(
        help_text="Tickets whose pending escalation levels are re-timed."
    )
    newly_breached = serializers.IntegerField(
        help_text="Tickets past a deadline now that were not before."
    )
    changes = RecomputeChange(many=True, help_text="One entry per ticket that changes.")
