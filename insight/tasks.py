"""Celery tasks of insight (enqueued by name: services.SIMULATE_TASK)."""

from celery import shared_task

from . import services


@shared_task(name=services.SIMULATE_TASK, ignore_result=True)
def simulate(simulation_id: int) -> str:
    return services.run_simulation(simulation_id)


@shared_task(name="insight.simulation_sweep", ignore_result=True)
def simulation_sweep() -> dict:
    """Beat, every 30 s: simulations whose worker died or whose message was lost."""
    return services.simulation_sweep()
