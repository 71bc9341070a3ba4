from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class Calendar(models.Model):
    """Business hours: a timezone, weekly working windows (several per day allowed: split
    shifts, lunch breaks) and holiday dates."""

    name = models.CharField(verbose_name=_("name"), max_length=100, unique=True)
    timezone = models.CharField(verbose_name=_("timezone"), max_length=64, default="UTC")
    holiday_country = models.CharField(
        verbose_name=_("holiday country"),
        max_length=8,
        blank=True,
        default="",
        help_text=_("ISO code for importing public holidays."),
    )
    updated = models.DateTimeField(verbose_name=_("updated"), auto_now=True)

    class Meta:
        verbose_name = _("calendar")
        verbose_name_plural = _("calendars")
        db_table = "oa_sla_calendar"
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.timezone})"


class Weekday(models.IntegerChoices):
    MONDAY = 0, _("Monday")
    TUESDAY = 1, _("Tuesday")
    WEDNESDAY = 2, _("Wednesday")
    THURSDAY = 3, _("Thursday")
    FRIDAY = 4, _("Friday")
    SATURDAY = 5, _("Saturday")
    SUNDAY = 6, _("Sunday")


class WorkingWindow(models.Model):
    calendar = models.ForeignKey(
        Calendar, verbose_name=_("calendar"), on_delete=models.CASCADE, related_name="windows"
    )
    weekday = models.PositiveSmallIntegerField(verbose_name=_("weekday"), choices=Weekday.choices)
    start = models.TimeField(verbose_name=_("start"))
    end = models.TimeField(
        verbose_name=_("end"), help_text=_("00:00 means midnight at the end of the day (24:00).")
    )

    class Meta:
        verbose_name = _("working window")
        verbose_name_plural = _("working windows")
        db_table = "oa_sla_working_window"
        ordering = ["weekday", "start"]

    def __str__(self) -> str:
        return f"{self.get_weekday_display()} {self.start:%H:%M}–{self.end:%H:%M}"


class Holiday(models.Model):
    calendar = models.ForeignKey(
        Calendar, verbose_name=_("calendar"), on_delete=models.CASCADE, related_name="holidays"
    )
    date = models.DateField(verbose_name=_("date"))
    name = models.CharField(verbose_name=_("name"), max_length=200, blank=True, default="")

    class Meta:
        verbose_name = _("holiday")
        verbose_name_plural = _("holidays")
        db_table = "oa_sla_holiday"
        ordering = ["date"]
        constraints = [
            models.UniqueConstraint(fields=["calendar", "date"], name="holiday_once_per_date")
        ]

    def __str__(self) -> str:
        return f"{self.date} {self.name}"


class RuleStatus(models.IntegerChoices):
    DISABLED = 0, _("disabled")
    ENABLED = 1, _("enabled")


class SlaRule(models.Model):
    """Matched at approval: enabled rules by ascending sort; the first whose priority equals
    the ticket's (or is empty: any priority, for the fallback) and whose category is blank or
    equal wins."""

    name = models.CharField(verbose_name=_("name"), max_length=200)
    priority = models.PositiveSmallIntegerField(
        verbose_name=_("priority"),
        null=True,
        blank=True,
        choices=[(1, _("low")), (2, _("medium")), (3, _("high")), (4, _("urgent"))],
        help_text=_("Empty = any priority (meant for the catch-all fallback rule)."),
    )
    category = models.CharField(verbose_name=_("category"), max_length=50, blank=True, default="")
    response_hours = models.DecimalField(
        verbose_name=_("response time (hours)"),
        max_digits=8,
        decimal_places=2,
        null=True,
        blank=True,
        help_text=_("Empty or 0: no clock."),
    )
    resolve_hours = models.DecimalField(
        verbose_name=_("resolve time (hours)"),
        max_digits=8,
        decimal_places=2,
        null=True,
        blank=True,
        help_text=_("Empty or 0: no clock."),
    )
    warn_before_minutes = models.PositiveIntegerField(
        verbose_name=_("warn before (minutes)"), default=30
    )
    # The value as loaded, kept by sla.rules' post_init and post_save handlers (not a column).
    _loaded_warn_before_minutes: int | None
    sort = models.IntegerField(verbose_name=_("order"), default=100)
    status = models.PositiveSmallIntegerField(
        verbose_name=_("status"), choices=RuleStatus.choices, default=RuleStatus.ENABLED
    )
    calendar = models.ForeignKey(
        Calendar,
        verbose_name=_("calendar"),
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="rules",
        help_text=_("Empty = 24×7."),
    )
    updated = models.DateTimeField(verbose_name=_("updated"), auto_now=True)

    class Meta:
        verbose_name = _("SLA rule")
        verbose_name_plural = _("SLA rules")
        db_table = "oa_sla_rule"
        ordering = ["sort", "id"]
        indexes = [models.Index(fields=["status", "sort"], name="sla_rule_match_idx")]

    def __str__(self) -> str:
        return self.name


class Clock(models.TextChoices):
    RESPONSE = "response", _("Response")
    RESOLVE = "resolve", _("Resolve")


