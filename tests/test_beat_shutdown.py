"""Beat stops on SIGTERM without saving its schedule inside the signal handler: a signal that
lands while the scheduler holds its database connection's lock (mid-query) must not make the
save wait for that lock (config/celery_app.py)."""

import os
import signal
import threading

import pytest
from celery.apps.beat import Beat
from celery.beat import Scheduler, Service

from config.celery_app import app


class SignalledMidQuery(Scheduler):
    """A scheduler whose first tick is "in a database call" (holding the connection's lock, as
    psycopg does) when SIGTERM arrives; closing it (saving the schedule) takes that lock."""

    connection_lock = threading.Lock()
    closed_with_lock: list[bool] = []

    def setup_schedule(self):
        pass

    def tick(self, *args, **kwargs):
        with self.connection_lock:
            os.kill(os.getpid(), signal.SIGTERM)  # handled here, lock held
        return 0.01

    def close(self):
        got = self.connection_lock.acquire(timeout=5)
        self.closed_with_lock.append(got)
        if got:
            self.connection_lock.release()


@pytest.fixture
def restore_signal_handlers():
    saved = {signum: signal.getsignal(signum) for signum in (signal.SIGTERM, signal.SIGINT)}
    yield
    for signum, handler in saved.items():
        signal.signal(signum, handler)


@pytest.mark.usefixtures("restore_signal_handlers")
def test_sigterm_mid_query_stops_beat_and_saves_the_schedule_once_the_query_is_done():
    SignalledMidQuery.closed_with_lock.clear()
    service = Service(app=app, scheduler_cls=SignalledMidQuery, remote_control=False)
    Beat(app=app).install_sync_handler(service)  # what `celery beat` installs before start
    service.start()  # returns once stopped (Celery's own handler would raise out of tick)
    assert SignalledMidQuery.closed_with_lock == [True]
