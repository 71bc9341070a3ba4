"""A discrete-event simulation of one group's routing, with the REAL strategy code deciding.

Events (a heap ordered by time, then kind, then insertion): arrivals, completions, ends of
wrap-up, and agents going on and off shift (presence windows). Every routing decision builds
what routing/strategies/service.py builds — MemberRows of the simulated agents, the one
eligibility rule (`eligible_ids`) and a `PickContext` — and calls the registered strategy's
`pick` (`registry.get_strategy`), so round robin, least load, online priority and longest
idle decide exactly as they do in production:

- The strategies see a stand-in group (`SimGroup`): round robin moves its
  `last_assign_index` and calls its `save()`, which does nothing.
- Longest idle picks with the real Lua script (routing/idle_pool.py) against the real Redis
  (ASSIGNMENT_REDIS_URL or REDIS_URL) under a scratch group key, `td:{gsim-<random>}:…`,
  deleted when the run ends. The simulator keeps that pool as presence.py does in production:
  an agent becomes routable (state, then pool, scored by idle-since, a fresh login pushed back
  by the warm-up) when their shift starts or their wrap-up ends, and leaves it when their
  shift ends or a completion puts them in wrap-up; after a pick the strategy itself puts the
  agent back in the pool scored by the assignment (its own `clear_offer` call).
- Simulated time runs on a far-future epoch (SIM_EPOCH, year 2200), because longest idle
  stamps the return to the pool with max(now, the wall clock): with the record's past dates
  the wall clock would win and every agent would re-enter the pool at "now". Only
  differences of instants matter to every strategy, so the shift changes nothing else.

The pool: a ticket nobody is eligible for waits; whenever someone frees up (a completion
without wrap-up, the end of a wrap-up, a shift start) the pool drains most urgent first, as
routing/drain.py orders it (earliest deadline, then priority, then arrival), and stops at the
first ticket nobody takes. Offers are not simulated (an assignment is taken at once), nor are
declines, misses, overflow or transfers.

Deterministic: the scenario is data (the random draws of a synthetic day happen when it is
built, from a seeded random.Random), the heap breaks ties by insertion order, nothing
iterates a set, and no wall clock enters a decision."""

import heapq
import math
import statistics
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from routing import idle_pool
from routing.strategies.base import PickContext
from routing.strategies.eligibility import GroupPolicy, MemberRow, eligible_ids
from routing.strategies.registry import get_strategy

SIM_EPOCH = datetime(2200, 1, 1, tzinfo=UTC)
LONGEST_IDLE = 4
SIMULATED_STRATEGIES = (1, 2, 3, 4)  # the auto-assigning ones; manual (0) picks nobody

# Event kinds, in the order they are handled at the same instant: capacity is freed before
# shifts change, and shifts change before the instant's arrivals are routed.
COMPLETE, WRAP_END, SHIFT_OFF, SHIFT_ON, ARRIVE = range(5)


class SimulationError(Exception):
    """The simulation cannot run (e.g. Redis unreachable for longest idle)."""


@dataclass(frozen=True)
class SimAgent:
    user_id: int
    label: str
    max_active: int | None
    # On-shift windows in seconds from the start, sorted and disjoint; None: on shift from
    # the start to the end of the simulation.
    windows: tuple[tuple[float, float], ...] | None = None
    speed: float = 1.0  # handle-time multiplier (synthetic agents of different speeds)


@dataclass(frozen=True)
class SimTicket:
    ticket_id: int
    arrival: float  # seconds from the start
    work: float  # handle seconds (times the assigned agent's speed)
    budget: float | None = None  # response budget in seconds; None: no response clock
    urgency: float | None = None  # earliest deadline, seconds from the start (drain order)
    priority: int = 0


@dataclass(frozen=True)
class Scenario:
    agents: tuple[SimAgent, ...]  # in the group's member order
    tickets: tuple[SimTicket, ...]
    horizon: float  # seconds: the end of the replayed period (occupancy is measured up to it)
    wrap_up_seconds: int = 0
    warmup_seconds: int = 0
    requires_presence: bool = True
    daily_cap: int | None = None
    day_origin: float = 0.0  # seconds from local midnight to the start (for the daily cap)


