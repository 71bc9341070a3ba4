import os

from celery import Celery
from celery.signals import task_prerun, worker_process_shutdown
from kombu.exceptions import OperationalError
from prometheus_client import Counter

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

# Counted in the process that runs the task (a worker's pool process), so with
# PROMETHEUS_MULTIPROC_DIR set /metrics adds up every worker on the node. A run is counted
# when it starts: one killed half-way and delivered again counts twice, as it ran twice.
TASK_RUNS = Counter("ticketdesk_task_runs_total", "Celery task runs started", ["task"])


@task_prerun.connect
def _count_task_run(sender=None, **_kwargs):
    TASK_RUNS.labels(task=getattr(sender, "name", None) or "unknown").inc()


@worker_process_shutdown.connect
def _forget_live_gauges(pid=None, **_kwargs):
    from config.metrics import mark_process_dead

    mark_process_dead(pid or os.getpid())
