from django.core.exceptions import ObjectDoesNotExist
from django.db.models import prefetch_related_objects
from django.db.models.manager import BaseManager
from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from attachments.selectors import by_reply, own_files
from attachments.serializers import AttachmentOutput
from satisfaction.selectors import survey_of
from satisfaction.serializers import TicketSatisfactionOutput
from ticketing.models import Priority, ReplyType, Ticket, TicketRecord, TicketReply, TicketStatus

from .selectors import HANDLER_ME, HANDLER_NONE, POOL_SORTS, SLA_STATES


class TicketSubmitInput(serializers.Serializer):
    title = serializers.CharField(max_length=200)
    content = serializers.CharField(max_length=50_000)
    priority = serializers.ChoiceField(choices=Priority.choices)
    category = serializers.CharField(
        max_length=50,
        required=False,
        allow_blank=True,
        default="",
        help_text="An active category's name (GET /api/categories/); 400 for any other.",
    )
    handler_group_id = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        help_text="Omitted or null: the category's handler group, if it has one.",
    )
    attachment_ids = serializers.ListField(
        child=serializers.IntegerField(min_value=1),
        required=False,
        default=list,
        max_length=50,
        help_text="Your uploads (POST /api/attachments/) to attach.",
    )
    fields = serializers.DictField(  # type: ignore[assignment]
        required=False,
        default=dict,
        help_text="The category's custom fields, {key: value} (GET /api/ticket-fields/"
        "?category=<name> lists them); every required one must be given. 400 naming "
        "`fields.<key>`: a key not of this category, a value its type cannot hold, a choice "
        "not offered, a user who does not exist, a required field missing. Values: text a "
        'string, number a JSON number, date "YYYY-MM-DD", choice one of its choices, '
        "multi_choice a list of them, user a user id, checkbox true or false.",
    )


class SlaOutcomeOutput(serializers.Serializer):
    """The final SLA result, once the ticket is completed (business minutes)."""

    response_minutes = serializers.DecimalField(max_digits=12, decimal_places=2, allow_null=True)
    resolve_minutes = serializers.DecimalField(max_digits=12, decimal_places=2, allow_null=True)
    response_met = serializers.BooleanField(allow_null=True)
    resolve_met = serializers.BooleanField(allow_null=True)
    completed_time = serializers.DateTimeField()


class SlaEventOutput(serializers.Serializer):
    """One level of the ticket's escalation ladder on one clock."""

    clock = serializers.CharField()
    level = serializers.IntegerField()
    due_at = serializers.DateTimeField(
        allow_null=True, help_text="Null while the clock is paused with this level ahead."
    )
    fired_at = serializers.DateTimeField(allow_null=True, help_text="Null until it fires.")
    state = serializers.ChoiceField(choices=["pending", "fired", "void", "skipped"])


class TicketRefOutput(serializers.Serializer):
    """Another ticket, named: where a merged duplicate went, or where a reply came from."""

    id = serializers.IntegerField()
    bill_code = serializers.CharField()


def ticket_ref(ticket: Ticket | None) -> dict | None:
    return None if ticket is None else {"id": ticket.pk, "bill_code": ticket.bill_code}


class TicketListOutput(serializers.ListSerializer):
    """A page of tickets: the few merged ones' targets read in one query (none when the page
    has no merged ticket), not one per row and not a join on every list."""

    def to_representation(self, data):
        tickets = list(data.all() if isinstance(data, BaseManager) else data)
        merged = [t for t in tickets if t.merged_into_id is not None]
        if merged:
            prefetch_related_objects(merged, "merged_into")
        return super().to_representation(tickets)


