"""A strategy simulation requested through the API (or the supervisor dashboard): its
parameters, its state in the worker and its result (insight/simulator.py's report)."""

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from handler_groups.models import HandlerGroup


class SimulationStatus(models.TextChoices):
    QUEUED = "queued", _("Queued")
    RUNNING = "running", _("Running")
    DONE = "done", _("Done")
    FAILED = "failed", _("Failed")


class Simulation(models.Model):
    """One run of the simulator over a group's record (`group` set) or a synthetic day
    (`group` empty). `params` is what services.simulate takes; `result` what it returns."""

    group = models.ForeignKey(
        HandlerGroup,
        verbose_name=_("group"),
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="simulations",
    )
    params = models.JSONField(verbose_name=_("parameters"), default=dict)
    status = models.CharField(
        verbose_name=_("status"),
        max_length=8,
        choices=SimulationStatus.choices,
        default=SimulationStatus.QUEUED,
    )
    result = models.JSONField(verbose_name=_("result"), null=True, blank=True)
    error = models.TextField(verbose_name=_("error"), blank=True, default="")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("created by"),
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    created = models.DateTimeField(verbose_name=_("created"), default=timezone.now)
    finished = models.DateTimeField(verbose_name=_("finished"), null=True, blank=True)
    # Recovery (services.simulation_sweep): when it was last handed to the broker, when its
    # current run started and last showed it was alive, and how many runs it has had.
    enqueued = models.DateTimeField(verbose_name=_("enqueued"), null=True, blank=True)
    started = models.DateTimeField(verbose_name=_("started"), null=True, blank=True)
    heartbeat = models.DateTimeField(verbose_name=_("heartbeat"), null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(verbose_name=_("attempts"), default=0)

    class Meta:
        verbose_name = _("simulation")
        verbose_name_plural = _("simulations")
        db_table = "insight_simulation"
        indexes = [
            # The dashboard: a group's latest finished simulation.
            models.Index(fields=["group", "status", "created"], name="simulation_group_idx"),
            # The recovery sweep: the few simulations not finished.
            models.Index(
                fields=["status"],
                name="simulation_unfinished_idx",
                condition=models.Q(status__in=["queued", "running"]),
            ),
        ]

    def __str__(self) -> str:
        return f"simulation {self.pk} ({self.status})"
