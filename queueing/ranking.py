"""The customer-service queue ranking algorithm of the source system. Pure: no Django, no Redis.

The order of the steps is the contract (other systems depend on the exact order):
1. rough score; 2. stable sort by it, highest first; 3. RR level per customer (read by the
store, parsed here); 4. RR adjustment, a bubble pass in which customers of RR 1-5 jump ahead of
customers of RR 6-9, with jump bookkeeping; 5. SSVIP adjustment, the same double loop.

Steps 4 and 5 are the source's double loop

    for i in range(n):
        for j in range(n - 1 - i):
            if can_swap(q[j], q[j + 1]): swap them (and, in step 4, record the jump)

computed exactly, but in time proportional to the number of swaps instead of n² (see
`_bubble_passes`). tests/queueing/transcription.py holds the plain double loops and the
hypothesis tests compare the two.

`rank` runs the steps one of two ways, with the same results (tests/queueing/test_fast_paths.py
compares them on random queues):
- explained, when given a `swaps` list (`rank_queue --explain`): pass by pass, on `QueueEntry`
  objects, recording every swap as a `Swap`;
- plain: `rank_persons`, on the queue as columns (`Persons`, one list per field), steps 4 and 5
  each in one sweep from the back of the queue that puts every customer where the passes would
  take it, with nothing built per person or per swap (see "Steps 1-5 on plain lists").
`rank` gives a `RankedEntry` per place either way; the endpoint calls `rank_persons` itself and
renders its columns (`Order`) without building one.
"""

import functools
import itertools
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import orjson

RR_DEFAULT = 9  # a missing or unreadable RR level
RR_LEVELS = {f"R{level}": level for level in range(1, 10)}
BE_JUMP_LIMIT = 15  # a customer jumped by this many distinct customers cannot be jumped again
NOT_CONFIRM_LIMIT = 4  # from this many unconfirmed offers on, the rough score is 0


class Customer(NamedTuple):
    """A waiting customer as the caller sent it (validated)."""

    uid: str  # the caller's uid as text: the key of the customer's cache entries
    already_wait_time: float  # seconds
    is_online: int
    is_complaint: int
    confirm_num: int
    not_confirm_num: int
    is_ssvip: bool
    be_jump: int  # distinct customers who had jumped ahead of this one before this request
    payload: dict[str, Any]  # the caller's object, returned with the results added


@dataclass(slots=True, eq=False)
class QueueEntry:
    """A customer's place in the queue being ranked, with what the steps compute."""

    customer: Customer
    uid: str
    rough_sort_score: float
    rough_position: int  # 0-based place after step 2
    not_confirm_num: int
    is_ssvip: bool
    be_jump: int
    rr: int = RR_DEFAULT
    user_group: int = 1


class RankedEntry(NamedTuple):
    """A customer's place in the ranked queue, with the results of the steps."""

    customer: Customer
    uid: str
    rough_sort_score: float
    rough_position: int  # 0-based place after step 2
    rr: int
    user_group: int
    be_jump: int  # with this request's jumps


# Builds a NamedTuple from a tuple of its fields without the keyword-handling constructor (a
# quarter of the cost, for a queue's worth of them).
_new_tuple = tuple.__new__


class Persons(NamedTuple):
    """A queue as columns: person k's values at index k of each list, as in `Customer`. The
    plain ranking's input; the uids are distinct."""

    uid: list[str]
    already_wait_time: list[float]
    is_online: list[int]
    is_complaint: list[int]
    confirm_num: list[int]
    not_confirm_num: list[int]
    is_ssvip: list[bool]
    be_jump: list[int]

    @classmethod
    def of(cls, customers: Sequence[Customer]) -> "Persons":
        if not customers:
            return cls([], [], [], [], [], [], [], [])
        columns = list(map(list, zip(*customers, strict=True)))
        return _new_tuple(cls, columns[: len(cls._fields)])  # without the payloads


@dataclass(slots=True)
class Order:
    """The plain ranking of `Persons`: the final order, and per person (by index) what the
    steps computed."""

    order: list[int]  # the persons in final order
    rough_order: list[int]  # the persons in order after step 2
    rough_sort_score: list[float]
    rr: list[int]
    user_group: list[int]
    be_jump: list[int]  # with this request's jumps
    # Step 4's jump bookkeeping: customer uid -> uids appended to its jump list, in order.
    appended_jumps: dict[str, list[str]]


