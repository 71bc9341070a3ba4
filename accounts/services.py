"""Writes on API tokens."""

from django.db import transaction
from knox.models import get_token_model


def tokens_revoke_all(*, user_id: int) -> int:
    """Deletes every API token of the user; returns how many there were."""
    with transaction.atomic():
        deleted, _ = get_token_model().objects.filter(user_id=user_id).delete()
    return deleted
