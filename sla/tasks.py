from celery import shared_task

from .scanner import sla_scan


@shared_task(name="sla.scan", ignore_result=True, time_limit=120, soft_time_limit=100)
def scan() -> dict:
    """Every minute by celery-beat: the backstop of the per-second tick (data migrations)."""
    return sla_scan().counts


@shared_task(name="sla.tick", ignore_result=True, time_limit=60, soft_time_limit=50)
def tick() -> dict:
    """Every second by celery-beat (the message expires after 2 s, so a busy worker never
    works through a backlog of stale ticks): what makes levels fire on the second."""
    return sla_scan().counts
