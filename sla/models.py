from django.conf import settings
from django.db import models


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


class SlaOutcome(models.Model):
    """Final SLA result of a completed ticket, in business minutes."""

    ticket = models.OneToOneField(
        "ticketing.Ticket", on_delete=models.CASCADE, related_name="sla_outcome"
    )
    rule = models.ForeignKey(SlaRule, null=True, blank=True, on_delete=models.SET_NULL)
    response_minutes = models.DecimalField(max_digits=12, decimal_places=2, null=True)
    resolve_minutes = models.DecimalField(max_digits=12, decimal_places=2, null=True)
    response_met = models.BooleanField(null=True)
    resolve_met = models.BooleanField(null=True)
    completed_time = models.DateTimeField()

    class Meta:
        db_table = "oa_sla_outcome"
        indexes = [models.Index(fields=["completed_time"], name="sla_outcome_time_idx")]

    def __str__(self) -> str:
        return f"outcome of {self.ticket_id}"