class TicketOutput(serializers.ModelSerializer):
    priority_label = serializers.CharField(source="get_priority_display", read_only=True)
    process_status_label = serializers.CharField(
        source="get_process_status_display", read_only=True
    )
    ticket_status_label = serializers.CharField(source="get_ticket_status_display", read_only=True)
    creator_id = serializers.IntegerField(read_only=True)
    handler_group_id = serializers.IntegerField(read_only=True, allow_null=True)
    handler_id = serializers.IntegerField(
        read_only=True,
        allow_null=True,
        help_text="The handler; null for viewers outside the team (applicants, approvers).",
    )
    sla_rule_id = serializers.IntegerField(
        read_only=True,
        allow_null=True,
        help_text="The matched SLA rule; null for viewers outside the team.",
    )
    reply_count = serializers.IntegerField(
        read_only=True,
        help_text="Replies on the ticket; for viewers outside the team, public replies only.",
    )
    sla_outcome = serializers.SerializerMethodField()
    sla_events = serializers.SerializerMethodField(
        help_text="Each level of the ticket's escalation ladder (team only; null for "
        "applicants and approvers), re-timed when its deadlines move."
    )
    attachments = serializers.SerializerMethodField(
        help_text="The files submitted with the ticket (replies list their own)."
    )
    satisfaction = serializers.SerializerMethodField(
        help_text="The applicant's rating once asked (at completion): for the team and the "
        "applicant; null for anyone else, and before anyone was asked."
    )
    merged_into = serializers.SerializerMethodField(
        help_text="Where a duplicate merged into another ticket went (it is closed; its "
        "conversation is there); null for a ticket that was not merged."
    )

    class Meta:
        model = Ticket
        list_serializer_class = TicketListOutput
        fields = [
            "id",
            "bill_code",
            "title",
            "content",
            "priority",
            "priority_label",
            "category",
            "creator_id",
            "handler_group_id",
            "handler_id",
            "process_status",
            "process_status_label",
            "ticket_status",
            "ticket_status_label",
            "submitted_time",
            "approved_time",
            "assigned_time",
            "accepted_time",
            "completed_time",
            "closed_time",
            "response_deadline",
            "resolve_deadline",
            "response_timeout",
            "resolve_timeout",
            "reply_count",
            "sla_rule_id",
            "response_warned",
            "resolve_warned",
            "sla_paused",
            "sla_paused_at",
            "responded_time",
            "sla_outcome",
            "sla_events",
            "satisfaction",
            "attachments",
            "merged_into",
            "tags",
            "fields",
        ]
        read_only_fields = fields
        extra_kwargs = {
            "tags": {
                "allow_null": True,
                "help_text": "The team's tags (lower case); null for viewers outside the team.",
            },
            "fields": {
                "help_text": "The category's custom fields, {key: value} (GET "
                "/api/ticket-fields/ describes them): text, number, date (YYYY-MM-DD), choice "
                "(one of its choices), multi_choice (a list of them), user (a user id), "
                "checkbox (true or false)."
            },
        }

    def to_representation(self, ticket: Ticket) -> dict:
        """Staff-side viewers get every field. Everyone else who may see the ticket (its
        applicant, approvers) gets its public story: public replies counted, no handler id,
        no SLA rule. Pass the caller's `access.Audience` as context["audience"] (or decide
        with context["internal"], e.g. for a transfer out of the caller's groups)."""
        data = super().to_representation(ticket)
        internal = self.context.get("internal")
        if internal is None:
            audience = self.context.get("audience")
            internal = audience is not None and audience.sees_internals(ticket)
        if not internal:
            data["reply_count"] = ticket.public_reply_count
            data["handler_id"] = None
            data["sla_rule_id"] = None
            data["tags"] = None
        else:
            data["sla_events"] = SlaEventOutput(ticket.sla_events.all(), many=True).data
        return data

    @extend_schema_field(AttachmentOutput(many=True))
    def get_attachments(self, ticket: Ticket) -> list:
        found = getattr(ticket, "own_files", None)  # (prefetched by lists: OWN_FILES)
        if found is None:
            found = own_files([ticket]).get(ticket.pk, [])
        return list(AttachmentOutput(found, many=True).data)

    @extend_schema_field(TicketRefOutput(allow_null=True))
    def get_merged_into(self, ticket: Ticket) -> dict | None:
        return ticket_ref(ticket.merged_into)

    @extend_schema_field(TicketSatisfactionOutput(allow_null=True))
    def get_satisfaction(self, ticket: Ticket) -> dict | None:
        # Who reads it as to_representation decides who is on the team; the applicant too.
        internal = self.context.get("internal")
        audience = self.context.get("audience")
        if internal is None:
            internal = audience is not None and audience.sees_internals(ticket)
        applicant = audience is not None and audience.user_id == ticket.creator_id
        if not (internal or applicant):
            return None
        survey = survey_of(ticket)  # (select_related by the lists: no query per row)
        if survey is None:
            return None
        return {"rating": survey.rating, "comment": survey.comment, "answered": survey.answered}

    @extend_schema_field(SlaEventOutput(many=True, allow_null=True))
    def get_sla_events(self, ticket: Ticket) -> None:
        return None  # filled in by to_representation for the team only

    @extend_schema_field(SlaOutcomeOutput(allow_null=True))
    def get_sla_outcome(self, ticket: Ticket) -> dict | None:
        try:
            outcome = ticket.sla_outcome
        except ObjectDoesNotExist:
            return None
        return SlaOutcomeOutput(outcome).data


class RejectInput(serializers.Serializer):
    reason = serializers.CharField(max_length=2000)


