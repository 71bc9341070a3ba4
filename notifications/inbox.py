"""Writes on a person's inbox."""

from datetime import datetime

from django.utils import timezone

from .models import Notification


def inbox_mark_read(*, user, notification_id: int, now: datetime | None = None) -> bool:
    """Mark one of the user's messages read. False when it is not theirs (callers 404)."""
    now = now or timezone.now()
    mine = Notification.objects.filter(pk=notification_id, recipient=user)
    if not mine.exists():
        return False
    mine.filter(read_at__isnull=True).update(read_at=now)
    return True


def inbox_mark_all_read(*, user, now: datetime | None = None) -> int:
    now = now or timezone.now()
    return Notification.objects.filter(recipient=user, read_at__isnull=True).update(read_at=now)