class Swap(NamedTuple):
    """One swap of step 4 ("rr") or step 5 ("ssvip"): `ahead` moved ahead of `behind`."""

    step: str
    pass_no: int  # the outer loop's i
    ahead: QueueEntry
    behind: QueueEntry
    jump_counted: bool  # step 4: `ahead` was new in `behind`'s jump list (be_jump += 1)
    behind_be_jump: int  # step 4: `behind`'s be_jump after the swap


@dataclass
class Ranking:
    queue: list[RankedEntry]  # the final order
    # Step 4's jump bookkeeping: customer uid -> uids appended to its jump list, in order.
    appended_jumps: dict[str, list[str]] = field(default_factory=dict)


JumpListReader = Callable[[list[str]], Mapping[str, Sequence[str]]]


# Step 1 --------------------------------------------------------------------------------------


def rough_sort_score(customer: Customer) -> float:
    """already_wait_time / 3600 + 0.3 (online) + 0.3 (complaint) + confirm_num × 0.1, added in
    that order (float addition is not associative; the order is part of the contract)."""
    if customer.not_confirm_num >= NOT_CONFIRM_LIMIT:
        return 0.0
    score = customer.already_wait_time / 3600
    if customer.is_online == 1:
        score += 0.3
    if customer.is_complaint == 1:
        score += 0.3
    return score + customer.confirm_num * 0.1


# Step 2 --------------------------------------------------------------------------------------


def rough_sort(customers: Iterable[Customer]) -> list[QueueEntry]:
    """Highest rough score first; ties keep the request order (a stable sort)."""
    queue = [
        QueueEntry(
            customer=c,
            uid=c.uid,
            rough_sort_score=rough_sort_score(c),
            rough_position=0,
            not_confirm_num=c.not_confirm_num,
            is_ssvip=c.is_ssvip,
            be_jump=c.be_jump,
        )
        for c in customers
    ]
    # list.sort is stable, and stays so with reverse=True.
    queue.sort(key=_by_rough_score, reverse=True)
    for position, entry in enumerate(queue):
        entry.rough_position = position
    return queue


def _by_rough_score(entry: QueueEntry) -> float:
    return entry.rough_sort_score


# Step 3 --------------------------------------------------------------------------------------


def rr_level(cached: bytes | str | None) -> int:
    """The RR level in a `lechat_<uid>` cache value: a JSON object whose rr_1p5 is "R1".."R9".
    Anything else (no value, bad JSON, no such field, another value) is level 9."""
    if cached is None:
        return RR_DEFAULT
    if len(cached) <= 64:
        # Most values are one of a few short texts: parse each once.
        return _short_rr_level(cached)
    return _parse_rr_level(cached)


@functools.lru_cache(maxsize=4096)
def _short_rr_level(cached: bytes | str) -> int:
    return _parse_rr_level(cached)


def _parse_rr_level(cached: bytes | str) -> int:
    try:
        value = json.loads(cached)
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return RR_DEFAULT
    if not isinstance(value, dict):
        return RR_DEFAULT
    level = value.get("rr_1p5")
    return RR_LEVELS.get(level, RR_DEFAULT) if isinstance(level, str) else RR_DEFAULT


def user_group(rr: int) -> int:
    return 2 if rr <= 5 else 1


def assign_rr(queue: Iterable[QueueEntry], rr_levels: Mapping[str, int]) -> None:
    """Customers missing from `rr_levels` get level 9."""
    for entry in queue:
        entry.rr = rr = rr_levels.get(entry.uid, RR_DEFAULT)
        entry.user_group = 2 if rr <= 5 else 1


def jump_list(cached: bytes | str | None) -> list[str]:
    """The uids in a `lechat_jump_uids_<uid>` value (a JSON array of uids as strings), as
    strings. Unreadable values count as an empty list. Integral numbers are read as their
    decimal text, as the store's Lua script reads them."""
    if cached is None:
        return []
    try:
        value = orjson.loads(cached)
    except orjson.JSONDecodeError:
        pass
    else:
        # The usual value, read by orjson as json reads it; anything else (numbers, nesting,
        # what orjson refuses) is left to json, whose reading is the contract.
        if type(value) is list and all(type(item) is str for item in value):
            return value
    try:
        value = json.loads(cached)
    except (ValueError, RecursionError):
        return []
    if not isinstance(value, list):
        return []
    uids = []
    for item in value:
        if isinstance(item, str):
            uids.append(item)
        elif isinstance(item, int) and not isinstance(item, bool):
            uids.append(str(item))
        elif isinstance(item, float) and item.is_integer():
            uids.append(str(int(item)))
    return uids


