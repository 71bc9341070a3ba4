"""Routing's records: agents' presence (the system of record behind the Redis idle pools) and
one row per routing outcome (the metrics). Tables keep the names they had in handler_groups."""

from django.conf import settings
from django.db import models
from django.db.models import F, Value
from django.db.models.functions import Cast, Coalesce
from django.utils.translation import gettext_lazy as _

from handler_groups.models import HandlerGroup


class PresenceState(models.TextChoices):
    OFFLINE = "offline", _("Offline")
    AVAILABLE = "available", _("Available")
    BUSY = "busy", _("Busy")  # on a break: not routed to, visible to the leader
    WRAP_UP = "wrap_up", _("Wrap Up")  # after-work following a completion


class AgentPresence(models.Model):
    """The system of record for an agent's presence; Redis holds the live copy routing reads
    (the idle pools), repaired from here by the reconciliation job."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        verbose_name=_("user"),
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="presence",
    )
    state = models.CharField(
        verbose_name=_("state"),
        max_length=10,
        choices=PresenceState.choices,
        default=PresenceState.OFFLINE,
    )
    state_since = models.DateTimeField(verbose_name=_("state since"))
    last_heartbeat = models.DateTimeField(verbose_name=_("last heartbeat"), null=True, blank=True)
    online_since = models.DateTimeField(verbose_name=_("online since"), null=True, blank=True)
    # Longest idle: since the last assignment or the end of the wrap-up.
    idle_since = models.DateTimeField(verbose_name=_("idle since"), null=True, blank=True)
    wrap_up_until = models.DateTimeField(verbose_name=_("wrap up until"), null=True, blank=True)

    class Meta:
        db_table = "oa_agent_presence"
        verbose_name = _("agent presence")
        verbose_name_plural = _("agent presence")
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
        ASSIGNED = "assigned", _("Assigned")
        MISSED = "missed", _("Missed")
        OVERFLOWED = "overflowed", _("Overflowed")

    group = models.ForeignKey(
        HandlerGroup, verbose_name=_("group"), on_delete=models.CASCADE, related_name="events"
    )
    ticket = models.ForeignKey(
        "ticketing.Ticket", verbose_name=_("ticket"), on_delete=models.CASCADE, related_name="+"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("user"),
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    kind = models.CharField(verbose_name=_("kind"), max_length=12, choices=Kind.choices)
    strategy = models.PositiveSmallIntegerField(verbose_name=_("strategy"))
    pick_ms = models.FloatField(verbose_name=_("pick time (ms)"), null=True, blank=True)
    overflowed = models.BooleanField(verbose_name=_("overflowed"), default=False)
    reclaimed = models.BooleanField(verbose_name=_("reclaimed"), default=False)
    created = models.DateTimeField(verbose_name=_("created"))
    # False while the agent has not been told yet: an approval tells them after its
    # transaction commits (outside the group lock); the routing sweep tells anyone missed.
    notified = models.BooleanField(verbose_name=_("notified"), default=True, db_default=True)

    class Meta:
        verbose_name = _("assignment event")
        verbose_name_plural = _("assignment events")
        db_table = "oa_assignment_event"
        indexes = [
            models.Index(fields=["group", "created"], name="assignment_event_group_idx"),
            models.Index(fields=["user", "kind", "created"], name="assignment_event_user_idx"),
            # The notice sweep: assignments whose agent has not been told yet.
            models.Index(
                fields=["created"],
                name="assignment_unnotified_idx",
                condition=models.Q(notified=False),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.ticket_id} → {self.user_id}"


# A span's end, infinity while it is open, over the span aliased `s`: the expression of
# presence_span_user_end_idx, as the planner matches it.
SPAN_ENDED_SQL = "COALESCE(s.ended, 'infinity'::timestamptz)"


class PresenceSpan(models.Model):
    """Presence history: one row per stretch of time an agent spent in one state, written
    with every state change (routing/presence.py closes the open span and opens the next in
    one statement). `ended` is null for the current state. Staffing reads who was available
    in past hours from here; AgentPresence only knows the present."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("user"),
        on_delete=models.CASCADE,
        related_name="presence_spans",
    )
    state = models.CharField(verbose_name=_("state"), max_length=10, choices=PresenceState.choices)
    started = models.DateTimeField(verbose_name=_("started"))
    ended = models.DateTimeField(verbose_name=_("ended"), null=True, blank=True)

    class Meta:
        verbose_name = _("presence span")
        verbose_name_plural = _("presence spans")
        db_table = "oa_presence_span"
        constraints = [
            # At most one open span per agent; also the index that finds it to close it.
            models.UniqueConstraint(
                fields=["user"],
                condition=models.Q(ended__isnull=True),
                name="presence_span_one_open",
            )
        ]
        indexes = [
            # Staffing: a group's members' spans overlapping a day.
            models.Index(fields=["user", "state", "started"], name="presence_span_user_idx"),
            # Staffing and queue metrics' occupancy: an agent's spans by when they ended
            # (infinity while open, SPAN_ENDED_SQL), so those overlapping a recent window are
            # one range of it, not the agent's whole history before the window.
            models.Index(
                F("user"),
                F("state"),
                Coalesce("ended", Cast(Value("infinity"), models.DateTimeField())),
                name="presence_span_user_end_idx",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user_id}: {self.state} {self.started}–{self.ended or ''}"


class RoutingDecision(models.Model):
    """What one routing decision saw and did (the ticket page's "Why this agent?"): the
    strategy, every member with their figures and whether eligible (if not, why), and the
    outcome with the chosen member. One INSERT per decision, built from the member rows the
    pick already fetched; the plain-words explanation is derived when read."""

    class Trigger(models.TextChoices):
        APPROVAL = "approval", _("Approval")
        TRANSFER = "transfer", _("Transfer")
        DRAIN = "drain", _("Drain")
        RECLAIM = "reclaim", _("Reclaim")
        DECLINE = "decline", _("Decline")
        OVERFLOW = "overflow", _("Overflow")
        ESCALATION = "escalation", _("Escalation")

    class Outcome(models.TextChoices):
        ASSIGNED = "assigned", _("Assigned")
        OFFERED = "offered", _("Offered")
        QUEUED = "queued", _("Queued")
        OVERFLOWED = "overflowed", _("Overflowed")

    # One index only (ticket, id), the read path: every index is written under the group
    # lock. Deleting a group or a user (rare) scans for the SET NULL.
    ticket = models.ForeignKey(
        "ticketing.Ticket",
        verbose_name=_("ticket"),
        on_delete=models.CASCADE,
        related_name="routing_decisions",
        db_index=False,
    )
    group = models.ForeignKey(
        HandlerGroup,
        verbose_name=_("group"),
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_index=False,
    )
    trigger = models.CharField(verbose_name=_("trigger"), max_length=12, choices=Trigger.choices)
    strategy = models.PositiveSmallIntegerField(verbose_name=_("strategy"))
    outcome = models.CharField(verbose_name=_("outcome"), max_length=12, choices=Outcome.choices)
    chosen = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("chosen"),
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_index=False,
    )
    # [{user_id, username, state, active, max_active, open_offers, online_since, idle_since,
    #   assigned_today, eligible, reason}] in member order (strategies/service.py `seen`).
    members = models.JSONField(verbose_name=_("members"), default=list)
    created = models.DateTimeField(verbose_name=_("created"))

    class Meta:
        verbose_name = _("routing decision")
        verbose_name_plural = _("routing decisions")
        db_table = "oa_routing_decision"
        indexes = [
            # A ticket's decisions in the order they were made (ids grow under the group lock;
            # `created` is the caller's routing instant, which a sweep may pass).
            models.Index(fields=["ticket", "id"], name="routing_decision_ticket_idx")
        ]

    def __str__(self) -> str:
        return f"{self.trigger} {self.ticket_id}: {self.outcome} {self.chosen_id or ''}"