class SimGroup:
    """The stand-in HandlerGroup the strategies see. It has no database row: `save()` does
    nothing (round robin saves its cursor), and reconciliation (which longest idle runs when
    its pool pick finds nobody) is refused before it reaches the database — the simulator
    keeps the pool exact, so that only happens when Redis fails."""

    def __init__(self, *, key: str, code: int, scenario: Scenario):
        self.pk = self.id = key
        self.assign_strategy = code
        self.last_assign_index = -1
        self.offer_timeout_seconds = 0
        self.requires_presence = scenario.requires_presence
        self.wrap_up_seconds = scenario.wrap_up_seconds
        self.warmup_seconds = scenario.warmup_seconds
        self.daily_cap = scenario.daily_cap
        self.is_enabled = True

    @property
    def member_ids(self) -> list[int]:
        raise SimulationError("a simulated group has no members in the database")

    def save(self, *args, **kwargs) -> None:
        pass


class _NoPool:
    """Strategies other than longest idle read no Redis state."""

    def routable(self, user_id: int, score: float) -> None:
        pass

    def unroutable(self, user_id: int, state: str) -> None:
        pass

    def close(self) -> None:
        pass


class _RedisPool:
    """The real idle pool (routing/idle_pool.py) under a scratch group key."""

    def __init__(self, key: str):
        self.key = key
        try:
            idle_pool.client().ping()
        except Exception as exc:
            raise SimulationError(
                f"longest idle picks with the Redis Lua script and Redis is unreachable: {exc}"
            ) from exc

    def routable(self, user_id: int, score: float) -> None:
        if not idle_pool.make_routable([self.key], user_id, SIM_EPOCH.timestamp() + score):
            raise SimulationError("Redis failed while updating the simulated idle pool")

    def unroutable(self, user_id: int, state: str) -> None:
        if not idle_pool.make_unroutable([self.key], user_id, state):
            raise SimulationError("Redis failed while updating the simulated idle pool")

    def close(self) -> None:
        try:
            idle_pool.client().delete(*idle_pool._keys(self.key))
        except Exception:  # the keys are scratch; a failed cleanup must not fail the run
            pass


@dataclass
class _AgentState:
    agent: SimAgent
    presence: str = "offline"  # offline | available | wrap_up
    online_since: float | None = None
    idle_since: float | None = None
    active: int = 0
    last_assigned: float | None = None
    count: int = 0
    by_day: dict[int, int] = field(default_factory=dict)
    wrap_token: int = 0
    mark: float = 0.0  # occupancy accounting: last instant accounted for
    shift_seconds: float = 0.0
    busy_seconds: float = 0.0


