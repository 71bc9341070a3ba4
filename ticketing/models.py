from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.db import models
from django.db.models import F, Value
from django.db.models.functions import Cast, Coalesce
from django.utils.translation import gettext_lazy as _


class Priority(models.IntegerChoices):
    LOW = 1, _("low")
    MEDIUM = 2, _("medium")
    HIGH = 3, _("high")
    URGENT = 4, _("urgent")


class ProcessStatus(models.IntegerChoices):
    """Approval state."""

    APPROVING = 1, _("approving")
    APPROVED = 2, _("approved")
    REJECTED = 3, _("rejected")
    CANCELLED = 4, _("cancelled")


class TicketStatus(models.IntegerChoices):
    """Handling state."""

    SUBMITTED = 0, _("submitted")
    PENDING_ASSIGN = 1, _("pending assign")
    PENDING_PROCESS = 2, _("pending process")
    PROCESSING = 3, _("processing")
    COMPLETED = 4, _("completed")
    CLOSED = 5, _("closed")


# Tickets counted against a handler's load (least load, capacity).
ACTIVE_STATUSES = (TicketStatus.PENDING_PROCESS, TicketStatus.PROCESSING)
# Tickets whose SLA clocks run.
OPEN_STATUSES = (
    TicketStatus.PENDING_ASSIGN,
    TicketStatus.PENDING_PROCESS,
    TicketStatus.PROCESSING,
)


def worked_until():
    """When a ticket stopped being worked: its completion, or its close; infinity while it is
    open, so that one index range finds the tickets worked during a window (those finished
    since it began, and the open). WORKED_UNTIL_SQL is the same expression in SQL, for the
    statements that index serves."""
    return Coalesce(
        "completed_time", "closed_time", Cast(Value("infinity"), models.DateTimeField())
    )


# worked_until() over the ticket aliased `t`, as the planner matches it to the index.
WORKED_UNTIL_SQL = "COALESCE(t.completed_time, t.closed_time, 'infinity'::timestamptz)"