class DeclineInput(serializers.Serializer):
    reason = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")


class ReopenInput(serializers.Serializer):
    reason = serializers.CharField(
        max_length=2000,
        required=False,
        allow_blank=True,
        default="",
        help_text="Why it is taken up again (optional): the applicant and the handler read it.",
    )


class TransferInput(serializers.Serializer):
    handler_id = serializers.IntegerField(required=False, allow_null=True, min_value=1)
    handler_group_id = serializers.IntegerField(required=False, allow_null=True, min_value=1)

    def validate(self, attrs):
        if attrs.get("handler_id") is None and attrs.get("handler_group_id") is None:
            raise serializers.ValidationError(
                {"non_field_errors": [_("Give handler_id, handler_group_id or both.")]}
            )
        return attrs


REPLY_TYPES = {"public": ReplyType.PUBLIC, "internal": ReplyType.INTERNAL}


class ReplyInput(serializers.Serializer):
    reply_type = serializers.ChoiceField(choices=list(REPLY_TYPES), default="public")
    content = serializers.CharField(max_length=50_000)
    attachment_ids = serializers.ListField(
        child=serializers.IntegerField(min_value=1),
        required=False,
        default=list,
        max_length=50,
        help_text="Your uploads (POST /api/attachments/) to attach.",
    )


class ReplyOutput(serializers.ModelSerializer):
    reply_type = serializers.SerializerMethodField()
    author_id = serializers.IntegerField(read_only=True, allow_null=True)
    attachments = serializers.SerializerMethodField()
    merged_from = serializers.SerializerMethodField(
        help_text="The duplicate this reply was moved from when it was merged into this "
        "ticket; null for a reply written here."
    )

    class Meta:
        model = TicketReply
        fields = [
            "id",
            "ticket_id",
            "author_id",
            "reply_type",
            "content",
            "created",
            "attachments",
            "merged_from",
        ]
        read_only_fields = fields

    @extend_schema_field(TicketRefOutput(allow_null=True))
    def get_merged_from(self, reply: TicketReply) -> dict | None:
        return ticket_ref(reply.merged_from)

    @extend_schema_field(AttachmentOutput(many=True))
    def get_attachments(self, reply: TicketReply) -> list:
        files = self.context.get("reply_files")
        if files is None:
            files = by_reply([reply])
        return list(AttachmentOutput(files.get(reply.pk, []), many=True).data)

    def get_reply_type(self, reply: TicketReply) -> str:
        return ReplyType(reply.reply_type).name.lower()


class RecordOutput(serializers.ModelSerializer):
    actor_id = serializers.IntegerField(read_only=True, allow_null=True)

    class Meta:
        model = TicketRecord
        fields = ["id", "action", "actor_id", "from_status", "to_status", "created", "detail"]
        read_only_fields = fields


POOL_VIEWS = ("pending", "my_handling", "all")


class PoolQuery(serializers.Serializer):
    """The pool's filters (workflow.selectors.pool_for's keywords; saved views keep the same
    ones, toolbox.saved_views)."""

    view = serializers.ChoiceField(choices=POOL_VIEWS, default="pending")
    priority = serializers.ChoiceField(choices=Priority.choices, required=False)
    category = serializers.CharField(max_length=50, required=False)
    ticket_status = serializers.ChoiceField(choices=TicketStatus.choices, required=False)
    status = serializers.ListField(
        child=serializers.ChoiceField(choices=TicketStatus.choices),
        required=False,
        max_length=len(TicketStatus.choices),
        source="statuses",
        help_text=_("Any of these statuses (repeat the parameter: status=2&status=3)."),
    )
    handler_group = serializers.IntegerField(min_value=1, required=False)
    handler = serializers.RegexField(
        r"^(me|none|[1-9][0-9]{0,9})$",
        required=False,
        help_text=_('"me", "none" (nobody yet) or a person\'s id.'),
        error_messages={"invalid": _('Give "me", "none" or a person\'s id.')},
    )
    sla = serializers.ChoiceField(
        choices=SLA_STATES,
        required=False,
        help_text=_(
            "response_due_1h / resolve_due_1h: that deadline within the hour (not yet passed); "
            "breached: a clock timed out; paused: waiting on the applicant (open tickets)."
        ),
    )
    q = serializers.CharField(max_length=200, required=False)
    sort = serializers.ChoiceField(choices=POOL_SORTS, required=False)
    tag = serializers.CharField(max_length=50, required=False)

    def validate_handler(self, value: str) -> int | str:
        return value if value in (HANDLER_ME, HANDLER_NONE) else int(value)
