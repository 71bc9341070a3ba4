"""Running simulations: the report for a recorded period or a synthetic day (shared by the
command and the worker), the Simulation rows the API creates, and the worker's run."""

import logging
import statistics
import threading
from collections.abc import Callable
from datetime import date, datetime, timedelta

from celery import current_app
from django.db import connections, transaction
from django.db.models import F, Q
from django.utils import timezone
from django.utils.translation import gettext

from handler_groups.models import HandlerGroup

from . import scenarios
from .models import Simulation, SimulationStatus
from .simulator import SIMULATED_STRATEGIES, Scenario, simulate, simulate_strategy

logger = logging.getLogger(__name__)

SIMULATE_TASK = "insight.simulate"  # insight/tasks.py defines it
SEED_CLAIM = {"round_robin": 6.2, "longest_idle_wrap_up": 1.8}
CLAIM_RUNS = 20  # seeds over which the synthetic day's claim check takes medians


def simulate_recorded(
    *,
    group: HandlerGroup,
    date_from: date,
    date_to: date,
    strategies=SIMULATED_STRATEGIES,
    seed: int = 0,
    response_budget_seconds: float | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict:
    built = scenarios.recorded_scenario(
        group=group,
        date_from=date_from,
        date_to=date_to,
        response_budget_seconds=response_budget_seconds,
    )
    return {
        "mode": "recorded",
        "group": {"id": group.pk, "name": group.name},
        "seed": seed,
        "seed_note": "a recorded replay draws nothing at random: every seed gives the same result",
        **built.notes,
        "wrap_up_seconds": group.wrap_up_seconds,
        "strategies": simulate(built.scenario, list(strategies), progress=progress),
        "assumptions": ASSUMPTIONS,
    }


ASSUMPTIONS = [
    "an assignment is taken at once (offers, misses, declines, overflow and transfers are not "
    "simulated)",
    "arrival = approval into the group; wait = approval → assignment",
    "a response breach is a wait longer than the response budget, counted as elapsed time "
    "(business-hour calendars are not applied); a ticket never assigned counts as breached",
    "handle time is the ticket's, whoever it goes to; occupancy = time with an active ticket "
    "÷ time on shift",
]


def simulate_synthetic(
    *,
    params: scenarios.SyntheticParams,
    strategies=SIMULATED_STRATEGIES,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
    claim_runs: int = CLAIM_RUNS,
) -> dict:
    scenario = scenarios.synthetic_scenario(params, seed)
    result = {
        "mode": "synthetic",
        "seed": seed,
        "synthetic": params.as_dict(),
        "presence_basis": {"summary": "synthetic: every agent on shift the whole day"},
        "wrap_up_seconds": params.wrap_up,
        "strategies": simulate(scenario, list(strategies), progress=progress),
        "assumptions": ASSUMPTIONS,
    }
    if claim_runs:
        result["claim"] = claim_check(params, seed, runs=claim_runs, first=scenario)
    return result


def _blind_rotation_stddev(calls: int, agents: int) -> float:
    """Counts of a rotation that ignores who is free: they differ by at most one."""
    base, extra = divmod(calls, agents)
    return statistics.pstdev([base + 1] * extra + [base] * (agents - extra))


def claim_check(
    params: scenarios.SyntheticParams, seed: int, *, runs: int, first: Scenario | None = None
) -> dict:
    """The call-centre seed's claim on the small-store day: round robin's per-agent count
    spread (std dev) of 6.2 comes down to 1.8 with longest idle and wrap-up. Medians over
    `runs` seeds (seed, seed+1, …) of: the real round robin without wrap-up (the seed's
    "before"), the real round robin with the day's wrap-up, and the real longest idle with
    the day's wrap-up; plus this seed's figures."""
    no_wrap = scenarios.SyntheticParams(**{**params.__dict__, "wrap_up": 0})
    series: dict[str, list[float]] = {"rr": [], "rr_wrap": [], "li_wrap": []}
    this_seed: dict[str, float] = {}
    first_counts: dict[str, int] = {}
    for run in range(runs):
        day = first if run == 0 and first is not None else None
        day = day or scenarios.synthetic_scenario(params, seed + run)
        figures = {
            "rr": simulate_strategy(scenarios.synthetic_scenario(no_wrap, seed + run), 1),
            "rr_wrap": simulate_strategy(day, 1),
            "li_wrap": simulate_strategy(day, 4),
        }
        for key, report in figures.items():
            series[key].append(report["count_stddev"])
            if run == 0:
                this_seed[key] = report["count_stddev"]
                if key == "li_wrap":
                    first_counts = report["counts"]
    med = {key: round(statistics.median(values), 2) for key, values in series.items()}
    blind = round(_blind_rotation_stddev(params.calls, params.agents), 2)
    reduced = med["li_wrap"] < med["rr"]
    speeds = params.agent_speeds()
    li_counts = list(first_counts.values())
    favours_fast = (
        len(set(speeds)) > 1
        and len(set(li_counts)) > 1
        and statistics.correlation(list(speeds), li_counts) < 0
    )
    verdict = (
        f"brings the spread down ({med['rr']} → {med['li_wrap']})"
        if reduced
        else f"does not bring the spread down ({med['rr']} → {med['li_wrap']})"
    )
    explanation = (
        f"Over {runs} seeded days ({params.calls} calls, {params.agents} agents of speeds "
        f"{', '.join(f'{s:g}' for s in speeds)}, {params.wrap_up} s wrap-up) the median "
        f"per-agent count spread (std dev) is {med['rr']} for round robin without wrap-up, "
        f"{med['rr_wrap']} with it, and {med['li_wrap']} for longest idle with wrap-up: "
        f"longest idle with wrap-up {verdict}; the seed's 6.2 → 1.8 is not reproduced. "
        f"A rotation blind to who is free keeps counts within one of each other (spread "
        f"{blind} here); this system's round robin only skips members who are busy or "
        "wrapping up, so its spread grows with the load and with the agents' speed "
        "differences, not with any flaw of rotation. Longest idle evens out idle time, not "
        "counts: an agent's idle time starts at the end of their wrap-up, which comes sooner "
        "for a faster agent"
        + (", and on this seed the faster agents do get more calls" if favours_fast else "")
        + ". A spread of 6.2 on a mean of "
        f"{params.calls / params.agents:g} calls per agent means counts as far apart as "
        "28/24/16/12, which this system's round robin approaches only with heavily loaded "
        "agents of very different speeds (e.g. aht=900); the seed does not say how its round "
        "robin treated busy or absent agents, nor their speeds."
    )
    return {
        "seed_claim": SEED_CLAIM,
        "runs": runs,
        "medians": {
            "round_robin_no_wrap_up": med["rr"],
            "round_robin_wrap_up": med["rr_wrap"],
            "longest_idle_wrap_up": med["li_wrap"],
        },
        "this_seed": {
            "round_robin_no_wrap_up": this_seed["rr"],
            "round_robin_wrap_up": this_seed["rr_wrap"],
            "longest_idle_wrap_up": this_seed["li_wrap"],
        },
        "blind_rotation_count_stddev": blind,
        "reduced": reduced,
        "explanation": explanation,
    }


def simulate_params(params: dict, *, progress=None) -> dict:
    """The report for a Simulation's params (as the API stores them)."""
    strategies = params.get("strategies") or list(SIMULATED_STRATEGIES)
    seed = int(params.get("seed") or 0)
    if params.get("synthetic") is not None:
        return simulate_synthetic(
            params=scenarios.parse_synthetic(params["synthetic"]),
            strategies=strategies,
            seed=seed,
            progress=progress,
        )
    group = HandlerGroup.objects.get(pk=params["group"])
    return simulate_recorded(
        group=group,
        date_from=date.fromisoformat(params["from"]),
        date_to=date.fromisoformat(params["to"]),
        strategies=strategies,
        seed=seed,
        response_budget_seconds=params.get("response_budget_seconds"),
        progress=progress,
    )


def simulation_request(*, user, group: HandlerGroup | None, params: dict) -> Simulation:
    """A queued Simulation, handed to a worker once the transaction commits."""
    simulation = Simulation.objects.create(
        group=group, params=params, created_by=user, enqueued=timezone.now()
    )
    simulation_id = simulation.pk

    def enqueue():
        try:
            current_app.send_task(SIMULATE_TASK, args=(simulation_id,))
        except Exception as exc:
            logger.exception("could not enqueue a simulation", extra={"simulation": simulation_id})
            Simulation.objects.filter(pk=simulation_id, status=SimulationStatus.QUEUED).update(
                status=SimulationStatus.FAILED,
                error=f"could not hand the simulation to a worker: {exc}",
                finished=timezone.now(),
            )

    transaction.on_commit(enqueue)
    return simulation


# Recovery (simulation_sweep, beat every 30 s): a running simulation's worker writes a heartbeat
# every HEARTBEAT_SECONDS; one silent for STALE_AFTER has lost its worker (SIGKILL, OOM, a
# node gone) and is queued again, at most MAX_ATTEMPTS runs in all, then failed with the
# reason. A queued one no worker has taken for REQUEUE_AFTER may have lost its message (Redis
# restarted empty): it is handed over again (a duplicate message finds it claimed and does
# nothing), and failed once it has waited GIVE_UP_QUEUED_AFTER. Never stuck.
HEARTBEAT_SECONDS = 10.0
STALE_AFTER = timedelta(seconds=60)
REQUEUE_AFTER = timedelta(minutes=2)
GIVE_UP_QUEUED_AFTER = timedelta(hours=1)
MAX_ATTEMPTS = 3


def run_simulation(simulation_id: int, *, now: datetime | None = None) -> str:
    """The worker: queued → running → done (result) or failed (error). Returns the status, or
    "skipped" when it was not queued (another message of it ran it, or it was given up).
    While it runs a heartbeat thread shows it alive; the outcome is written only if this run
    is still the simulation's current one (the sweep may have given it to another worker)."""
    now = now or timezone.now()
    claimed = Simulation.objects.filter(
        pk=simulation_id, status=SimulationStatus.QUEUED, attempts__lt=MAX_ATTEMPTS
    ).update(
        status=SimulationStatus.RUNNING, started=now, heartbeat=now, attempts=F("attempts") + 1
    )
    if not claimed:
        return "skipped"
    simulation = Simulation.objects.get(pk=simulation_id)
    this_run = Simulation.objects.filter(
        pk=simulation_id, status=SimulationStatus.RUNNING, attempts=simulation.attempts
    )
    status, result, error = SimulationStatus.DONE, None, ""
    with _Heartbeat(this_run):
        try:
            result = simulate_params(simulation.params)
        except Exception as exc:
            logger.exception("simulation failed", extra={"simulation": simulation_id})
            status, error = SimulationStatus.FAILED, f"{type(exc).__name__}: {exc}"
    written = this_run.update(status=status, result=result, error=error, finished=timezone.now())
    if not written:
        logger.warning("simulation run superseded", extra={"simulation": simulation_id})
        return "superseded"
    return status


class _Heartbeat:
    """A thread that stamps `run` (a queryset of the one running simulation) every
    HEARTBEAT_SECONDS until the block ends, on its own database connection."""

    def __init__(self, run):
        self._run = run
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="simulation-heartbeat", daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc_info):
        self._stop.set()
        self._thread.join(timeout=HEARTBEAT_SECONDS)

    def _beat(self) -> None:
        try:
            while not self._stop.wait(HEARTBEAT_SECONDS):
                try:
                    self._run.update(heartbeat=timezone.now())
                except Exception:  # the database is away: the next beat tries again
                    logger.warning("simulation heartbeat failed", exc_info=True)
        finally:
            connections.close_all()


