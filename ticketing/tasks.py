from datetime import datetime

from celery import shared_task

from . import routing


@shared_task(name="ticketing.drain_groups", ignore_result=True)
def drain_groups(group_ids: list[int]) -> int:
    return sum(routing.drain_group(group_id=group_id) for group_id in group_ids)


@shared_task(name="ticketing.reclaim_offer", ignore_result=True)
def reclaim_offer(ticket_id: int, handler_id: int, assigned_time: str) -> bool:
    """Runs when an offer times out; re-validates that it is still the same open offer."""
    return routing.reclaim_offer(
        ticket_id=ticket_id,
        handler_id=handler_id,
        assigned_time=datetime.fromisoformat(assigned_time),
    )


@shared_task(name="ticketing.routing_sweep", ignore_result=True)
def routing_sweep() -> dict:
    return routing.routing_sweep()
