import functools
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass

from . import metrics, ranking, store
from .ranking import Customer, RankedEntry, Swap

logger = logging.getLogger(__name__)


@dataclass
class RankOutcome:
    queue: list[RankedEntry]  # the final order
    trace_id: str
    degraded: bool  # Redis was unreachable: rr = 9 for everyone, no jump bookkeeping
    jumps_appended: int  # uids this request added to jump lists in Redis
    swaps: list[Swap] | None  # every swap of steps 4 and 5, when asked to explain


def queue_rank(
    *,
    customers: Sequence[Customer],
    trace_id: str,
    record_jumps: bool = True,
    explain: bool = False,
) -> RankOutcome:
    """Ranks a customer-service queue (ranking.py has the algorithm) with the RR levels and jump
    lists in Redis, and appends this request's jumps to the lists (unless `record_jumps` is
    false: a dry run that reads Redis and writes nothing).

    If Redis cannot answer at any point, the queue is ranked again from scratch as if every
    customer were at RR 9, which makes no jumps: the response says `degraded`, and no jump
    bookkeeping is kept for it. (Should Redis fail after running the append script but before
    answering, the appends stand though the response is degraded.)"""
    started = time.perf_counter()
    logger.info(
        "queueing rank request",
        extra={
            "trace_id": trace_id,
            "persons": len(customers),
            "ssvip": sum(1 for c in customers if c.is_ssvip),
            "not_confirm_4plus": sum(
                1 for c in customers if c.not_confirm_num >= ranking.NOT_CONFIRM_LIMIT
            ),
            "record_jumps": record_jumps,
        },
    )
    swaps: list[Swap] | None = [] if explain else None
    degraded = False
    jumps_appended = 0
    try:
        rr_levels = store.read_rr_levels([c.uid for c in customers])
        texts: dict[str, bytes | None] = {}  # the jump lists as read, for the append
        result = ranking.rank(
            customers,
            rr_levels=rr_levels,
            read_jump_lists=functools.partial(store.read_jump_lists, texts=texts),
            swaps=swaps,
        )
        if record_jumps:
            jumps_appended = store.append_jumps(result.appended_jumps, texts=texts)
    except store.Unavailable as exc:
        degraded = True
        metrics.rank_degraded.inc()
        logger.warning(
            "queueing rank degraded: Redis unavailable",
            extra={"trace_id": trace_id, "degraded": True, "error": str(exc)},
        )
        swaps = [] if explain else None
        result = ranking.rank(customers, rr_levels={}, read_jump_lists=_no_jump_lists, swaps=swaps)
        jumps_appended = 0

    elapsed = time.perf_counter() - started
    metrics.rank_duration.observe(elapsed)
    logger.info(
        "queueing rank result",
        extra={
            "trace_id": trace_id,
            "persons": len(result.queue),
            "degraded": degraded,
            "jumps_counted": sum(len(uids) for uids in result.appended_jumps.values()),
            "jumps_appended": jumps_appended,
            "first_uids": [entry.uid for entry in result.queue[:10]],
            "duration_ms": round(elapsed * 1000, 2),
        },
    )
    return RankOutcome(
        queue=result.queue,
        trace_id=trace_id,
        degraded=degraded,
        jumps_appended=jumps_appended,
        swaps=swaps,
    )


def _no_jump_lists(uids: list[str]) -> dict[str, list[str]]:
    return {uid: [] for uid in uids}
