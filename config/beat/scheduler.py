"""django-celery-beat's DatabaseScheduler, safe to run in every node (CELERY_BEAT_SCHEDULER).

Only the holder of the lease reads the schedule and sends; before each send it claims the
task's slot (leases.py), so the old leader's last send and the new one's first cannot both
go. Slots: an interval of N seconds has one slot per N seconds counted from the Unix epoch
(so every node agrees where a slot starts, and a sender that drifts never skips one); a
crontab, solar or clocked schedule's slot is the time it fell due. At most once per slot:
a beat that dies between its claim and its send loses that one slot, the next one goes.

PostgreSQL or Redis briefly down does not stop beat: a failed lease renewal makes it stand
by and ask again; a database error while reading the schedule is logged and the schedule is
read afresh on the next tick; a failed claim sends nothing; a failed send is logged by
Celery as before. Beat keeps running and resumes by itself."""

from __future__ import annotations

import logging
import math
import os
import socket
import threading
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from celery import schedules
from django.db import DatabaseError, InterfaceError, connection, connections
from django_celery_beat.schedulers import DatabaseScheduler, ModelEntry

from .leases import (
    RENEW_SECONDS,
    STANDBY_POLL_SECONDS,
    Holder,
    lease_acquire,
    lease_release,
    slot_claim,
)

logger = logging.getLogger(__name__)

# After a database error, try again this soon (a tick, not a crash and a restart).
RETRY_SECONDS = 1.0
# How long a stop waits for the last sync and the lease's release.
CLOSE_SECONDS = 5.0
_DB_ERRORS = (DatabaseError, InterfaceError)


class slotted(schedules.schedule):  # noqa: N801 (Celery names its schedules in lower case)
    """An interval schedule whose runs fall on epoch-aligned slots: due once the current
    N-second slot is later than the slot of the last run."""

    def __init__(self, every: timedelta, *, nowfun: Any = None, app: Any = None) -> None:
        super().__init__(every, nowfun=nowfun, app=app)
        self.every = every

    def slot_start(self, moment: datetime) -> datetime:
        every = self.every.total_seconds()
        return datetime.fromtimestamp(math.floor(moment.timestamp() / every) * every, tz=UTC)

    def remaining_estimate(self, last_run_at: datetime) -> timedelta:
        following = self.slot_start(self.maybe_make_aware(last_run_at)) + self.every
        return following - self.maybe_make_aware(self.now())

    def is_due(self, last_run_at: datetime) -> schedules.schedstate:
        now = self.maybe_make_aware(self.now())
        current = self.slot_start(now)
        due = current > self.slot_start(self.maybe_make_aware(last_run_at))
        return schedules.schedstate(due, (current + self.every - now).total_seconds())


class SlotEntry(ModelEntry):
    """A periodic task whose interval schedule (if it has one) is `slotted`."""

    def __init__(self, model: Any, app: Any = None) -> None:
        super().__init__(model, app=app)
        schedule: Any = getattr(self, "schedule", None)  # absent if its row was deleted
        if _plain_interval(schedule):
            self.schedule = slotted(schedule.run_every, nowfun=schedule.nowfun, app=self.app)

    def slot(self) -> datetime:
        """The slot a send of this entry now is for (called when it is due)."""
        now = self.schedule.maybe_make_aware(self.schedule.now())
        if isinstance(self.schedule, slotted):
            return self.schedule.slot_start(now)
        due = now + self.schedule.remaining_estimate(self.last_run_at)
        return min(due, now).astimezone(UTC).replace(microsecond=0)


def _plain_interval(schedule: Any) -> bool:
    """An IntervalSchedule's own (not a crontab, solar or clocked one, nor already slotted)."""
    return type(schedule) is schedules.schedule


def _identity() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def _forget_connection() -> None:
    """After a database error the connection may be dead; the next statement opens a new one."""
    try:
        connection.close()
    except _DB_ERRORS:
        pass


