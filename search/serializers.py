from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from sla.serializers import DayOrDateTimeField
from ticketing.models import Priority, TicketStatus
from ticketing.tags import TAG_MAX_LENGTH
from workflow.serializers import TicketOutput

from .text import MAX_QUERY_LENGTH, MAX_WORDS, parse, words

HIGHLIGHT_FIELDS = ("title", "content", "reply", "note", "attachment")


class SearchQuery(serializers.Serializer):
    """`q`: words to find (all of them, in one document: the ticket's title and content, a
    reply or a note, a file name); a bill code finds its ticket. The pool's filters (a tag;
    the custom fields' `field.<key>=<value>` are read beside it, ticketing.fields), and the
    submission window [from, to)."""

    q = serializers.CharField(max_length=MAX_QUERY_LENGTH)
    ticket_status = serializers.ChoiceField(choices=TicketStatus.choices, required=False)
    priority = serializers.ChoiceField(choices=Priority.choices, required=False)
    handler_group = serializers.IntegerField(min_value=1, required=False)
    category = serializers.CharField(max_length=50, required=False)
    tag = serializers.CharField(
        max_length=TAG_MAX_LENGTH,
        required=False,
        help_text="Only tickets carrying this tag (any case). Outside the ticket's team it "
        "finds nothing: a tag is the team's.",
    )
    to = DayOrDateTimeField(end_of_range=True, required=False)

    def validate_q(self, value: str) -> str:
        if parse(value).is_empty() or words(value) == 0:
            raise serializers.ValidationError(_("Give at least one word to search for."))
        if words(value) > MAX_WORDS:
            raise serializers.ValidationError(_("At most %(count)d words.") % {"count": MAX_WORDS})
        return value

    def validate(self, attrs):
        if "from" in attrs and "to" in attrs and attrs["from"] >= attrs["to"]:
            raise serializers.ValidationError({"to": [_("Must be after 'from'.")]})
        return attrs


# "from" is a Python keyword: declare the field under its query-string name.
SearchQuery._declared_fields["from"] = DayOrDateTimeField(required=False)


class HighlightOutput(serializers.Serializer):
    field = serializers.ChoiceField(choices=HIGHLIGHT_FIELDS)
    snippet = serializers.CharField(
        help_text="HTML: the text escaped, with <mark>…</mark> around each match."
    )
    reply_id = serializers.IntegerField(
        required=False, help_text="The reply or note (or the reply a file came with)."
    )
    attachment_id = serializers.IntegerField(required=False)


class SearchResultOutput(TicketOutput):
    highlights = serializers.SerializerMethodField()

    class Meta(TicketOutput.Meta):
        fields = [*TicketOutput.Meta.fields, "highlights"]
        read_only_fields = fields

    @extend_schema_field(HighlightOutput(many=True))
    def get_highlights(self, ticket) -> list:
        return self.context.get("highlights", {}).get(ticket.pk, [])
