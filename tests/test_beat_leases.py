"""The beat lease and the slot claims (config/beat/leases.py) against real PostgreSQL, with an
explicit `now`; the epoch-aligned interval slots (config/beat/scheduler.py) without one."""

from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from config.beat.leases import LEASE_SECONDS, Holder, lease_acquire, lease_release, slot_claim
from config.beat.models import BeatLease, BeatSlot
from config.beat.scheduler import slotted
from tests.concurrency import run_in_parallel

T0 = datetime(2026, 3, 2, 9, 0, 0, tzinfo=UTC)
A = Holder(identity="node-a:101:aaaa")
B = Holder(identity="node-b:202:bbbb")


def _lease() -> tuple[str, int, datetime]:
    row = BeatLease.objects.get(name=A.lease_name)
    return row.holder, row.token, row.expires_at


@pytest.mark.django_db
def test_the_lease_is_one_holders_until_it_expires():
    assert lease_acquire(holder=A, now=T0) == 1
    before = _lease()
    assert lease_acquire(holder=B, now=T0 + timedelta(seconds=5)) is None
    assert _lease() == before  # refused: nothing changed

    # Renewing keeps the token and moves the expiry on.
    assert lease_acquire(holder=A, now=T0 + timedelta(seconds=2)) == 1
    assert _lease() == (A.identity, 1, T0 + timedelta(seconds=2 + LEASE_SECONDS))

    # Past its expiry the other takes it, with a newer token, and the first is refused.
    later = T0 + timedelta(seconds=2 + LEASE_SECONDS)
    assert lease_acquire(holder=B, now=later) == 2
    assert lease_acquire(holder=A, now=later + timedelta(seconds=1)) is None
    assert _lease()[:2] == (B.identity, 2)


@pytest.mark.django_db
def test_a_released_lease_is_taken_at_once():
    assert lease_acquire(holder=A) == 1
    lease_release(holder=B)  # not B's: nothing happens
    assert lease_acquire(holder=B) is None
    lease_release(holder=A)
    assert lease_acquire(holder=B) == 2


@pytest.mark.django_db
def test_each_slot_is_claimed_once_and_never_an_earlier_one():
    token = lease_acquire(holder=A, now=T0)
    assert token is not None
    slot = T0.replace(second=0)
    assert slot_claim(holder=A, token=token, task_name="sla: tick", slot_start=slot, now=T0)
    assert not slot_claim(holder=A, token=token, task_name="sla: tick", slot_start=slot, now=T0)
    earlier = slot - timedelta(seconds=1)
    assert not slot_claim(holder=A, token=token, task_name="sla: tick", slot_start=earlier, now=T0)
    assert BeatSlot.objects.get(task_name="sla: tick").slot_start == slot
    # Another task's slots are its own.
    assert slot_claim(holder=A, token=token, task_name="sla: scan", slot_start=slot, now=T0)
    later = slot + timedelta(seconds=1)
    assert slot_claim(holder=A, token=token, task_name="sla: tick", slot_start=later, now=T0)


@pytest.mark.django_db
def test_a_deposed_leader_claims_nothing():
    old = lease_acquire(holder=A, now=T0)
    assert old is not None
    assert slot_claim(holder=A, token=old, task_name="sla: tick", slot_start=T0, now=T0)
    # A stalls past its lease; B takes over and sends the next slot.
    takeover = T0 + timedelta(seconds=LEASE_SECONDS + 1)
    new = lease_acquire(holder=B, now=takeover)
    assert new == old + 1
    next_slot = T0 + timedelta(seconds=7)
    assert slot_claim(
        holder=B, token=new, task_name="sla: tick", slot_start=next_slot, now=takeover
    )
    # A wakes and, believing itself the leader, tries that slot and a later one: refused.
    for slot in (next_slot, next_slot + timedelta(seconds=1)):
        assert not slot_claim(
            holder=A, token=old, task_name="sla: tick", slot_start=slot, now=takeover
        )
    claim = BeatSlot.objects.get(task_name="sla: tick")
    assert (claim.slot_start, claim.token, claim.holder) == (next_slot, new, B.identity)


