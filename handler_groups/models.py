from django.conf import settings
from django.db import models

from .membership import format_member_ids, parse_member_ids


class GroupStatus(models.IntegerChoices):
    DISABLED = 0, "disabled"
    ENABLED = 1, "enabled"


def assign_strategy_choices() -> list[tuple[int, str]]:
    """Derived from the strategy registry (assignment/registry.py): codes are the source
    system's, each with one strategy class in assignment/."""
    from .assignment.registry import strategy_choices

    return strategy_choices()


class HandlerGroup(models.Model):
    """oa_ticket_handler_group. Members are stored as the source system stores them, a
    comma-separated string of user ids; read and write it only through `member_ids`."""

    name = models.CharField(max_length=100, unique=True)
    leader = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="led_handler_groups",
    )
    member_user_ids = models.CharField(max_length=2000, blank=True, default="")
    assign_strategy = models.PositiveSmallIntegerField(choices=assign_strategy_choices, default=0)
    # Index (into member_ids) of the member who got the last round-robin assignment; -1 = none
    # yet, so the first assignment goes to the first member.
    last_assign_index = models.IntegerField(default=-1)
    status = models.PositiveSmallIntegerField(
        choices=GroupStatus.choices, default=GroupStatus.ENABLED
    )
    # Routing behaviour (assignment engine). The defaults keep a classic back office: nobody
    # heartbeats, every enabled member is available, no caps, no offers, no overflow.
    requires_presence = models.BooleanField(
        default=False, help_text="Route only to members whose presence is 'available'."
    )
    max_active = models.PositiveIntegerField(
        null=True, blank=True, help_text="Tickets in status 2 or 3 per member; empty = no limit."
    )
    daily_cap = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Assignments per member and day in this group. Soft: exceeded only when "
        "nobody else in the group is eligible.",
    )
    wrap_up_seconds = models.PositiveIntegerField(
        default=0, help_text="After-work time after a completion before new tickets arrive."
    )
    warmup_seconds = models.PositiveIntegerField(
        default=60, help_text="Longest idle: a newly online agent counts as idle this much later."
    )
    offer_timeout_seconds = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="An auto-assigned ticket not accepted within this is reclaimed; empty = never.",
    )
    overflow_group = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="overflow_sources"
    )
    overflow_after_seconds = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="A ticket that found nobody eligible for this long goes to the overflow group.",
    )
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
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

    group = models.ForeignKey(HandlerGroup, on_delete=models.CASCADE, related_name="capacities")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    max_active = models.PositiveIntegerField()

    class Meta:
        db_table = "oa_handler_member_capacity"
        constraints = [
            models.UniqueConstraint(fields=["group", "user"], name="capacity_once_per_member")
        ]

    def __str__(self) -> str:
        return f"{self.user_id} in {self.group_id}: {self.max_active}"


class PresenceState(models.TextChoices):
    OFFLINE = "offline"
    AVAILABLE = "available"
    BUSY = "busy"  # on a break: not routed to, visible to the leader
    WRAP_UP = "wrap_up"  # after-work following a completion


class AgentPresence(models.Model):
    """The system of record for an agent's presence; Redis holds the live copy routing reads
    (the idle pools), repaired from here by the reconciliation job."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="presence",
    )
    state = models.CharField(
        max_length=10, choices=PresenceState.choices, default=PresenceState.OFFLINE
    )
    state_since = models.DateTimeField()
    last_heartbeat = models.DateTimeField(null=True, blank=True)
    online_since = models.DateTimeField(null=True, blank=True)
    # Longest idle: since the last assignment or the end of the wrap-up.
    idle_since = models.DateTimeField(null=True, blank=True)
    wrap_up_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "oa_agent_presence"
        indexes = [
            # The presence sweep: routable agents whose heartbeat stopped.
            models.Index(fields=["state", "last_heartbeat"], name="presence_sweep_idx")
        ]

    def __str__(self) -> str:
        return f"{self.user_id}: {self.state}"


class AssignmentEvent(models.Model):
    """One routing outcome, for the metrics: an assignment (with the pick's latency), or a
    miss (an offer reclaimed from an agent who did not accept it in time)."""

    class Kind(models.TextChoices):
        ASSIGNED = "assigned"
        MISSED = "missed"
        OVERFLOWED = "overflowed"

    group = models.ForeignKey(HandlerGroup, on_delete=models.CASCADE, related_name="events")
    ticket = models.ForeignKey("ticketing.Ticket", on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    kind = models.CharField(max_length=12, choices=Kind.choices)
    strategy = models.PositiveSmallIntegerField()
    pick_ms = models.FloatField(null=True, blank=True)
    overflowed = models.BooleanField(default=False)
    reclaimed = models.BooleanField(default=False)
    created = models.DateTimeField()

    class Meta:
        db_table = "oa_assignment_event"
        indexes = [
            models.Index(fields=["group", "created"], name="assignment_event_group_idx"),
            models.Index(fields=["user", "kind", "created"], name="assignment_event_user_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.ticket_id} → {self.user_id}"
