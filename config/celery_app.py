import os

from celery import Celery
from celery.signals import worker_process_shutdown

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")

app = Celery("ticketdesk")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_process_shutdown.connect
def _forget_live_gauges(pid=None, **_kwargs):
    from config.metrics import mark_process_dead

    mark_process_dead(pid or os.getpid())
