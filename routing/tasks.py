"""Celery tasks of routing. Their names are the ones the beat schedule (installed by
migrations) and the enqueuing services use; they predate the routing app and stay as they
are, so queued tasks and schedules survive the move."""

import logging
from datetime import datetime

import redis
from celery import shared_task

from . import drain, offers, presence, reconcile, sweeps

logger = logging.getLogger(__name__)


@shared_task(name="handler_groups.presence_sweep", ignore_result=True)
def presence_sweep() -> dict:
    # Every 15 s: the first thing after Redis came back empty is to rebuild the pools. With
    # Redis down there is nothing to rebuild yet; the sweep itself still runs.
    try:
        rebuilt = reconcile.ensure_rebuilt()
    except redis.RedisError:
        logger.warning("routing state not checked: Redis unavailable", exc_info=True)
        rebuilt = None
    return {**presence.presence_sweep(), "rebuilt_groups": rebuilt or 0}


@shared_task(name="handler_groups.reconcile", ignore_result=True)
def reconcile_all() -> int:
    return reconcile.reconcile()


@shared_task(name=drain.DRAIN_GROUPS_TASK, ignore_result=True)
def drain_groups(group_ids: list[int]) -> int:
    return sum(drain.drain_group(group_id=group_id) for group_id in group_ids)


@shared_task(name="ticketing.reclaim_offer", ignore_result=True)
def reclaim_offer(ticket_id: int, handler_id: int, assigned_time: str) -> bool:
    """Runs when an offer times out; re-validates that it is still the same open offer."""
    return offers.reclaim_offer(
        ticket_id=ticket_id,
        handler_id=handler_id,
        assigned_time=datetime.fromisoformat(assigned_time),
    )


@shared_task(name="ticketing.routing_sweep", ignore_result=True)
def routing_sweep() -> dict:
    return sweeps.routing_sweep()
