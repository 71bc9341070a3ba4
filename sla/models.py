from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class Calendar(models.Model):
    """Business hours: a timezone, weekly working windows (several per day allowed: split
    shifts, lunch breaks) and holiday dates."""

    name = models.CharField(max_length=100, unique=True)
    timezone = models.CharField(max_length=64, default="UTC")
    holiday_country = models.CharField(
        max_length=8, blank=True, default="", help_text="ISO code for importing public holidays."
    )
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "oa_sla_calendar"
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.timezone})"


class Weekday(models.IntegerChoices):
    MONDAY = 0, "Monday"
    TUESDAY = 1, "Tuesday"
    WEDNESDAY = 2, "Wednesday"
    THURSDAY = 3, "Thursday"
    FRIDAY = 4, "Friday"
    SATURDAY = 5, "Saturday"
    SUNDAY = 6, "Sunday"


class WorkingWindow(models.Model):
    calendar = models.ForeignKey(Calendar, on_delete=models.CASCADE, related_name="windows")
    weekday = models.PositiveSmallIntegerField(choices=Weekday.choices)
    start = models.TimeField()
    end = models.TimeField(help_text="00:00 means midnight at the end of the day (24:00).")

    class Meta:
        db_table = "oa_sla_working_window"
        ordering = ["weekday", "start"]

    def __str__(self) -> str:
        return f"{self.get_weekday_display()} {self.start:%H:%M}–{self.end:%H:%M}"


class Holiday(models.Model):
    calendar = models.ForeignKey(Calendar, on_delete=models.CASCADE, related_name="holidays")
    date = models.DateField()
    name = models.CharField(max_length=200, blank=True, default="")

    class Meta:
        db_table = "oa_sla_holiday"
        ordering = ["date"]
        constraints = [
            models.UniqueConstraint(fields=["calendar", "date"], name="holiday_once_per_date")
        ]

    def __str__(self) -> str:
        return f"{self.date} {self.name}"


class RuleStatus(models.IntegerChoices):
    DISABLED = 0, "disabled"
    ENABLED = 1, "enabled"


class SlaRule(models.Model):
    """Matched at approval: enabled rules by ascending sort; the first whose priority equals
    the ticket's (or is empty: any priority, for the fallback) and whose category is blank or
    equal wins."""

    name = models.CharField(max_length=200)
    priority = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        choices=[(1, "low"), (2, "medium"), (3, "high"), (4, "urgent")],
        help_text="Empty = any priority (meant for the catch-all fallback rule).",
    )
    category = models.CharField(max_length=50, blank=True, default="")
    response_hours = models.DecimalField(
        max_digits=8, decimal_places=2, null=True, blank=True, help_text="Empty or 0: no clock."
    )
    resolve_hours = models.DecimalField(
        max_digits=8, decimal_places=2, null=True, blank=True, help_text="Empty or 0: no clock."
    )
    warn_before_minutes = models.PositiveIntegerField(default=30)
    sort = models.IntegerField(default=100)
    status = models.PositiveSmallIntegerField(
        choices=RuleStatus.choices, default=RuleStatus.ENABLED
    )
    calendar = models.ForeignKey(
        Calendar,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="rules",
        help_text="Empty = 24×7.",
    )
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "oa_sla_rule"
        ordering = ["sort", "id"]
        indexes = [models.Index(fields=["status", "sort"], name="sla_rule_match_idx")]

    def __str__(self) -> str:
        return self.name


class Clock(models.TextChoices):
    RESPONSE = "response"
    RESOLVE = "resolve"


class SegmentKind(models.TextChoices):
    START = "start"
    PAUSE = "pause"
    RESUME = "resume"
    STOP = "stop"


class ClockSegment(models.Model):
    """Append-only log of SLA clock events per ticket, from which deadlines are recomputed."""

    ticket = models.ForeignKey(
        "ticketing.Ticket", on_delete=models.CASCADE, related_name="sla_segments"
    )
    clock = models.CharField(max_length=10, choices=Clock.choices)
    kind = models.CharField(max_length=10, choices=SegmentKind.choices)
    at = models.DateTimeField()
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "oa_sla_clock_segment"
        ordering = ["at", "id"]
        indexes = [models.Index(fields=["ticket", "at"], name="sla_segment_ticket_idx")]

    def __str__(self) -> str:
        return f"{self.ticket_id} {self.clock} {self.kind} @ {self.at}"


class ClockResult(models.TextChoices):
    """How one clock ended. A clock still running when its ticket was closed unfinished is
    breached if it was past its budget by then, otherwise closed before due (neither met nor
    breached)."""

    MET = "met", _("met")
    BREACHED = "breached", _("breached")
    CLOSED_BEFORE_DUE = "closed_before_due", _("closed before due")
    NONE = "none", _("no such clock")