def percentile(values: list[float], p: float) -> float | None:
    """Linear interpolation between closest ranks (as bench/common.py)."""
    ordered = sorted(values)
    if not ordered:
        return None
    k = (len(ordered) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


class _Run:
    def __init__(self, scenario: Scenario, code: int, progress: Callable[[int], None] | None):
        self.scenario = scenario
        self.code = code
        self.strategy = get_strategy(code)
        if not self.strategy.auto_assigns:
            raise SimulationError(f"strategy {code} assigns nobody: nothing to simulate")
        key = f"sim-{uuid.uuid4().hex}"  # scratch Redis keys only; never enters a decision
        self.group = SimGroup(key=key, code=code, scenario=scenario)
        self.pool = _RedisPool(key) if code == LONGEST_IDLE else _NoPool()
        self.policy = GroupPolicy(
            requires_presence=scenario.requires_presence,
            offers_enabled=False,
            daily_cap=scenario.daily_cap,
        )
        self.agents = [_AgentState(agent) for agent in scenario.agents]
        self.by_id = {state.agent.user_id: state for state in self.agents}
        self.member_ids = [agent.user_id for agent in scenario.agents]
        self.events: list[tuple] = []
        self.seq = 0
        self.waiting: list[SimTicket] = []
        self.max_waiting = 0
        self.waits: dict[int, float] = {}
        self.progress = progress

    # --- events -------------------------------------------------------------------------

    def push(self, at: float, kind: int, payload) -> None:
        self.seq += 1
        heapq.heappush(self.events, (at, kind, self.seq, payload))

    def run(self) -> dict:
        try:
            return self._run()
        finally:
            self.pool.close()

    def _run(self) -> dict:
        scenario = self.scenario
        for state in self.agents:
            if not scenario.requires_presence:
                # Nobody's presence matters: everyone is routable throughout, in the pool by
                # their last assignment (as reconciliation builds it), never-assigned first.
                state.presence = "available"
                self.pool.routable(state.agent.user_id, -SIM_EPOCH.timestamp())
                continue
            windows = state.agent.windows
            if windows is None:
                windows = ((0.0, math.inf),)
            for start, end in windows:
                self.push(start, SHIFT_ON, state.agent.user_id)
                if end != math.inf:
                    self.push(end, SHIFT_OFF, state.agent.user_id)
        for ticket in scenario.tickets:
            self.push(ticket.arrival, ARRIVE, ticket)
        handled = 0
        while self.events:
            now, kind, _, payload = heapq.heappop(self.events)
            if kind == ARRIVE:
                if not self.route(payload, now):
                    self.waiting.append(payload)
                    self.max_waiting = max(self.max_waiting, len(self.waiting))
                handled += 1
                if self.progress and handled % 500 == 0:
                    self.progress(handled)
            elif kind == COMPLETE:
                self.complete(self.by_id[payload], now)
            elif kind == WRAP_END:
                user_id, token = payload
                state = self.by_id[user_id]
                if state.presence == "wrap_up" and state.wrap_token == token:
                    self.become_available(state, now, fresh_login=False)
            elif kind == SHIFT_ON:
                self.become_available(self.by_id[payload], now, fresh_login=True)
            elif kind == SHIFT_OFF:
                state = self.by_id[payload]
                self.account(state, now)
                self.pool.unroutable(state.agent.user_id, "offline")
                state.presence = "offline"
                state.online_since = None
        end = max(scenario.horizon, 0.0)
        for state in self.agents:
            self.account(state, end)
        return self.report()

    def account(self, state: _AgentState, now: float) -> None:
        """Occupancy: time on shift, and of it time with at least one active ticket, both
        up to the end of the replayed period."""
        upto = min(now, self.scenario.horizon)
        if upto > state.mark:
            if state.presence != "offline":
                state.shift_seconds += upto - state.mark
                if state.active:
                    state.busy_seconds += upto - state.mark
        state.mark = max(state.mark, upto)

    def become_available(self, state: _AgentState, now: float, *, fresh_login: bool) -> None:
        """presence._become_available: state, then pool (a fresh login's score pushed back
        by the warm-up), then the pool drains."""
        self.account(state, now)
        state.presence = "available"
        if fresh_login:
            state.online_since = now
        state.idle_since = now
        warmup = self.scenario.warmup_seconds if fresh_login else 0
        self.pool.routable(state.agent.user_id, now + warmup)
        self.drain(now)

    def complete(self, state: _AgentState, now: float) -> None:
        """presence.ticket_completed: an available agent goes to wrap-up when the group has
        one; otherwise the freed capacity may take a waiting ticket at once."""
        self.account(state, now)
        state.active -= 1
        wrap = self.scenario.wrap_up_seconds
        if self.scenario.requires_presence and wrap and state.presence == "available":
            self.pool.unroutable(state.agent.user_id, "wrap_up")
            state.presence = "wrap_up"
            state.wrap_token += 1
            self.push(now + wrap, WRAP_END, (state.agent.user_id, state.wrap_token))
            return
        self.drain(now)

    def drain(self, now: float) -> None:
        """drain.drain_group: most urgent first; stop at the first ticket nobody takes."""
        if not self.waiting:
            return
        self.waiting.sort(
            key=lambda t: (
                t.urgency if t.urgency is not None else math.inf,
                -t.priority,
                t.arrival,
                t.ticket_id,
            )
        )
        while self.waiting:
            if not self.route(self.waiting[0], now):
                break
            self.waiting.pop(0)

    # --- the decision -------------------------------------------------------------------

    def _day(self, now: float) -> int:
        return int((now + self.scenario.day_origin) // 86400)

    def _at(self, seconds: float | None) -> datetime | None:
        return None if seconds is None else SIM_EPOCH + timedelta(seconds=seconds)

    def rows(self, now: float) -> list[MemberRow]:
        day = self._day(now)
        return [
            MemberRow(
                user_id=state.agent.user_id,
                is_active=True,
                presence=state.presence,
                online_since=self._at(state.online_since),
                idle_since=self._at(state.idle_since),
                active=state.active,
                open_offers=0,
                assigned_today=state.by_day.get(day, 0),
                last_assigned=self._at(state.last_assigned),
                max_active=state.agent.max_active,
            )
            for state in self.agents
        ]

    def route(self, ticket: SimTicket, now: float) -> bool:
        rows = self.rows(now)
        eligible = eligible_ids(rows, self.policy)
        if not eligible:
            return False
        ctx = PickContext(
            group=self.group,  # type: ignore[arg-type]  # SimGroup: a HandlerGroup with no row
            member_ids=list(self.member_ids),
            eligible_ids=eligible,
            ticket_id=ticket.ticket_id,
            now=SIM_EPOCH + timedelta(seconds=now),
            rows={row.user_id: row for row in rows},
        )
        chosen = self.strategy.pick(ctx)
        if chosen is None:
            if self.code == LONGEST_IDLE:
                raise SimulationError(
                    "longest idle's Redis pick found nobody although members were eligible "
                    "(Redis failed during the run?)"
                )
            return False
        if chosen not in eligible:
            raise SimulationError(f"strategy {self.code} chose {chosen}, who is not eligible")
        state = self.by_id[chosen]
        self.account(state, now)
        state.active += 1
        state.count += 1
        state.last_assigned = now
        day = self._day(now)
        state.by_day[day] = state.by_day.get(day, 0) + 1
        self.waits[ticket.ticket_id] = now - ticket.arrival
        self.push(now + ticket.work * state.agent.speed, COMPLETE, chosen)
        return True

    # --- the figures --------------------------------------------------------------------

    def report(self) -> dict:
        waits = [
            self.waits[t.ticket_id] for t in self.scenario.tickets if t.ticket_id in self.waits
        ]
        breaches = sum(
            1
            for t in self.scenario.tickets
            if t.budget is not None
            and (t.ticket_id not in self.waits or self.waits[t.ticket_id] > t.budget)
        )
        counts = {state.agent.label: state.count for state in self.agents}
        occupancy = {
            state.agent.label: round(state.busy_seconds / state.shift_seconds, 4)
            for state in self.agents
            if state.shift_seconds > 0
        }
        return {
            "strategy": self.code,
            "strategy_label": self.strategy.label,
            "tickets": len(self.scenario.tickets),
            "assigned": len(waits),
            "unassigned": len(self.scenario.tickets) - len(waits),
            "wait_p50_seconds": _round(percentile(waits, 50)),
            "wait_p95_seconds": _round(percentile(waits, 95)),
            "wait_mean_seconds": _round(statistics.fmean(waits) if waits else None),
            "sla_response_breaches": breaches,
            "max_queue_length": self.max_waiting,
            "counts": counts,
            "count_stddev": _round(statistics.pstdev(counts.values()) if counts else None),
            "occupancy": occupancy,
            "occupancy_stddev": _round(
                statistics.pstdev(occupancy.values()) if occupancy else None, 4
            ),
        }


def _round(value: float | None, digits: int = 2) -> float | None:
    return None if value is None else round(value, digits)


def simulate_strategy(
    scenario: Scenario, code: int, *, progress: Callable[[int], None] | None = None
) -> dict:
    """Replay the scenario through strategy `code`; the figures of that run."""
    return _Run(scenario, code, progress).run()


def simulate(
    scenario: Scenario,
    strategies: list[int] | tuple[int, ...] = SIMULATED_STRATEGIES,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> list[dict]:
    """Each strategy's figures over the same scenario, in the order asked.
    `progress(code, arrivals_routed)` is called every 500 arrivals."""
    results = []
    for code in strategies:
        report = None if progress is None else (lambda n, c=code: progress(c, n))
        results.append(simulate_strategy(scenario, code, progress=report))
    return results
