"""The merge API's input: the ticket to merge into."""

from rest_framework import serializers

BIGINT_MAX = 2**63 - 1


class MergeInput(serializers.Serializer):
    into = serializers.IntegerField(
        min_value=1,
        max_value=BIGINT_MAX,
        help_text="The id of the ticket to merge this one into (the target).",
    )
