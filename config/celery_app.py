import os

from celery import Celery, platforms
from celery.signals import beat_init, worker_process_shutdown

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")

app = Celery("ticketdesk")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_process_shutdown.connect
def _forget_live_gauges(pid=None, **_kwargs):
    from config.metrics import mark_process_dead

    mark_process_dead(pid or os.getpid())


@beat_init.connect
def _stop_beat_between_ticks(sender, **_kwargs):
    """On SIGTERM or SIGINT, end beat's loop and let it save its schedule on the way out
    (celery.beat.Service.start's `finally`), instead of Celery's own handler, which saves it
    inside the signal handler: a signal that lands while the scheduler is in a database call
    makes that save wait for the connection's lock, which the interrupted call holds, and beat
    hangs for good (seen under load through PgBouncer: beat alive 60 s after SIGTERM). Beat
    now stops once the current tick's sleep ends (at most beat_max_loop_interval)."""

    def stop(_signum, _frame):
        sender.stop()

    platforms.signals.update(SIGTERM=stop, SIGINT=stop)