class Ticket(models.Model):
    """oa_ticket_bill."""

    # Unique by a constraint (Meta), not `unique=True`: on PostgreSQL the field option also
    # builds a varchar_pattern_ops index for LIKE 'prefix%' lookups, which nothing here makes
    # (searches are icontains) and which every status change of every ticket would write.
    bill_code = models.CharField(verbose_name=_("bill code"), max_length=32, editable=False)
    title = models.CharField(verbose_name=_("title"), max_length=200)
    content = models.TextField(verbose_name=_("content"))
    priority = models.PositiveSmallIntegerField(
        verbose_name=_("priority"), choices=Priority.choices, default=Priority.MEDIUM
    )
    category = models.CharField(verbose_name=_("category"), max_length=50, blank=True, default="")
    # No index of its own on creator or handler: ticket_creator_idx and ticket_handler_idx
    # lead with them. Every status change of a ticket writes an entry in each of its indexes.
    creator = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("creator"),
        on_delete=models.PROTECT,
        related_name="created_tickets",
        db_index=False,
    )
    handler_group = models.ForeignKey(
        "handler_groups.HandlerGroup",
        verbose_name=_("handler group"),
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="tickets",
    )
    handler = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("handler"),
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="handled_tickets",
        db_index=False,
    )
    process_status = models.PositiveSmallIntegerField(
        verbose_name=_("process status"),
        choices=ProcessStatus.choices,
        default=ProcessStatus.APPROVING,
    )
    ticket_status = models.PositiveSmallIntegerField(
        verbose_name=_("ticket status"),
        choices=TicketStatus.choices,
        default=TicketStatus.SUBMITTED,
    )
    submitted_time = models.DateTimeField(verbose_name=_("submitted time"))
    approved_time = models.DateTimeField(verbose_name=_("approved time"), null=True, blank=True)
    assigned_time = models.DateTimeField(verbose_name=_("assigned time"), null=True, blank=True)
    accepted_time = models.DateTimeField(verbose_name=_("accepted time"), null=True, blank=True)
    # The first acceptance: it answers the response clock, and a later transfer (which clears
    # accepted_time for the new handler) does not restart it.
    responded_time = models.DateTimeField(verbose_name=_("responded time"), null=True, blank=True)
    completed_time = models.DateTimeField(verbose_name=_("completed time"), null=True, blank=True)
    closed_time = models.DateTimeField(verbose_name=_("closed time"), null=True, blank=True)
    response_deadline = models.DateTimeField(
        verbose_name=_("response deadline"), null=True, blank=True
    )
    resolve_deadline = models.DateTimeField(
        verbose_name=_("resolve deadline"), null=True, blank=True
    )
    response_timeout = models.BooleanField(
        verbose_name=_("response timeout"), default=False, db_default=False
    )
    resolve_timeout = models.BooleanField(
        verbose_name=_("resolve timeout"), default=False, db_default=False
    )
    reply_count = models.PositiveIntegerField(
        verbose_name=_("reply count"), default=0, db_default=0
    )
    # What the applicant may count: public replies only (reply_count includes internal notes).
    public_reply_count = models.PositiveIntegerField(
        verbose_name=_("public reply count"), default=0, db_default=0
    )
    # SLA engine state: the matched rule, warnings sent, and "waiting on applicant".
    sla_rule = models.ForeignKey(
        "sla.SlaRule",
        verbose_name=_("SLA rule"),
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="tickets",
    )
    response_warned = models.BooleanField(
        verbose_name=_("response warned"), default=False, db_default=False
    )
    resolve_warned = models.BooleanField(
        verbose_name=_("resolve warned"), default=False, db_default=False
    )
    sla_paused = models.BooleanField(verbose_name=_("SLA paused"), default=False, db_default=False)
    sla_paused_at = models.DateTimeField(verbose_name=_("SLA paused at"), null=True, blank=True)
    # When the ticket last started waiting in its group's pool (overflow measures from here).
    queued_time = models.DateTimeField(verbose_name=_("queued time"), null=True, blank=True)
    # The team's labels (ticketing.tags): lower-cased, trimmed, at most TAG_MAX_LENGTH
    # characters each and TAGS_PER_TICKET per ticket; ticket_tags_idx (GIN) serves `?tag=`.
    # Applicants never see them.
    tags = ArrayField(
        models.CharField(max_length=50),
        verbose_name=_("tags"),
        default=list,
        db_default=[],
        blank=True,
    )
    # The category's custom fields (ticketing.fields): {key: value}, validated against the
    # TicketField rows; ticket_fields_idx (GIN, jsonb_path_ops) serves `?field.<key>=`.
    fields = models.JSONField(
        verbose_name=_("fields"),
        default=dict,
        db_default=models.Value({}, models.JSONField()),
        blank=True,
    )
    # A duplicate merged into another ticket (collaboration.services.ticket_merge): closed,
    # its conversation moved there. The other way, ticket_merged_into_idx finds what was
    # merged into a ticket.
    merged_into = models.ForeignKey(
        "self",
        verbose_name=_("merged into"),
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="merged_from",
        db_index=False,
    )

    class Meta:
        verbose_name = _("ticket")
        verbose_name_plural = _("tickets")
        db_table = "oa_ticket_bill"
        ordering = ["-id"]
        permissions = [
            ("approve_ticket", "Can approve or reject submitted tickets"),
            ("handle_tickets", "Can handle tickets (the no-group pool) without being in a group"),
        ]
        constraints = [
            models.UniqueConstraint(fields=["bill_code"], name="oa_ticket_bill_bill_code_key"),
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
            # The pool by age, newest (or oldest) first: the console's default order of
            # Pending and All (workflow.selectors.sort_tickets), and its cursor.
            models.Index(fields=["process_status", "submitted_time", "id"], name="ticket_age_idx"),
            # The approvers' queue, oldest first (workflow.selectors.awaiting_approval_for) and
            # its cursor: only the tickets awaiting approval, a few hundred at any age.
            models.Index(
                fields=["submitted_time", "id"],
                name="ticket_approvals_idx",
                condition=models.Q(process_status=1),
            ),
            # Not declared here: ticket_search_trgm_idx, the trigram index of search
            # (ticketing/search.py), an expression index built by migration 0012 in SQL; and
            # the full-text column search_vector (stored, generated by the database) with
            # ticket_search_vector_idx, made by search/migrations/0001 (search/).
            # Insight: a group's arrivals by approval time (queue metrics' candidates,
            # staffing's forecast), a range of the index rather than the group's history.
            models.Index(
                fields=["handler_group", "approved_time"], name="ticket_group_approved_idx"
            ),
            # Insight: a group's and a handler's tickets by when they stopped being worked
            # (worked_until): queue metrics' pool picks and occupancy, staffing's handle time
            # read the tickets worked during a window without reading those finished before.
            models.Index(F("handler_group"), worked_until(), name="ticket_group_finished_idx"),
            models.Index(F("handler"), worked_until(), name="ticket_handler_finished_idx"),
            # `?tag=` and `?field.<key>=`: containment (@>) through GIN, an index scan at any
            # size (tests/ticketing/test_toolbox_plans.py).
            GinIndex(fields=["tags"], name="ticket_tags_idx"),
            GinIndex(fields=["fields"], opclasses=["jsonb_path_ops"], name="ticket_fields_idx"),
            # What was merged into a ticket: a few rows, of the few merged tickets.
            models.Index(
                fields=["merged_into"],
                name="ticket_merged_into_idx",
                condition=models.Q(merged_into__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.bill_code} {self.title}"


class ReplyType(models.IntegerChoices):
    PUBLIC = 1, _("public")
    INTERNAL = 2, _("internal")
    SYSTEM = 3, _("system")


class TicketReply(models.Model):
    ticket = models.ForeignKey(
        Ticket, verbose_name=_("ticket"), on_delete=models.CASCADE, related_name="replies"
    )
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("author"),
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="ticket_replies",
    )
    reply_type = models.PositiveSmallIntegerField(
        verbose_name=_("reply type"), choices=ReplyType.choices
    )
    content = models.TextField(verbose_name=_("content"))
    created = models.DateTimeField(verbose_name=_("created"), auto_now_add=True)
    # Moved here from a duplicate merged into this ticket ("from #BILL" on the page).
    merged_from = models.ForeignKey(
        Ticket,
        verbose_name=_("merged from"),
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_index=False,
    )

    class Meta:
        verbose_name = _("ticket reply")
        verbose_name_plural = _("ticket replies")
        db_table = "oa_ticket_reply"
        ordering = ["id"]
        # Not declared here: search_vector (stored, generated by the database) and its GIN
        # index reply_search_vector_idx, made by search/migrations/0001 (search/).
        indexes = [models.Index(fields=["ticket", "id"], name="reply_ticket_idx")]

    def __str__(self) -> str:
        return f"reply {self.pk} on {self.ticket_id}"


class TicketRecord(models.Model):
    """Append-only audit trail: every state change, assignment, SLA event and admin edit."""

    ticket = models.ForeignKey(
        Ticket, verbose_name=_("ticket"), on_delete=models.CASCADE, related_name="records"
    )
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("actor"),
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="ticket_records",
    )
    action = models.CharField(verbose_name=_("action"), max_length=40)
    from_status = models.PositiveSmallIntegerField(
        verbose_name=_("from status"), null=True, blank=True
    )
    to_status = models.PositiveSmallIntegerField(verbose_name=_("to status"), null=True, blank=True)
    created = models.DateTimeField(verbose_name=_("created"))
    detail = models.JSONField(verbose_name=_("detail"), default=dict, blank=True)

    class Meta:
        verbose_name = _("ticket record")
        verbose_name_plural = _("ticket records")
        db_table = "oa_ticket_record"
        ordering = ["id"]
        indexes = [models.Index(fields=["ticket", "id"], name="record_ticket_idx")]

    def __str__(self) -> str:
        return f"{self.action} on {self.ticket_id}"


