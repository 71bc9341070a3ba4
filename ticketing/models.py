from django.conf import settings
from django.db import models


class Priority(models.IntegerChoices):
    LOW = 1, "low"
    MEDIUM = 2, "medium"
    HIGH = 3, "high"
    URGENT = 4, "urgent"


class ProcessStatus(models.IntegerChoices):
    """Approval state."""

    APPROVING = 1, "approving"
    APPROVED = 2, "approved"
    REJECTED = 3, "rejected"
    CANCELLED = 4, "cancelled"


class TicketStatus(models.IntegerChoices):
    """Handling state."""

    SUBMITTED = 0, "submitted"
    PENDING_ASSIGN = 1, "pending assign"
    PENDING_PROCESS = 2, "pending process"
    PROCESSING = 3, "processing"
    COMPLETED = 4, "completed"
    CLOSED = 5, "closed"


# Tickets counted against a handler's load (least load, capacity).
ACTIVE_STATUSES = (TicketStatus.PENDING_PROCESS, TicketStatus.PROCESSING)
# Tickets whose SLA clocks run.
OPEN_STATUSES = (
    TicketStatus.PENDING_ASSIGN,
    TicketStatus.PENDING_PROCESS,
    TicketStatus.PROCESSING,
)


class Ticket(models.Model):
    """oa_ticket_bill."""

    bill_code = models.CharField(max_length=32, unique=True, editable=False)
    title = models.CharField(max_length=200)
    content = models.TextField()
    priority = models.PositiveSmallIntegerField(choices=Priority.choices, default=Priority.MEDIUM)
    category = models.CharField(max_length=50, blank=True, default="")
    creator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="created_tickets"
    )
    handler_group = models.ForeignKey(
        "handler_groups.HandlerGroup",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="tickets",
    )
    handler = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="handled_tickets",
    )
    process_status = models.PositiveSmallIntegerField(
        choices=ProcessStatus.choices, default=ProcessStatus.APPROVING
    )
    ticket_status = models.PositiveSmallIntegerField(
        choices=TicketStatus.choices, default=TicketStatus.SUBMITTED
    )
    submitted_time = models.DateTimeField()
    approved_time = models.DateTimeField(null=True, blank=True)
    assigned_time = models.DateTimeField(null=True, blank=True)
    accepted_time = models.DateTimeField(null=True, blank=True)
    # The first acceptance: it answers the response clock, and a later transfer (which clears
    # accepted_time for the new handler) does not restart it.
    responded_time = models.DateTimeField(null=True, blank=True)
    completed_time = models.DateTimeField(null=True, blank=True)
    closed_time = models.DateTimeField(null=True, blank=True)
    response_deadline = models.DateTimeField(null=True, blank=True)
    resolve_deadline = models.DateTimeField(null=True, blank=True)
    response_timeout = models.BooleanField(default=False, db_default=False)
    resolve_timeout = models.BooleanField(default=False, db_default=False)
    reply_count = models.PositiveIntegerField(default=0, db_default=0)
    # What the applicant may count: public replies only (reply_count includes internal notes).
    public_reply_count = models.PositiveIntegerField(default=0, db_default=0)
    # SLA engine state: the matched rule, warnings sent, and "waiting on applicant".
    sla_rule = models.ForeignKey(
        "sla.SlaRule", null=True, blank=True, on_delete=models.SET_NULL, related_name="tickets"
    )
    response_warned = models.BooleanField(default=False, db_default=False)
    resolve_warned = models.BooleanField(default=False, db_default=False)
    sla_paused = models.BooleanField(default=False, db_default=False)
    sla_paused_at = models.DateTimeField(null=True, blank=True)
    # When the ticket last started waiting in its group's pool (overflow measures from here).
    queued_time = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "oa_ticket_bill"
        ordering = ["-id"]
        permissions = [
            ("approve_ticket", "Can approve or reject submitted tickets"),
            ("handle_tickets", "Can handle tickets (the no-group pool) without being in a group"),
        ]
        indexes = [
            # The pool query: approved tickets of some groups in some status, newest first.
            models.Index(
                fields=["process_status", "handler_group", "ticket_status", "id"],
                name="ticket_pool_idx",
            ),
            # The SLA scan: open tickets whose clocks have not yet timed out, by deadline.
            models.Index(
                fields=["ticket_status", "response_timeout", "resolve_timeout", "resolve_deadline"],
                name="ticket_sla_scan_idx",
            ),
            # The SLA scan's response clock: not yet accepted, by response deadline.
            models.Index(
                fields=["response_deadline"],
                name="ticket_sla_response_idx",
                condition=models.Q(response_timeout=False, responded_time__isnull=True),
            ),
            # The SLA scan's resolve clock, restricted to clocks still running.
            models.Index(
                fields=["resolve_deadline"],
                name="ticket_sla_resolve_idx",
                condition=models.Q(resolve_timeout=False, sla_paused=False),
            ),
            # my_handling and least load: a handler's tickets by status.
            models.Index(fields=["handler", "ticket_status"], name="ticket_handler_idx"),
            # Routing: a handler's last assignment and today's count (candidates.py).
            models.Index(fields=["handler", "assigned_time"], name="ticket_handler_assigned_idx"),
            models.Index(fields=["creator", "-id"], name="ticket_creator_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.bill_code} {self.title}"


class ReplyType(models.IntegerChoices):
    PUBLIC = 1, "public"
    INTERNAL = 2, "internal"
    SYSTEM = 3, "system"


class TicketReply(models.Model):
    ticket = models.ForeignKey(Ticket, on_delete=models.CASCADE, related_name="replies")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="ticket_replies",
    )
    reply_type = models.PositiveSmallIntegerField(choices=ReplyType.choices)
    content = models.TextField()
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "oa_ticket_reply"
        ordering = ["id"]
        indexes = [models.Index(fields=["ticket", "id"], name="reply_ticket_idx")]

    def __str__(self) -> str:
        return f"reply {self.pk} on {self.ticket_id}"


class TicketRecord(models.Model):
    """Append-only audit trail: every state change, assignment, SLA event and admin edit."""

    ticket = models.ForeignKey(Ticket, on_delete=models.CASCADE, related_name="records")
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="ticket_records",
    )
    action = models.CharField(max_length=40)
    from_status = models.PositiveSmallIntegerField(null=True, blank=True)
    to_status = models.PositiveSmallIntegerField(null=True, blank=True)
    created = models.DateTimeField()
    detail = models.JSONField(default=dict, blank=True)

    class Meta:
        db_table = "oa_ticket_record"
        ordering = ["id"]
        indexes = [models.Index(fields=["ticket", "id"], name="record_ticket_idx")]

    def __str__(self) -> str:
        return f"{self.action} on {self.ticket_id}"
