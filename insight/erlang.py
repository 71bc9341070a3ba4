"""Erlang C staffing, pure arithmetic (no Django): how many agents a queue needs for a
service-level target and an occupancy cap, and the figures at that number.

Traffic A (Erlangs) = arrivals × aht_seconds / (interval_minutes × 60). Erlang C, the
probability that an arrival waits with N agents, comes from the Erlang B recursion in floats
(B(0) = 1; B(n) = A·B(n−1) / (n + A·B(n−1)); C = N·B / (N − A·(1 − B))): every term stays in
[0, 1], so there is no factorial or power to overflow, at 1,000 Erlangs or 100,000. With N > A:

    service level = 1 − C · exp(−(N − A) · target_seconds / aht_seconds)
    ASA           = C · aht_seconds / (N − A)
    occupancy     = A / N

raw_agents is the smallest N > A with service level ≥ the target and occupancy ≤ the cap;
agents = ceil(raw_agents / (1 − shrinkage)). No arrivals: 0 agents, service level 1,
occupancy, probability of waiting and ASA 0."""

import math
from dataclasses import asdict, dataclass

DEFAULT_INTERVAL_MINUTES = 30
DEFAULT_TARGET_SECONDS = 20
DEFAULT_SERVICE_LEVEL = 0.8
DEFAULT_SHRINKAGE = 0.3
DEFAULT_MAX_OCCUPANCY = 0.85
# The largest traffic the calculator accepts: the search is linear in N (about 0.1 s here).
MAX_TRAFFIC_ERLANGS = 100_000
# Comparisons of computed floats against targets forgive rounding noise (e.g. 14 / 0.7).
_EPSILON = 1e-9


@dataclass(frozen=True)
class Staffing:
    traffic_erlangs: float
    raw_agents: int
    agents: int
    service_level: float
    occupancy: float
    probability_of_waiting: float
    asa_seconds: float

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def traffic(arrivals: float, interval_minutes: float, aht_seconds: float) -> float:
    """Offered load in Erlangs: arrivals per interval × handle time ÷ interval length."""
    return arrivals * aht_seconds / (interval_minutes * 60.0)


def erlang_b(agents: int, traffic_erlangs: float) -> float:
    """Blocking probability with `agents` servers, by the recursion (stable for any load)."""
    b = 1.0
    for n in range(1, agents + 1):
        b = traffic_erlangs * b / (n + traffic_erlangs * b)
    return b


def _c_from_b(agents: int, a: float, b: float) -> float:
    if agents <= a:
        return 1.0  # no steady state: everyone waits
    return agents * b / (agents - a * (1.0 - b))


def erlang_c(agents: int, traffic_erlangs: float) -> float:
    """Probability that an arrival waits (1 when agents ≤ traffic; 0 with no traffic)."""
    if traffic_erlangs <= 0:
        return 0.0
    return _c_from_b(agents, traffic_erlangs, erlang_b(agents, traffic_erlangs))


def service_level(
    agents: int, traffic_erlangs: float, aht_seconds: float, target_seconds: float
) -> float:
    """Share of arrivals answered within target_seconds."""
    if traffic_erlangs <= 0:
        return 1.0
    if agents <= traffic_erlangs:
        return 0.0
    c = erlang_c(agents, traffic_erlangs)
    return _service_level(c, agents, traffic_erlangs, aht_seconds, target_seconds)


def _service_level(c: float, n: int, a: float, aht: float, target: float) -> float:
    return max(0.0, 1.0 - c * math.exp(-(n - a) * target / aht))


def asa_seconds(agents: int, traffic_erlangs: float, aht_seconds: float) -> float:
    """Average speed of answer (mean wait over all arrivals); infinite when agents ≤ load."""
    if traffic_erlangs <= 0:
        return 0.0
    if agents <= traffic_erlangs:
        return math.inf
    return erlang_c(agents, traffic_erlangs) * aht_seconds / (agents - traffic_erlangs)


def gross_up(raw_agents: int, shrinkage: float) -> int:
    """Agents to schedule so that raw_agents remain after shrinkage (breaks, training, …)."""
    return math.ceil(raw_agents / (1.0 - shrinkage) - _EPSILON)


def staff(
    *,
    arrivals: float,
    aht_seconds: float,
    interval_minutes: float = DEFAULT_INTERVAL_MINUTES,
    target_seconds: float = DEFAULT_TARGET_SECONDS,
    service_level_target: float = DEFAULT_SERVICE_LEVEL,
    shrinkage: float = DEFAULT_SHRINKAGE,
    max_occupancy: float = DEFAULT_MAX_OCCUPANCY,
) -> Staffing:
    """The smallest N meeting both targets, and the figures at N. Arguments must be valid
    (the API's serializer checks them): arrivals ≥ 0, aht > 0, interval > 0, target ≥ 0,
    0 < service level < 1, 0 ≤ shrinkage < 1, 0 < max_occupancy ≤ 1."""
    a = traffic(arrivals, interval_minutes, aht_seconds)
    if a <= 0:
        return Staffing(0.0, 0, 0, 1.0, 0.0, 0.0, 0.0)
    # B(n) for n up to the first N above A, then one step per candidate: linear in N overall.
    n = math.floor(a) + 1
    b = erlang_b(n, a)
    while True:
        c = _c_from_b(n, a, b)
        sl = _service_level(c, n, a, aht_seconds, target_seconds)
        occupancy = a / n
        if sl >= service_level_target - _EPSILON and occupancy <= max_occupancy + _EPSILON:
            return Staffing(
                traffic_erlangs=a,
                raw_agents=n,
                agents=gross_up(n, shrinkage),
                service_level=sl,
                occupancy=occupancy,
                probability_of_waiting=c,
                asa_seconds=c * aht_seconds / (n - a),
            )
        n += 1
        b = a * b / (n + a * b)