# Step 4 --------------------------------------------------------------------------------------


def can_be_jumped(entry: QueueEntry) -> bool:
    """May move back in step 4 (the `a` of a swap); the condition on a alone."""
    return 6 <= entry.rr <= 9 and entry.be_jump < BE_JUMP_LIMIT


def can_jump(entry: QueueEntry) -> bool:
    """May move ahead in step 4 (the `b` of a swap); the condition on b alone."""
    return 1 <= entry.rr <= 5 and entry.not_confirm_num < NOT_CONFIRM_LIMIT


def _rr_swaps(a: QueueEntry, b: QueueEntry) -> bool:
    # Literally the source's condition; a.rr > b.rr follows from the ranges but is kept.
    return (
        6 <= a.rr <= 9
        and 1 <= b.rr <= 5
        and a.rr > b.rr
        and a.be_jump < BE_JUMP_LIMIT
        and b.not_confirm_num < NOT_CONFIRM_LIMIT
    )


def jump_list_owners(queue: Sequence[QueueEntry]) -> list[str]:
    """The customers whose jump lists step 4 may read: each who can be jumped and has someone
    who can jump behind them, with no one between who can never move in step 4 (nobody passes
    such a customer). A superset of the lists `rr_adjust` reads."""
    owners = []
    jumper_behind = False
    for entry in reversed(queue):
        if can_jump(entry):
            jumper_behind = True
        elif can_be_jumped(entry):
            if jumper_behind:
                owners.append(entry.uid)
        else:
            jumper_behind = False
    return owners


def rr_adjust(
    queue: list[QueueEntry],
    jump_lists: Mapping[str, Sequence[str]],
    *,
    swaps: list[Swap] | None = None,
) -> dict[str, list[str]]:
    """Step 4, in place. Swap a = q[j], b = q[j+1] when 6 ≤ a.rr ≤ 9, 1 ≤ b.rr ≤ 5,
    a.rr > b.rr, a.be_jump < 15 and b.not_confirm_num < 4. After each swap b is recorded in
    a's jump list; if b was not in it yet (as stored, or appended earlier in this request),
    a.be_jump += 1, which the later comparisons see.

    `jump_lists` holds the stored lists of at least `jump_list_owners(queue)`. Returns the
    uids appended per customer, in order, for the store to write."""
    known: dict[str, set[str]] = {}
    appended: dict[str, list[str]] = {}

    def record(a: QueueEntry, b: QueueEntry, pass_no: int) -> None:
        seen = known.get(a.uid)
        if seen is None:
            seen = known[a.uid] = set(jump_lists[a.uid])
        counted = b.uid not in seen
        if counted:
            seen.add(b.uid)
            appended.setdefault(a.uid, []).append(b.uid)
            a.be_jump += 1
        if swaps is not None:
            swaps.append(Swap("rr", pass_no, b, a, counted, a.be_jump))

    _bubble_passes(queue, _rr_swaps, record)
    return appended


# Step 5 --------------------------------------------------------------------------------------


def _ssvip_swaps(a: QueueEntry, b: QueueEntry) -> bool:
    # An SSVIP moves ahead within its group or from a higher group, never past a user of a
    # higher group.
    return (
        a.not_confirm_num < NOT_CONFIRM_LIMIT
        and not a.is_ssvip
        and b.is_ssvip
        and b.user_group >= a.user_group
    )


def ssvip_adjust(queue: list[QueueEntry], *, swaps: list[Swap] | None = None) -> None:
    """Step 5, in place: swap a = q[j], b = q[j+1] when a.not_confirm_num < 4, a is not SSVIP,
    b is SSVIP and b.user_group ≥ a.user_group."""

    def record(a: QueueEntry, b: QueueEntry, pass_no: int) -> None:
        if swaps is not None:
            swaps.append(Swap("ssvip", pass_no, b, a, False, a.be_jump))

    _bubble_passes(queue, _ssvip_swaps, record if swaps is not None else None)


# Steps 1-5 -----------------------------------------------------------------------------------


