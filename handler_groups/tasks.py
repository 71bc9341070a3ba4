from celery import shared_task

from . import presence


@shared_task(name="handler_groups.presence_sweep", ignore_result=True)
def presence_sweep() -> dict:
    return presence.presence_sweep()


@shared_task(name="handler_groups.reconcile", ignore_result=True)
def reconcile() -> int:
    return presence.reconcile()