def simulation_sweep(*, now: datetime | None = None) -> dict[str, int]:
    """Recover simulations that would otherwise stay running or queued forever (see
    HEARTBEAT_SECONDS). Locks the unfinished rows it changes (skip locked: a second sweep or a
    claiming worker is left alone). Returns how many were queued again, handed over again, and
    failed."""
    now = now or timezone.now()
    requeued, resent, failed = [], [], []
    stale = Q(heartbeat__lt=now - STALE_AFTER) | Q(
        heartbeat__isnull=True, created__lt=now - STALE_AFTER
    )
    waiting = Q(enqueued__lt=now - REQUEUE_AFTER) | Q(
        enqueued__isnull=True, created__lt=now - REQUEUE_AFTER
    )
    with transaction.atomic():
        for simulation in Simulation.objects.select_for_update(skip_locked=True).filter(
            Q(status=SimulationStatus.RUNNING) & stale | Q(status=SimulationStatus.QUEUED) & waiting
        )[:100]:
            if simulation.status == SimulationStatus.RUNNING:
                if simulation.attempts >= MAX_ATTEMPTS:
                    reason = gettext(
                        "The worker running this simulation stopped %(attempts)s times; "
                        "it was not tried again."
                    ) % {"attempts": simulation.attempts}
                    failed.append((simulation.pk, reason))
                else:
                    requeued.append(simulation.pk)
            elif simulation.attempts >= MAX_ATTEMPTS:  # queued after its last run: give up
                reason = gettext("No worker could finish this simulation in %(attempts)s runs.") % {
                    "attempts": simulation.attempts
                }
                failed.append((simulation.pk, reason))
            elif simulation.created < now - GIVE_UP_QUEUED_AFTER:
                failed.append(
                    (simulation.pk, gettext("No worker took this simulation within an hour."))
                )
            else:
                resent.append(simulation.pk)
        Simulation.objects.filter(pk__in=requeued).update(
            status=SimulationStatus.QUEUED, enqueued=now, heartbeat=None
        )
        Simulation.objects.filter(pk__in=resent).update(enqueued=now)
        for simulation_id, reason in failed:
            Simulation.objects.filter(pk=simulation_id).update(
                status=SimulationStatus.FAILED, error=reason, finished=now
            )
        ids = [*requeued, *resent]
        transaction.on_commit(lambda: _hand_over(ids))
    if requeued or failed:
        logger.warning(
            "simulations recovered",
            extra={"requeued": requeued, "resent": resent, "failed": [f[0] for f in failed]},
        )
    return {"requeued": len(requeued), "resent": len(resent), "failed": len(failed)}


def _hand_over(simulation_ids: list[int]) -> None:
    for simulation_id in simulation_ids:
        try:
            current_app.send_task(SIMULATE_TASK, args=(simulation_id,))
        except Exception:  # the broker is down: the next sweep tries again
            logger.exception("could not enqueue a simulation", extra={"simulation": simulation_id})
