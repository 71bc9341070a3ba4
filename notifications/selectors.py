from django.db.models import QuerySet

from .models import Notification


def inbox_for(user, *, unread_only: bool = False) -> QuerySet[Notification]:
    qs = Notification.objects.filter(recipient=user).prefetch_related("deliveries").order_by("-id")
    if unread_only:
        qs = qs.filter(read_at__isnull=True)
    return qs


def unread_count(user) -> int:
    return Notification.objects.filter(recipient=user, read_at__isnull=True).count()