def translated(default: str, translations: dict, language: str | None) -> str:
    """`default` in `language` when `translations` has it ({"zh-hans": "打印机"}), trying the
    base language too (zh-hans → zh); otherwise `default`."""
    if not language or not translations:
        return default
    language = language.lower()
    return translations.get(language) or translations.get(language.split("-")[0]) or default


class Category(models.Model):
    """What a ticket is about. The ticket keeps the category's name (its `category`, the key
    the SLA rules and mailboxes match on), so that the API accepts and returns a name; a
    rename carries over to them (ticketing.categories.category_update). Its handler group
    is where a ticket submitted without one goes."""

    name = models.CharField(verbose_name=_("name"), max_length=50, unique=True)
    # The name in other languages: {"zh-hans": "打印机"}.
    translations = models.JSONField(verbose_name=_("translations"), default=dict, blank=True)
    handler_group = models.ForeignKey(
        "handler_groups.HandlerGroup",
        verbose_name=_("handler group"),
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="categories",
    )
    active = models.BooleanField(verbose_name=_("active"), default=True)
    order = models.PositiveIntegerField(verbose_name=_("order"), default=0)

    class Meta:
        verbose_name = _("category")
        verbose_name_plural = _("categories")
        db_table = "ticket_category"
        ordering = ["order", "name"]

    def __str__(self) -> str:
        return self.name

    def label(self, language: str | None = None) -> str:
        return translated(self.name, self.translations, language)


