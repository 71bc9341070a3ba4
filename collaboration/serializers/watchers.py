"""The watchers API's shapes: a watcher as anyone who sees the ticket may read it, what adding
one takes, and the composer's mention candidates."""

from rest_framework import serializers

from collaboration.models import WatcherSource

BIGINT_MAX = 2**63 - 1


def display_name(user) -> str:
    """A person's full name, else their username."""
    return user.get_full_name() or user.get_username()


class WatcherOutput(serializers.Serializer):
    user_id = serializers.IntegerField()
    username = serializers.CharField(source="user.username")
    name = serializers.SerializerMethodField(help_text="Full name, else the username.")
    # (a field named like Field.source, the attribute it shadows here by design)
    source = serializers.ChoiceField(  # type: ignore[assignment]
        choices=WatcherSource.choices,
        help_text="How they came to watch it: `team` (added by the ticket's team), `cc` "
        "(copied in by the applicant), `self` (they follow it), `merge` (from a merged "
        "duplicate).",
    )
    added = serializers.DateTimeField()
    added_by_id = serializers.IntegerField(allow_null=True)

    def get_name(self, watcher) -> str:
        return display_name(watcher.user)


class WatcherInput(serializers.Serializer):
    user_id = serializers.IntegerField(
        min_value=1, max_value=BIGINT_MAX, help_text="The person to add (yourself to follow it)."
    )


class MentionableQuery(serializers.Serializer):
    q = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=150,
        default="",
        help_text="The start of a username, first or last name (any case); a leading @ is ignored.",
    )


class MentionableOutput(serializers.Serializer):
    username = serializers.CharField()
    name = serializers.SerializerMethodField(help_text="Full name, else the username.")

    def get_name(self, user) -> str:
        return display_name(user)