class SlaOutcome(models.Model):
    """Final SLA result of a ticket, in business minutes: written once, when the ticket is
    completed, or when it is closed unfinished (pending assign, pending process, processing).

    `*_result` is each clock's result; `*_met` is the same as a boolean (True met, False
    breached, null for closed before due or no such clock)."""

    ticket = models.OneToOneField(
        "ticketing.Ticket", on_delete=models.CASCADE, related_name="sla_outcome"
    )
    rule = models.ForeignKey(SlaRule, null=True, blank=True, on_delete=models.SET_NULL)
    response_minutes = models.DecimalField(max_digits=12, decimal_places=2, null=True)
    resolve_minutes = models.DecimalField(max_digits=12, decimal_places=2, null=True)
    response_met = models.BooleanField(null=True)
    resolve_met = models.BooleanField(null=True)
    response_result = models.CharField(
        max_length=20, choices=ClockResult.choices, verbose_name=_("response result")
    )
    resolve_result = models.CharField(
        max_length=20, choices=ClockResult.choices, verbose_name=_("resolve result")
    )
    closed_before_completion = models.BooleanField(
        default=False,
        verbose_name=_("closed before completion"),
        help_text=_("Closed by the applicant or staff while still being handled."),
    )
    completed_time = models.DateTimeField(
        help_text=_(
            "The instant the clocks were finalised: completion, or the close when the ticket "
            "was closed unfinished."
        )
    )

    class Meta:
        db_table = "oa_sla_outcome"
        indexes = [models.Index(fields=["completed_time"], name="sla_outcome_time_idx")]
        constraints = [
            models.CheckConstraint(
                condition=(
                    models.Q(response_result="met", response_met=True)
                    | models.Q(response_result="breached", response_met=False)
                    | models.Q(
                        response_result__in=["closed_before_due", "none"],
                        response_met__isnull=True,
                    )
                ),
                name="sla_outcome_response_result_matches_met",
            ),
            models.CheckConstraint(
                condition=(
                    models.Q(resolve_result="met", resolve_met=True)
                    | models.Q(resolve_result="breached", resolve_met=False)
                    | models.Q(
                        resolve_result__in=["closed_before_due", "none"],
                        resolve_met__isnull=True,
                    )
                ),
                name="sla_outcome_resolve_result_matches_met",
            ),
        ]

    def __str__(self) -> str:
        return f"outcome of {self.ticket_id}"


class Trigger(models.TextChoices):
    PERCENT_ELAPSED = "percent_elapsed", _("percent of the clock elapsed")
    MINUTES_BEFORE = "minutes_before", _("minutes before the deadline")
    MINUTES_AFTER = "minutes_after", _("minutes after the deadline")


class Notify(models.TextChoices):
    HANDLER = "handler", _("handler")
    LEADER = "leader", _("group leader")
    ESCALATION_CONTACT = "escalation_contact", _("escalation contact")
    APPROVERS = "approvers", _("approvers")


class EscalationLevel(models.Model):
    """One step of a rule's escalation ladder on one clock: when (a share of the clock's
    budget, or minutes before/after its deadline) and what happens (who is told with which
    template, and optionally a move to another group and a raise in priority)."""

    rule = models.ForeignKey(SlaRule, on_delete=models.CASCADE, related_name="levels")
    position = models.PositiveSmallIntegerField(help_text=_("Order in the ladder, from 1."))
    clock = models.CharField(max_length=10, choices=Clock.choices)
    trigger = models.CharField(max_length=16, choices=Trigger.choices)
    value = models.DecimalField(max_digits=8, decimal_places=2)
    notify = models.JSONField(default=list, blank=True)
    template_code = models.CharField(
        max_length=64,
        blank=True,
        default="",
        help_text=_("Empty: the warning template before the deadline, the timeout one after."),
    )
    reassign_group = models.ForeignKey(
        "handler_groups.HandlerGroup",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
    )
    raise_priority = models.BooleanField(default=False)

    class Meta:
        db_table = "oa_sla_level"
        ordering = ["rule_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["rule", "position"], name="sla_level_position_once")
        ]

    def __str__(self) -> str:
        return f"{self.rule_id}#{self.position} {self.clock} {self.trigger} {self.value}"


class EventState(models.TextChoices):
    PENDING = "pending", _("pending")
    FIRED = "fired", _("fired")
    VOID = "void", _("void (clock stopped first)")
    SKIPPED = "skipped", _("skipped (passed while paused, after its deadline)")


class SlaEvent(models.Model):
    """One level of the ticket's ladder on one clock: when it is due (null while the clock
    cannot say: paused with budget left) and whether it fired. Claimed by compare-and-set on
    `state`, so each fires at most once; the partial index on due pending events is what the
    once-a-second tick reads."""

    ticket = models.ForeignKey(
        "ticketing.Ticket", on_delete=models.CASCADE, related_name="sla_events"
    )
    clock = models.CharField(max_length=10, choices=Clock.choices)
    level = models.PositiveSmallIntegerField()
    escalation_level = models.ForeignKey(
        EscalationLevel, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    due_at = models.DateTimeField(null=True, blank=True)
    state = models.CharField(max_length=8, choices=EventState.choices, default=EventState.PENDING)
    fired_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "oa_sla_event"
        ordering = ["ticket_id", "level"]
        constraints = [
            models.UniqueConstraint(
                fields=["ticket", "clock", "level"], name="sla_event_once_per_level"
            )
        ]
        indexes = [
            models.Index(
                fields=["due_at"],
                name="sla_event_due_idx",
                condition=models.Q(state="pending", due_at__isnull=False),
            )
        ]

    def __str__(self) -> str:
        return f"{self.ticket_id} {self.clock}#{self.level} {self.state} @ {self.due_at}"