class FieldType(models.TextChoices):
    TEXT = "text", _("text")
    NUMBER = "number", _("number")
    DATE = "date", _("date")
    CHOICE = "choice", _("choice")
    MULTI_CHOICE = "multi_choice", _("multiple choice")
    USER = "user", _("user")
    CHECKBOX = "checkbox", _("checkbox")


class TicketField(models.Model):
    """A custom field of the tickets of some categories (all, when `categories` is empty):
    its value lives in Ticket.fields under `key`."""

    key = models.SlugField(verbose_name=_("key"), max_length=40, unique=True)
    label = models.CharField(verbose_name=_("label"), max_length=100)
    label_translations = models.JSONField(
        verbose_name=_("label translations"), default=dict, blank=True
    )
    type = models.CharField(verbose_name=_("type"), max_length=20, choices=FieldType.choices)
    required = models.BooleanField(verbose_name=_("required"), default=False)
    # For choice and multi_choice: the values offered, in order.
    choices = models.JSONField(verbose_name=_("choices"), default=list, blank=True)
    help_text = models.CharField(verbose_name=_("help text"), max_length=300, blank=True)
    categories = models.ManyToManyField(
        Category, verbose_name=_("categories"), blank=True, related_name="ticket_fields"
    )
    order = models.PositiveIntegerField(verbose_name=_("order"), default=0)
    active = models.BooleanField(verbose_name=_("active"), default=True)

    class Meta:
        verbose_name = _("ticket field")
        verbose_name_plural = _("ticket fields")
        db_table = "ticket_field"
        ordering = ["order", "id"]

    def __str__(self) -> str:
        return self.key

    def label_in(self, language: str | None = None) -> str:
        return translated(self.label, self.label_translations, language)


class Tag(models.Model):
    """Every tag in use, with how many tickets carry it (kept by ticketing.tags in the same
    transaction as the tickets' own `tags`): what `GET /api/tags/?q=` completes from."""

    name = models.CharField(verbose_name=_("name"), max_length=50, unique=True)
    ticket_count = models.PositiveIntegerField(verbose_name=_("tickets"), default=0)

    class Meta:
        verbose_name = _("tag")
        verbose_name_plural = _("tags")
        db_table = "ticket_tag"
        ordering = ["-ticket_count", "name"]

    def __str__(self) -> str:
        return self.name
