from typing import TYPE_CHECKING

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils.translation import gettext_lazy as _

from .membership import format_member_ids, parse_member_ids
from .strategies import strategy_choices

if TYPE_CHECKING:
    from django_stubs_ext import StrPromise

# A delayed task re-checks every offer when it runs out: at most a day, which the broker's
# visibility timeout (settings: CELERY_BROKER_TRANSPORT_OPTIONS) must outlast.
MAX_OFFER_TIMEOUT_SECONDS = 24 * 3600


class GroupStatus(models.IntegerChoices):
    DISABLED = 0, _("disabled")
    ENABLED = 1, _("enabled")


def assign_strategy_choices() -> list[tuple[int, "StrPromise"]]:
    """The strategies routing has registered (routing/strategies/registry.py declares each
    one here under the source system's code): the choices are derived from what exists."""
    return strategy_choices()


class HandlerGroup(models.Model):
    """oa_ticket_handler_group. Members are stored as the source system stores them, a
    comma-separated string of user ids; read and write it only through `member_ids`."""

    name = models.CharField(verbose_name=_("name"), max_length=100, unique=True)
    leader = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("leader"),
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="led_handler_groups",
    )
    # Escalation ladders can tell this person too (the leader's manager, say).
    escalation_contact = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("escalation contact"),
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="escalation_contact_for",
    )
    member_user_ids = models.CharField(
        verbose_name=_("members"), max_length=2000, blank=True, default=""
    )
    assign_strategy = models.PositiveSmallIntegerField(
        verbose_name=_("assign strategy"), choices=assign_strategy_choices, default=0
    )
    # Index (into member_ids) of the member who got the last round-robin assignment; -1 = none
    # yet, so the first assignment goes to the first member.
    last_assign_index = models.IntegerField(verbose_name=_("round-robin cursor"), default=-1)
    status = models.PositiveSmallIntegerField(
        verbose_name=_("status"), choices=GroupStatus.choices, default=GroupStatus.ENABLED
    )
    # Routing behaviour (assignment engine). The defaults keep a classic back office: nobody
    # heartbeats, every enabled member is available, no caps, no offers, no overflow.
    requires_presence = models.BooleanField(
        verbose_name=_("requires presence"),
        default=False,
        help_text=_("Route only to members whose presence is 'available'."),
    )
    max_active = models.PositiveIntegerField(
        verbose_name=_("max active tickets"),
        null=True,
        blank=True,
        help_text=_("Tickets pending process or processing per member; empty = no limit."),
    )
    daily_cap = models.PositiveIntegerField(
        verbose_name=_("daily cap"),
        null=True,
        blank=True,
        help_text=_(
            "Assignments per member and day in this group. Soft: exceeded only when "
            "nobody else in the group is eligible."
        ),
    )
    wrap_up_seconds = models.PositiveIntegerField(
        verbose_name=_("wrap-up (seconds)"),
        default=0,
        help_text=_("After-work time after a completion before new tickets arrive."),
    )
    warmup_seconds = models.PositiveIntegerField(
        verbose_name=_("warm-up (seconds)"),
        default=60,
        help_text=_("Longest idle: a newly online agent counts as idle this much later."),
    )
    offer_timeout_seconds = models.PositiveIntegerField(
        verbose_name=_("offer timeout (seconds)"),
        null=True,
        blank=True,
        validators=[MaxValueValidator(MAX_OFFER_TIMEOUT_SECONDS)],
        help_text=_(
            "An auto-assigned ticket not accepted within this is reclaimed; empty = never."
        ),
    )
    overflow_group = models.ForeignKey(
        "self",
        verbose_name=_("overflow group"),
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="overflow_sources",
    )
    overflow_after_seconds = models.PositiveIntegerField(
        verbose_name=_("overflow after (seconds)"),
        null=True,
        blank=True,
        help_text=_(
            "A ticket that found nobody eligible for this long goes to the overflow group."
        ),
    )
    # The queue metrics' service level: the share of arrivals assigned within this.
    target_answer_seconds = models.PositiveIntegerField(
        verbose_name=_("target answer time (seconds)"),
        default=60,
        validators=[MinValueValidator(1)],
        help_text=_("Service-level target: an approved ticket should be assigned within this."),
    )
    created = models.DateTimeField(verbose_name=_("created"), auto_now_add=True)
    updated = models.DateTimeField(verbose_name=_("updated"), auto_now=True)

    class Meta:
        verbose_name = _("handler group")
        verbose_name_plural = _("handler groups")
        db_table = "oa_ticket_handler_group"
        ordering = ["id"]

    def __str__(self) -> str:
        return self.name

    @property
    def member_ids(self) -> list[int]:
        return parse_member_ids(self.member_user_ids)

    @member_ids.setter
    def member_ids(self, ids) -> None:
        self.member_user_ids = format_member_ids(ids)

    @property
    def is_enabled(self) -> bool:
        return self.status == GroupStatus.ENABLED


class MemberCapacity(models.Model):
    """A member's own max_active in one group, overriding the group's default."""

    group = models.ForeignKey(
        HandlerGroup, verbose_name=_("group"), on_delete=models.CASCADE, related_name="capacities"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, verbose_name=_("user"), on_delete=models.CASCADE
    )
    max_active = models.PositiveIntegerField(verbose_name=_("max active tickets"))

    class Meta:
        verbose_name = _("member capacity")
        verbose_name_plural = _("member capacities")
        db_table = "oa_handler_member_capacity"
        constraints = [
            models.UniqueConstraint(fields=["group", "user"], name="capacity_once_per_member")
        ]

    def __str__(self) -> str:
        return f"{self.user_id} in {self.group_id}: {self.max_active}"