def rank(
    customers: Iterable[Customer],
    *,
    rr_levels: Mapping[str, int],
    read_jump_lists: JumpListReader,
    swaps: list[Swap] | None = None,
) -> Ranking:
    """The whole algorithm. `rr_levels` maps uid → RR level (missing: 9); `read_jump_lists`
    is called once, with the uids whose stored jump lists step 4 may need. Given a `swaps`
    list, every swap of steps 4 and 5 is appended to it. (Customers sharing a uid, which the
    endpoint refuses, are ranked the explained way, whose jump bookkeeping goes by uid.)"""
    customers = list(customers)
    if swaps is None and len({c.uid for c in customers}) == len(customers):
        persons = Persons.of(customers)
        levels = list(map(rr_levels.get, persons.uid, itertools.repeat(RR_DEFAULT)))
        return ranking_of(customers, rank_persons(persons, levels, read_jump_lists))
    queue = rough_sort(customers)
    assign_rr(queue, rr_levels)
    owners = jump_list_owners(queue)
    jump_lists = read_jump_lists(owners) if owners else {}
    appended = rr_adjust(queue, jump_lists, swaps=swaps)
    ssvip_adjust(queue, swaps=swaps)
    ranked = [
        RankedEntry(
            e.customer, e.uid, e.rough_sort_score, e.rough_position, e.rr, e.user_group, e.be_jump
        )
        for e in queue
    ]
    return Ranking(queue=ranked, appended_jumps=appended)


# Steps 1-5 on plain lists --------------------------------------------------------------------
#
# A person is their index in `customers` (whose uids are distinct); a queue is a list of such
# indices, and each value a step reads or changes is a list indexed by person.
#
# Steps 4 and 5 are computed from where their passes take each customer, not pass by pass. In
# both, the customers who move forward ("movers": step 4's jumpers, step 5's SSVIPs) never pass
# one another, nor do the customers they pass (who only move back), and everyone else never
# moves. In every pass a mover moves one place forward, passing the customer just ahead of it
# (`_bubble_passes`: that customer's run carries it over the movers right behind it), until it
# is stopped for good by a customer it may not pass: that customer stays before it, and the
# movers behind it stay behind it, from then on. A mover that moves in every pass stays within
# the pass bound (after i passes it is at most at place n - 1 - i), so the bound never stops
# one. Hence a customer who may be passed is passed by the movers that reach it, in their
# order, the nearest first, for as long as the condition holds (in step 4 it stops holding
# after the jumper that brings be_jump to 15); the first mover refused stays right behind it,
# and so do all the movers behind that one. Swept from the back of the queue, the movers still
# moving are a stream that each customer met lets through, thins or stops: one step per
# customer plus one per swap, with the order of everyone else unchanged.


def rough_order(persons: Persons) -> tuple[list[float], list[int]]:
    """Steps 1 and 2, which need no RR level: each person's rough score (by index) and the
    queue in rough order."""
    scores = _rough_sort_scores(persons)
    # Step 2: sorted() is stable with reverse=True too, so ties keep the request order.
    return scores, sorted(range(len(scores)), key=scores.__getitem__, reverse=True)


def rank_persons(
    persons: Persons,
    rr_levels: Sequence[int],
    read_jump_lists: JumpListReader,
    *,
    rough: tuple[list[float], list[int]] | None = None,
) -> Order:
    """Steps 1-5 on a queue of distinct uids; `rr_levels` holds each person's RR level (by
    index), `read_jump_lists` is called as by `rank`; `rough` is `rough_order(persons)` if the
    caller has it already."""
    uids = persons.uid
    unconfirmed = persons.not_confirm_num
    scores, queue = rough if rough is not None else rough_order(persons)

    rr = list(rr_levels)
    groups = [2 if level <= 5 else 1 for level in rr]
    be_jump = list(persons.be_jump)
    # Step 4: jumpers pass customers who can be jumped (`_rr_swaps`).
    jumper = [
        1 <= level <= 5 and offers < NOT_CONFIRM_LIMIT
        for level, offers in zip(rr, unconfirmed, strict=True)
    ]
    jumpable = [
        6 <= level <= 9 and jumps < BE_JUMP_LIMIT for level, jumps in zip(rr, be_jump, strict=True)
    ]
    owners = _jump_list_owners_plain(queue, jumper, jumpable, uids)
    jump_lists = read_jump_lists(owners) if owners else {}
    final, appended = _rr_adjust_plain(queue, jumper, jumpable, be_jump, uids, jump_lists)

    # Step 5 (`_ssvip_swaps`): an SSVIP of group g passes a customer whose guard is at most g:
    # the user group of a non-SSVIP with fewer than 4 unconfirmed offers; 3 (above any group,
    # passed by no one) for anyone else.
    ssvip = persons.is_ssvip
    ssvip_group = [g if vip else 0 for g, vip in zip(groups, ssvip, strict=True)]
    guard = [
        3 if vip or offers >= NOT_CONFIRM_LIMIT else g
        for g, vip, offers in zip(groups, ssvip, unconfirmed, strict=True)
    ]
    final = _ssvip_adjust_plain(final, ssvip_group, guard)
    return Order(
        order=final,
        rough_order=queue,
        rough_sort_score=scores,
        rr=rr,
        user_group=groups,
        be_jump=be_jump,
        appended_jumps=appended,
    )


