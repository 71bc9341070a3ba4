from celery import shared_task

from . import delivery
from .sending import DELIVER_TASK


@shared_task(
    name=DELIVER_TASK,
    ignore_result=True,
    # Inside the lease: an attempt cut short is retried (soft limit: a transient failure) or
    # recovered by the sweep (hard limit), never raced by the sweep while it still runs.
    soft_time_limit=delivery.ATTEMPT_TIME_LIMIT_SECONDS,
    time_limit=delivery.ATTEMPT_TIME_LIMIT_SECONDS + 3,
)
def deliver(delivery_id: int) -> str:
    """Perform one outbox delivery; safe to run twice (the claim is compare-and-set)."""
    return delivery.delivery_attempt(delivery_id=delivery_id)


@shared_task(name="notifications.outbox_sweep", ignore_result=True)
def outbox_sweep() -> int:
    return delivery.outbox_sweep()
