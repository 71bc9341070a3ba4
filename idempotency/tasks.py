from celery import shared_task

from . import services

PURGE_TASK = "idempotency.purge"


@shared_task(name=PURGE_TASK, ignore_result=True)
def purge() -> int:
    """Keys older than 24 hours (hourly, from the migration's schedule); safe to run twice."""
    return services.idempotency_purge()