@pytest.mark.django_db
def test_a_holder_whose_lease_ran_out_claims_nothing_even_unopposed():
    token = lease_acquire(holder=A, now=T0)
    assert token is not None
    late = T0 + timedelta(seconds=LEASE_SECONDS + 0.5)
    assert not slot_claim(holder=A, token=token, task_name="sla: tick", slot_start=T0, now=late)
    assert not BeatSlot.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_two_beats_asking_at_once_get_one_lease():
    holders = [Holder(identity=f"node-{i}:{i}:race") for i in range(6)]
    for _round in range(5):
        BeatLease.objects.all().delete()
        tokens = run_in_parallel([lambda h=h: lease_acquire(holder=h) for h in holders])
        assert all(not isinstance(t, BaseException) for t in tokens), tokens
        assert sum(t is not None for t in tokens) == 1, tokens
        winner = next(h for h, t in zip(holders, tokens, strict=True) if t is not None)
        assert BeatLease.objects.get().holder == winner.identity


@pytest.mark.django_db(transaction=True)
def test_the_old_and_new_leader_claiming_one_slot_at_once_send_it_once():
    """The hand-over race: the old leader's lease has just run out and the new leader has
    taken it; both claim the same slot on their own connections at the same moment."""
    slot = T0 + timedelta(seconds=30)
    for attempt in range(5):
        BeatLease.objects.all().delete()
        BeatSlot.objects.all().delete()
        old = lease_acquire(holder=A, now=T0)
        new = lease_acquire(holder=B, now=T0 + timedelta(seconds=LEASE_SECONDS))
        assert (old, new) == (1, 2)
        at = T0 + timedelta(seconds=LEASE_SECONDS, milliseconds=attempt)
        won = run_in_parallel(
            [
                lambda at=at: slot_claim(holder=A, token=1, task_name="t", slot_start=slot, now=at),
                lambda at=at: slot_claim(holder=B, token=2, task_name="t", slot_start=slot, now=at),
            ]
        )
        assert won == [False, True]


def _interval(seconds: float, now: datetime) -> slotted:
    return slotted(timedelta(seconds=seconds), nowfun=lambda: now)


def test_an_interval_is_due_once_per_epoch_aligned_slot():
    now = datetime(2026, 3, 2, 9, 0, 30, 250_000, tzinfo=UTC)
    every_15 = _interval(15, now)
    assert every_15.slot_start(now) == now.replace(microsecond=0)  # :30 starts a slot
    due, next_in = every_15.is_due(now - timedelta(seconds=1))  # last ran in slot :15
    assert due and next_in == pytest.approx(14.75)
    due, next_in = every_15.is_due(now.replace(microsecond=0))  # already ran in this slot
    assert not due and next_in == pytest.approx(14.75)
    # A run late in its slot does not push the next one a whole interval later (no drift).
    assert every_15.remaining_estimate(now) == timedelta(seconds=14.75)


def test_every_node_agrees_where_a_slot_starts():
    at = datetime(2026, 3, 2, 9, 4, 59, 999_000, tzinfo=UTC)
    five_minutes = _interval(300, at)
    assert five_minutes.slot_start(at) == datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
    one_second = _interval(1, at)
    assert one_second.slot_start(at) == datetime(2026, 3, 2, 9, 4, 59, tzinfo=UTC)


@pytest.mark.django_db
def test_entries_of_every_kind_name_the_slot_they_send():
    from django_celery_beat.models import CrontabSchedule, IntervalSchedule, PeriodicTask

    from config.beat.scheduler import SlotEntry

    quarter = CrontabSchedule.objects.create(minute="*/15", hour="*", timezone="UTC")
    every_15s = IntervalSchedule.objects.create(every=15, period="seconds")
    with time_machine.travel(datetime(2026, 3, 2, 9, 16, 30, tzinfo=UTC), tick=False):
        # Two beats that last saw different runs agree on the crontab's slot: 09:15.
        for last in (
            datetime(2026, 3, 2, 9, 0, 2, tzinfo=UTC),
            datetime(2026, 3, 2, 9, 14, 59, tzinfo=UTC),
        ):
            cron = PeriodicTask.objects.create(
                name=f"cron {last}", task="sla.scan", crontab=quarter, last_run_at=last
            )
            entry = SlotEntry(cron)
            assert entry.is_due().is_due
            assert entry.slot() == datetime(2026, 3, 2, 9, 15, tzinfo=UTC)
        interval = PeriodicTask.objects.create(
            name="every 15 s",
            task="sla.tick",
            interval=every_15s,
            last_run_at=datetime(2026, 3, 2, 9, 16, 20, tzinfo=UTC),
        )
        entry = SlotEntry(interval)
        assert isinstance(entry.schedule, slotted)
        assert entry.is_due().is_due  # last ran in the 9:16:15 slot; now is 9:16:30
        assert entry.slot() == datetime(2026, 3, 2, 9, 16, 30, tzinfo=UTC)
        assert not next(entry).is_due().is_due  # once sent, not again in this slot