class HandlerLoad(models.Model):
    """What a handler's tickets add to the member figures routing reads under the group lock,
    kept by PostgreSQL itself: triggers on the ticket table (migration 0009) insert one row per
    change of a ticket's contribution (its handler, group, status, acceptance or assignment
    instant), the difference, never updating a row. So no writer waits on another, whatever
    order transactions touch tickets in, and every path that changes a ticket (a transition,
    the admin, a bulk update, a deleted ticket) is counted.

    A member's figures are sums over their rows: `active` over all their rows, `offers` and
    `assigned` (since the day's start) over the group's. `routing.loads` folds a member's rows
    of a group into one: as the member is assigned (in the assignment's own statement) and in
    the routing sweep, both under the group's lock, so the figures cost a few rows per member
    whatever the member holds or has done."""

    user_id = models.IntegerField(verbose_name=_("user"))
    group_id = models.BigIntegerField(verbose_name=_("group"), null=True, blank=True)
    # The assignment instant the `assigned` count is for (a folded row: the day's start it was
    # folded at; anything before it no longer counts as assigned today).
    since = models.DateTimeField(verbose_name=_("since"), null=True, blank=True)
    active = models.IntegerField(verbose_name=_("active"), default=0)
    offers = models.IntegerField(verbose_name=_("offers"), default=0)
    assigned = models.IntegerField(verbose_name=_("assigned"), default=0)

    class Meta:
        verbose_name = _("handler load")
        verbose_name_plural = _("handler loads")
        db_table = "oa_handler_load"
        indexes = [models.Index(fields=["user_id", "group_id"], name="handler_load_idx")]

    def __str__(self) -> str:
        return f"{self.user_id} in {self.group_id}: {self.active}/{self.offers}/{self.assigned}"
