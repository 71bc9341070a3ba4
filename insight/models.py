"""A strategy simulation requested through the API (or the supervisor dashboard): its
parameters, its state in the worker and its result (insight/simulator.py's report)."""

from django.conf import settings
from django.db import models
from django.utils import timezone

from handler_groups.models import HandlerGroup


class SimulationStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class Simulation(models.Model):
    """One run of the simulator over a group's record (`group` set) or a synthetic day
    (`group` empty). `params` is what services.simulate takes; `result` what it returns."""

    group = models.ForeignKey(
        HandlerGroup,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="simulations",
    )
    params = models.JSONField(default=dict)
    status = models.CharField(
        max_length=8, choices=SimulationStatus.choices, default=SimulationStatus.QUEUED
    )
    result = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True, default="")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    created = models.DateTimeField(default=timezone.now)
    finished = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "insight_simulation"
        indexes = [
            # The dashboard: a group's latest finished simulation.
            models.Index(fields=["group", "status", "created"], name="simulation_group_idx")
        ]

    def __str__(self) -> str:
        return f"simulation {self.pk} ({self.status})"
