from celery import shared_task

from .scanner import sla_scan


@shared_task(name="sla.scan", ignore_result=True, time_limit=120, soft_time_limit=100)
def scan() -> dict:
    """Run every minute by celery-beat (installed by a data migration)."""
    return sla_scan().counts
