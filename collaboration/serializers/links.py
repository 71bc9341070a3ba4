"""The links API's shapes: what a link says from the ticket in hand, and what adding one
takes."""

from rest_framework import serializers

from collaboration.selectors.links import ORDER, status_label
from collaboration.services.links import KINDS
from ticketing.models import ProcessStatus, TicketStatus

BIGINT_MAX = 2**63 - 1


class LinkedTicketOutput(serializers.Serializer):
    id = serializers.IntegerField()
    bill_code = serializers.CharField()
    title = serializers.CharField()
    ticket_status = serializers.ChoiceField(choices=TicketStatus.choices)
    process_status = serializers.ChoiceField(choices=ProcessStatus.choices)
    status_label = serializers.SerializerMethodField(
        help_text="Where it stands, in the caller's language: its approval state until "
        "approved, then its handling state."
    )

    def get_status_label(self, ticket) -> str:
        return status_label(ticket)


class LinkOutput(serializers.Serializer):
    id = serializers.IntegerField(
        allow_null=True,
        help_text="The link's id (for DELETE); null for a merge, which is not removable here.",
    )
    kind = serializers.ChoiceField(
        choices=ORDER,
        help_text="From this ticket's side: `parent` (the other is its parent), `child`, "
        "`related`, `merged_into` (this ticket was merged into the other), `merged_from`.",
    )
    ticket = LinkedTicketOutput(help_text="The other ticket.")
    created = serializers.DateTimeField(
        allow_null=True,
        help_text="When it was linked; for a merge, when the duplicate was closed.",
    )


class LinkInput(serializers.Serializer):
    ticket = serializers.IntegerField(
        min_value=1, max_value=BIGINT_MAX, help_text="The id of the ticket to link."
    )
    kind = serializers.ChoiceField(
        choices=KINDS,
        help_text="From this ticket's side: `parent` makes `ticket` its parent, `child` "
        "makes it its child.",
    )
