"""Prometheus gauges and counters of the ranking, in prometheus_client's default registry."""

from prometheus_client import Counter, Histogram

rank_degraded = Counter(
    "queueing_rank_degraded",
    "Rankings answered without Redis (rr = 9 for everyone, no jump bookkeeping).",
)
rank_duration = Histogram(
    "queueing_rank_duration_seconds",
    "Time to rank one queue, Redis round trips included.",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
)
