import os

from celery import Celery
from celery.signals import worker_process_shutdown
from kombu.exceptions import OperationalError

from config.outage import BROKER

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")


class TicketdeskCelery(Celery):
    """Celery whose publishing knows when the broker is down: every `.delay()`,
    `apply_async` and `send_task` goes through send_task, which, for a moment after a failure,
    refuses at once (OperationalError, as Celery's own failure) instead of paying the connect
    timeout and retries again; the outage is logged once (config/outage.py). Every caller
    catches the refusal, and the periodic sweeps enqueue the work again (docs/operations.md)."""

    def send_task(self, *args, **kwargs):
        if not BROKER.available():
            raise OperationalError("the Celery broker is unavailable (skipped for a moment)")
        try:
            result = super().send_task(*args, **kwargs)
        except OperationalError as exc:
            BROKER.failed(exc)
            raise
        BROKER.recovered()
        return result


app = TicketdeskCelery("ticketdesk")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_process_shutdown.connect
def _forget_live_gauges(pid=None, **_kwargs):
    from config.metrics import mark_process_dead

    mark_process_dead(pid or os.getpid())
