"""The outbox's live figures for /metrics, computed at scrape time (config/metrics.py)."""

from django.db.models import Count, Min
from django.utils import timezone

from config.metrics import gauge, scrape_gauges

from .models import DeliveryStatus, OutboxDelivery

CHANNELS = ("email", "webhook")


@scrape_gauges
def outbox_gauges():
    now = timezone.now()
    backlog = gauge(
        "notifications_outbox_backlog",
        "Deliveries not yet sent or given up (pending or being sent)",
        ["channel"],
    )
    overdue = gauge(
        "notifications_outbox_oldest_due_seconds",
        "How long the longest-due pending delivery has been due (0 when none)",
        ["channel"],
    )
    rows = {
        row["channel"]: row
        for row in OutboxDelivery.objects.filter(
            status__in=(DeliveryStatus.PENDING, DeliveryStatus.SENDING)
        )
        .values("channel")
        .annotate(n=Count("pk"), due=Min("next_attempt_at"))
    }
    for channel in sorted({*CHANNELS, *rows}):
        row = rows.get(channel)
        backlog.add_metric([channel], row["n"] if row else 0)
        late = (now - row["due"]).total_seconds() if row and row["due"] else 0
        overdue.add_metric([channel], max(late, 0))
    return [backlog, overdue]