# 0.3 for a flag of 1, else 0.0: adding 0.0 where `rough_sort_score` adds nothing gives the same
# sum (x + 0.0 == x but for x = -0.0, which the last addition, of confirm_num × 0.1, turns into
# 0.0 either way; tests/queueing/test_fast_paths.py checks the edges).
_BONUS = {0: 0.0, 1: 0.3}


def _rough_sort_scores(persons: Persons) -> list[float]:
    """`rough_sort_score` of every person, with the same additions in the same order."""
    bonus = _BONUS.get
    return [
        0.0
        if offers >= NOT_CONFIRM_LIMIT
        else waited / 3600 + bonus(online, 0.0) + bonus(complaint, 0.0) + confirmed * 0.1
        for waited, online, complaint, confirmed, offers in zip(
            persons.already_wait_time,
            persons.is_online,
            persons.is_complaint,
            persons.confirm_num,
            persons.not_confirm_num,
            strict=True,
        )
    ]


def ranking_of(customers: list[Customer], order: Order) -> Ranking:
    """`rank`'s result from the plain ranking's columns."""
    rough_positions = [0] * len(customers)
    for position, person in enumerate(order.rough_order):
        rough_positions[person] = position
    uids, scores, rr, groups, be_jump = (
        [c.uid for c in customers],
        order.rough_sort_score,
        order.rr,
        order.user_group,
        order.be_jump,
    )
    ranked = [
        _new_tuple(
            RankedEntry,
            (
                customers[p],
                uids[p],
                scores[p],
                rough_positions[p],
                rr[p],
                groups[p],
                be_jump[p],
            ),
        )
        for p in order.order
    ]
    return Ranking(queue=ranked, appended_jumps=order.appended_jumps)


def _jump_list_owners_plain(
    queue: list[int], jumper: list[bool], jumpable: list[bool], uids: list[str]
) -> list[str]:
    """`jump_list_owners`: the same uids in the same order."""
    owners = []
    jumper_behind = False
    for person in reversed(queue):
        if jumper[person]:
            jumper_behind = True
        elif jumpable[person]:
            if jumper_behind:
                owners.append(uids[person])
        else:
            jumper_behind = False
    return owners


def _rr_adjust_plain(
    queue: list[int],
    jumper: list[bool],
    jumpable: list[bool],
    be_jump: list[int],
    uids: list[str],
    jump_lists: Mapping[str, Sequence[str]],
) -> tuple[list[int], dict[str, list[str]]]:
    """Step 4 (`rr_adjust`): the final order and the uids appended per customer; `be_jump` is
    updated in place. A customer who can be jumped lets the jumpers reaching it pass, each
    recorded in its jump list unless already there, up to and including the one that brings
    its be_jump to 15."""
    moving: list[int] = []  # jumpers still moving forward, the frontmost last
    placed: list[int] = []  # the final order, from the back
    appended: dict[str, list[str]] = {}
    uid_of = uids.__getitem__
    join_stream, place = moving.append, placed.append
    for person in reversed(queue):
        if jumper[person]:
            join_stream(person)
        elif not moving:
            place(person)
        elif jumpable[person]:
            owner = uids[person]
            room = BE_JUMP_LIMIT - be_jump[person]  # new jumpers it lets pass, at most
            stored = jump_lists[owner]
            waiting = len(moving)
            if not stored:  # every jumper is new to it (uids are distinct)
                passing = waiting if waiting < room else room
                new = list(map(uid_of, moving[: -passing - 1 : -1]))  # the frontmost first
            else:
                listed = set(stored)
                new = []
                passing = 0
                for j in reversed(moving):
                    passing += 1
                    if uids[j] not in listed:
                        new.append(uids[j])
                        if len(new) == room:
                            break
            if new:
                appended[owner] = new
                be_jump[person] += len(new)
            if passing < waiting:
                stopped = waiting - passing
                placed += moving[:stopped]
                del moving[:stopped]
            place(person)
        else:  # passed by no one: the stream stops behind it
            placed += moving
            moving.clear()
            place(person)
    placed += moving
    placed.reverse()
    return placed, appended