class LeasedDatabaseScheduler(DatabaseScheduler):
    Entry = SlotEntry

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.holder = Holder(identity=_identity())
        self.token: int | None = None
        self._next_lease_check = 0.0
        self._closed = False
        super().__init__(*args, **kwargs)

    # -- the lease ------------------------------------------------------------------------------

    def _leading(self) -> bool:
        """Renew or ask for the lease when it is time; True while this beat holds it."""
        clock = time.monotonic()
        if clock < self._next_lease_check:
            return self.token is not None
        try:
            token = lease_acquire(holder=self.holder)
        except _DB_ERRORS as exc:
            logger.warning(
                "beat: cannot reach the database for the lease; standing by",
                extra={"error": str(exc)},
            )
            _forget_connection()
            token = None
        self._next_lease_check = clock + (RENEW_SECONDS if token else STANDBY_POLL_SECONDS)
        if token is not None and self.token is None:
            logger.info(
                "beat: took the lease; sending periodic tasks",
                extra={"holder": self.holder.identity, "token": token},
            )
            # Read the schedule afresh: the previous leader moved the last-run times on.
            self._initial_read = True
            self._heap = None
        elif token is None and self.token is not None:
            logger.warning(
                "beat: lost the lease; standing by", extra={"holder": self.holder.identity}
            )
            self._dirty.clear()  # the new leader's last-run times are the ones that count
        self.token = token
        return token is not None

    def tick(self, *args: Any, **kwargs: Any) -> float:
        if not self._leading():
            return STANDBY_POLL_SECONDS
        try:
            delay = super().tick(*args, **kwargs)
        except _DB_ERRORS as exc:
            logger.warning(
                "beat: database error reading the schedule; retrying",
                extra={"error": str(exc)},
            )
            _forget_connection()
            self._initial_read = True
            self._heap = None
            return RETRY_SECONDS
        return max(0.0, min(delay, self._next_lease_check - time.monotonic()))

    # -- sending --------------------------------------------------------------------------------

    def apply_entry(self, entry: Any, producer: Any = None) -> None:
        if self.token is None:
            return
        slot = entry.slot()
        try:
            claimed = slot_claim(
                holder=self.holder, token=self.token, task_name=entry.name, slot_start=slot
            )
        except _DB_ERRORS as exc:
            logger.warning(
                "beat: cannot claim the slot; not sending",
                extra={"task": entry.task, "slot": slot.isoformat(), "error": str(exc)},
            )
            _forget_connection()
            return
        if not claimed:
            logger.info(
                "beat: slot already sent or lease lost; not sending",
                extra={"task": entry.task, "slot": slot.isoformat()},
            )
            return
        entry.options.setdefault("headers", {})["beat_slot"] = slot.isoformat()
        super().apply_entry(entry, producer=producer)

    # -- start and stop -------------------------------------------------------------------------

    def setup_schedule(self) -> None:
        """At start the database may be down: log it and read the schedule on a later tick
        instead of exiting (a supervisor would only restart beat into the same error)."""
        try:
            super().setup_schedule()
        except _DB_ERRORS as exc:
            logger.warning(
                "beat: database unavailable at start; will read the schedule when it is back",
                extra={"error": str(exc)},
            )
            _forget_connection()
            self._initial_read = True

    def close(self) -> None:
        """The last sync and the lease's release, so a clean stop hands over at once. Celery
        calls this from its SIGTERM handler, possibly while this thread is in the middle of a
        statement on its connection (entering it again would wait forever): the work runs on
        a thread of its own, with its own connection, for at most CLOSE_SECONDS."""
        if self._closed:
            return
        self._closed = True
        closing = threading.Thread(target=self._close_now, name="beat-close", daemon=True)
        closing.start()
        closing.join(CLOSE_SECONDS)

    def _close_now(self) -> None:
        try:
            super().close()
        except Exception as exc:  # noqa: BLE001 - stopping anyway; say why the sync failed
            logger.warning("beat: last sync failed", extra={"error": str(exc)})
        finally:
            if self.token is not None:
                try:
                    lease_release(holder=self.holder)
                except _DB_ERRORS:
                    pass
                self.token = None
            connections.close_all()
