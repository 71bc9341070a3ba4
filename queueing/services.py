import functools
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from . import gauges, ranking, store
from .ranking import Customer, JumpListReader, Order, Persons, RankedEntry, Swap

logger = logging.getLogger(__name__)

_Result = TypeVar("_Result", ranking.Ranking, Order)
_Rendered = TypeVar("_Rendered")


@dataclass
class RankOutcome:
    queue: list[RankedEntry]  # the final order
    trace_id: str
    degraded: bool  # Redis was unreachable: rr = 9 for everyone, no jump bookkeeping
    jumps_appended: int  # uids this request added to jump lists in Redis
    swaps: list[Swap] | None  # every swap of steps 4 and 5, when asked to explain


@dataclass
class PersonsOutcome(Generic[_Rendered]):
    """`queue_rank_persons`'s answer: the ranking as columns (ranking.Order)."""

    order: Order
    trace_id: str
    degraded: bool
    jumps_appended: int
    rendered: _Rendered | None  # what `render` made of `order`


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
    customers = list(customers)
    persons = Persons.of(customers)
    if not explain and len(set(persons.uid)) == len(customers):
        outcome: PersonsOutcome[None] = queue_rank_persons(  # nothing rendered
            persons=persons, trace_id=trace_id, record_jumps=record_jumps
        )
        return RankOutcome(
            queue=ranking.ranking_of(customers, outcome.order).queue,
            trace_id=trace_id,
            degraded=outcome.degraded,
            jumps_appended=outcome.jumps_appended,
            swaps=None,
        )

    swaps: list[Swap] | None = None

    def explained(rr_levels: list[int] | None, read_jump_lists: JumpListReader):
        nonlocal swaps
        swaps = [] if explain else None
        levels = {} if rr_levels is None else dict(zip(persons.uid, rr_levels, strict=True))
        return ranking.rank(
            customers, rr_levels=levels, read_jump_lists=read_jump_lists, swaps=swaps
        )

    result, degraded, jumps_appended, _ = _rank_with_redis(
        persons, trace_id, record_jumps, explained
    )
    return RankOutcome(
        queue=result.queue,
        trace_id=trace_id,
        degraded=degraded,
        jumps_appended=jumps_appended,
        swaps=swaps,
    )


def queue_rank_persons(
    *,
    persons: Persons,
    trace_id: str,
    record_jumps: bool = True,
    render: Callable[[Order], _Rendered] | None = None,
) -> PersonsOutcome[_Rendered]:
    """`queue_rank` of a queue given as columns, whose uids are distinct (the endpoint's): the
    same Redis reads and writes, the same degraded mode, the same log lines and metrics,
    without building an object per person.

    `render(order)`, if given, is called with the ranking while Redis appends its jumps (the
    caller's work overlaps Redis's), and its value is the outcome's `rendered`; should the
    append fail, it is called again with the degraded ranking, whose value replaces it."""

    rough: list[tuple[list[float], list[int]]] = []  # steps 1 and 2, made while Redis reads

    def plain(rr_levels: list[int] | None, read_jump_lists: JumpListReader) -> Order:
        if rr_levels is None:  # degraded
            rr_levels = [ranking.RR_DEFAULT] * len(persons.uid)
        return ranking.rank_persons(
            persons, rr_levels, read_jump_lists, rough=rough[0] if rough else None
        )

    order, degraded, jumps_appended, rendered = _rank_with_redis(
        persons,
        trace_id,
        record_jumps,
        plain,
        render,
        while_reading=lambda: rough.append(ranking.rough_order(persons)),
    )
    return PersonsOutcome(
        order=order,
        trace_id=trace_id,
        degraded=degraded,
        jumps_appended=jumps_appended,
        rendered=rendered,
    )


def _rank_with_redis(
    persons: Persons,
    trace_id: str,
    record_jumps: bool,
    rank: Callable[[list[int] | None, JumpListReader], _Result],
    render: Callable[[_Result], _Rendered] | None = None,
    *,
    while_reading: Callable[[], None] | None = None,
) -> tuple[_Result, bool, int, _Rendered | None]:
    """`rank(rr_levels, read_jump_lists)` with Redis's RR levels (per person) and jump lists,
    read in one round trip (`while_reading()` is called while Redis reads), the jumps
    appended, logged and measured; on Redis failing, `rank(None, no lists)`, degraded. Returns
    the result, whether degraded, how many uids were appended, and `render(result)` (made
    while the append runs)."""
    started = time.perf_counter()
    uids = persons.uid
    logger.info(
        "queueing rank request",
        extra={
            "trace_id": trace_id,
            "persons": len(uids),
            "ssvip": sum(map(bool, persons.is_ssvip)),
            "not_confirm_4plus": sum(
                1 for offers in persons.not_confirm_num if offers >= ranking.NOT_CONFIRM_LIMIT
            ),
            "record_jumps": record_jumps,
        },
    )
    degraded = False
    jumps_appended = 0
    rendered = None
    try:
        reading = store.start_read_queue(uids)
        if while_reading is not None:
            try:
                while_reading()
            except BaseException:
                reading.close()
                raise
        rr_levels, texts = reading.result()  # texts: the jump lists as read
        result = rank(rr_levels, functools.partial(store.jump_lists, texts))
        if render is None:
            if record_jumps:
                jumps_appended = store.append_jumps(result.appended_jumps, texts=texts, ranked=True)
        elif record_jumps:
            pending = store.start_append_jumps(result.appended_jumps, texts=texts, ranked=True)
            try:
                rendered = render(result)
            except BaseException:
                pending.close()
                raise
            jumps_appended = pending.result()
        else:
            rendered = render(result)
    except store.Unavailable as exc:
        degraded = True
        gauges.rank_degraded.inc()
        logger.warning(
            "queueing rank degraded: Redis unavailable",
            extra={"trace_id": trace_id, "degraded": True, "error": str(exc)},
        )
        result = rank(None, _no_jump_lists)
        jumps_appended = 0
        rendered = None if render is None else render(result)

    elapsed = time.perf_counter() - started
    gauges.rank_duration.observe(elapsed)
    if isinstance(result, Order):
        first_uids = [uids[p] for p in result.order[:10]]
    else:
        first_uids = [entry.uid for entry in result.queue[:10]]
    logger.info(
        "queueing rank result",
        extra={
            "trace_id": trace_id,
            "persons": len(uids),
            "degraded": degraded,
            "jumps_counted": sum(map(len, result.appended_jumps.values())),
            "jumps_appended": jumps_appended,
            "first_uids": first_uids,
            "duration_ms": round(elapsed * 1000, 2),
        },
    )
    return result, degraded, jumps_appended, rendered


def _no_jump_lists(uids: list[str]) -> dict[str, list[str]]:
    return {uid: [] for uid in uids}