class SegmentKind(models.TextChoices):
    START = "start", _("Start")
    PAUSE = "pause", _("Pause")
    RESUME = "resume", _("Resume")
    STOP = "stop", _("Stop")


class ClockSegment(models.Model):
    """Append-only log of SLA clock events per ticket, from which deadlines are recomputed."""

    ticket = models.ForeignKey(
        "ticketing.Ticket",
        verbose_name=_("ticket"),
        on_delete=models.CASCADE,
        related_name="sla_segments",
    )
    clock = models.CharField(verbose_name=_("clock"), max_length=10, choices=Clock.choices)
    kind = models.CharField(verbose_name=_("kind"), max_length=10, choices=SegmentKind.choices)
    at = models.DateTimeField(verbose_name=_("at"))
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("actor"),
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
    )
    created = models.DateTimeField(verbose_name=_("created"), auto_now_add=True)

    class Meta:
        verbose_name = _("clock segment")
        verbose_name_plural = _("clock segments")
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
    # Merged into another ticket (a duplicate): counted apart from met and breached.
    MERGED = "merged", _("merged")
    NONE = "none", _("no such clock")


class SlaOutcome(models.Model):
    """Final SLA result of a ticket, in business minutes: written once, when the ticket is
    completed, or when it is closed unfinished (pending assign, pending process, processing).

    `*_result` is each clock's result; `*_met` is the same as a boolean (True met, False
    breached, null for closed before due or no such clock)."""

    ticket = models.OneToOneField(
        "ticketing.Ticket",
        verbose_name=_("ticket"),
        on_delete=models.CASCADE,
        related_name="sla_outcome",
    )
    rule = models.ForeignKey(
        SlaRule, verbose_name=_("rule"), null=True, blank=True, on_delete=models.SET_NULL
    )
    response_minutes = models.DecimalField(
        verbose_name=_("response (business minutes)"), max_digits=12, decimal_places=2, null=True
    )
    resolve_minutes = models.DecimalField(
        verbose_name=_("resolve (business minutes)"), max_digits=12, decimal_places=2, null=True
    )
    response_met = models.BooleanField(verbose_name=_("response met"), null=True)
    resolve_met = models.BooleanField(verbose_name=_("resolve met"), null=True)
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
        verbose_name=_("completed time"),
        help_text=_(
            "The instant the clocks were finalised: completion, or the close when the ticket "
            "was closed unfinished."
        ),
    )

    class Meta:
        verbose_name = _("SLA outcome")
        verbose_name_plural = _("SLA outcomes")
        db_table = "oa_sla_outcome"
        indexes = [models.Index(fields=["completed_time"], name="sla_outcome_time_idx")]
        constraints = [
            models.CheckConstraint(
                condition=(
                    models.Q(response_result="met", response_met=True)
                    | models.Q(response_result="breached", response_met=False)
                    | models.Q(
                        response_result__in=["closed_before_due", "merged", "none"],
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
                        resolve_result__in=["closed_before_due", "merged", "none"],
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

    rule = models.ForeignKey(
        SlaRule, verbose_name=_("rule"), on_delete=models.CASCADE, related_name="levels"
    )
    position = models.PositiveSmallIntegerField(
        verbose_name=_("position"), help_text=_("Order in the ladder, from 1.")
    )
    clock = models.CharField(verbose_name=_("clock"), max_length=10, choices=Clock.choices)
    trigger = models.CharField(verbose_name=_("trigger"), max_length=16, choices=Trigger.choices)
    value = models.DecimalField(verbose_name=_("value"), max_digits=8, decimal_places=2)
    notify = models.JSONField(verbose_name=_("notify"), default=list, blank=True)
    template_code = models.CharField(
        verbose_name=_("notification template"),
        max_length=64,
        blank=True,
        default="",
        help_text=_("Empty: the warning template before the deadline, the timeout one after."),
    )
    reassign_group = models.ForeignKey(
        "handler_groups.HandlerGroup",
        verbose_name=_("move to group"),
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
    )
    raise_priority = models.BooleanField(verbose_name=_("raise priority"), default=False)

    class Meta:
        verbose_name = _("escalation level")
        verbose_name_plural = _("escalation levels")
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
        "ticketing.Ticket",
        verbose_name=_("ticket"),
        on_delete=models.CASCADE,
        related_name="sla_events",
    )
    clock = models.CharField(verbose_name=_("clock"), max_length=10, choices=Clock.choices)
    level = models.PositiveSmallIntegerField(verbose_name=_("level"))
    escalation_level = models.ForeignKey(
        EscalationLevel,
        verbose_name=_("escalation level"),
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    due_at = models.DateTimeField(verbose_name=_("due at"), null=True, blank=True)
    state = models.CharField(
        verbose_name=_("state"),
        max_length=8,
        choices=EventState.choices,
        default=EventState.PENDING,
    )
    fired_at = models.DateTimeField(verbose_name=_("fired at"), null=True, blank=True)

    class Meta:
        verbose_name = _("SLA event")
        verbose_name_plural = _("SLA events")
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