def _ssvip_adjust_plain(queue: list[int], ssvip_group: list[int], guard: list[int]) -> list[int]:
    """Step 5 (`ssvip_adjust`): the final order. A customer lets the SSVIPs reaching it pass
    while their group is at least its guard."""
    moving: list[int] = []  # SSVIPs still moving forward, the frontmost last
    placed: list[int] = []  # the final order, from the back
    for person in reversed(queue):
        if ssvip_group[person]:
            moving.append(person)
            continue
        if moving:
            least = guard[person]
            waiting = len(moving)
            passing = 0
            while passing < waiting and ssvip_group[moving[waiting - 1 - passing]] >= least:
                passing += 1
            stopped = waiting - passing
            if stopped:
                placed += moving[:stopped]
                del moving[:stopped]
        placed.append(person)
    placed += moving
    placed.reverse()
    return placed


# The double loop -----------------------------------------------------------------------------


def _bubble_passes(
    queue: list[QueueEntry],
    can_swap: Callable[[QueueEntry, QueueEntry], bool],
    swapped: Callable[[QueueEntry, QueueEntry, int], None] | None,
) -> None:
    """Exactly the source's double loop

        for i in range(n):
            for j in range(n - 1 - i):
                a, b = q[j], q[j + 1]
                if can_swap(a, b): q[j], q[j + 1] = b, a; swapped(a, b, i)

    in time proportional to n plus the number of swaps, for conditions with these properties
    (steps 4 and 5 have them):
    (R) roles are disjoint: an element that can ever be the `a` of a swap can never be a `b`
        (step 4: a needs rr 6-9, b rr 1-5; step 5: a is not SSVIP, b is);
    (S) can_swap(a, b) depends only on a and b, and a swap changes the state of a alone.

    Within one pass i the loop carries an element rightward: after swapping a with b at j it
    compares the same a with q[j+2], and so on, until a comparison fails or j + 1 passes the
    bound n - 1 - i. Call the position j where such a run starts (a swap at j with none at
    j - 1) a start. By (R) a run only passes `b` elements, so it never reaches another start,
    and the element at a start and the one after it are as they were when the pass began.
    Hence the starts of pass i are exactly the pairs that can swap at the beginning of pass i,
    and the runs can be played one after the other without scanning the pairs between them.

    After a run from s to t, only the pairs around changed elements can newly be able to swap:
    (s-1, s), checked right after the run, when q[s-1] is final for this pass (earlier runs
    stop before the `a` at s, later ones start after t); inside the run (b, b) and (b, a) pairs,
    impossible by (R); and (t, t+1), which failed or lay beyond the bound (forever, as the bound
    only shrinks), unless t + 1 was the start of the next run, whose own (s-1, s) check covers
    it. So the candidate starts of pass i + 1 are the collected (s-1) pairs. A pass with no
    swap ends the loop: the next passes would compare a subset of the same, unchanged pairs.
    """
    n = len(queue)
    starts = [j for j in range(n - 1) if can_swap(queue[j], queue[j + 1])]
    pass_no = 0
    while starts:
        last = n - 1 - pass_no  # this pass compares (j, j+1) for j + 1 <= last only
        next_starts = []
        for s in starts:
            if s + 1 > last:
                break  # so are all later starts, in this pass and every later one
            a = queue[s]
            j = s
            while j < last and can_swap(a, queue[j + 1]):
                b = queue[j + 1]
                queue[j] = b
                queue[j + 1] = a
                if swapped is not None:
                    swapped(a, b, pass_no)
                j += 1
            if j > s and s > 0 and can_swap(queue[s - 1], queue[s]):
                next_starts.append(s - 1)
        starts = next_starts
        pass_no += 1
