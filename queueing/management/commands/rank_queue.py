"""`manage.py rank_queue FILE.json [--explain]`: rank a queue as the endpoint would, for
operators reproducing a complaint ("why was I served after them?")."""

import json
import uuid
from collections import defaultdict
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from rest_framework import serializers

from queueing import services
from queueing.ranking import NOT_CONFIRM_LIMIT, RankedEntry, Swap
from queueing.serializers import parse_queue, ranked_queue


class Command(BaseCommand):
    help = (
        "Rank the queue in FILE.json (the endpoint's request body, or just its list of persons) "
        "with the RR levels and jump lists now in Redis, and print the order. A dry run: it "
        "writes no jump bookkeeping. --explain prints each person's score terms and every swap "
        "that moved them."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help='JSON file: {"queue": [...]} or [...]')
        parser.add_argument(
            "--explain", action="store_true", help="Score terms and swaps per person."
        )
        parser.add_argument(
            "--json", action="store_true", help="Print the endpoint's response body instead."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            with open(options["file"], encoding="utf-8") as f:
                body = json.load(f)
        except (OSError, ValueError) as exc:
            raise CommandError(f"Cannot read {options['file']}: {exc}") from exc
        queue = body.get("queue") if isinstance(body, dict) else body
        try:
            customers = parse_queue(queue)
        except serializers.ValidationError as exc:
            raise CommandError(f"Invalid queue: {json.dumps(exc.detail)}") from exc

        outcome = services.queue_rank(
            customers=customers,
            trace_id=f"cli-{uuid.uuid4().hex}",
            record_jumps=False,
            explain=options["explain"],
        )
        if options["json"]:
            body = {
                "queue": ranked_queue(outcome.queue),
                "trace_id": outcome.trace_id,
                "degraded": outcome.degraded,
            }
            self.stdout.write(json.dumps(body, indent=2, ensure_ascii=False))
            return

        if outcome.degraded:
            self.stderr.write(
                self.style.WARNING("Redis unavailable: degraded ranking, rr = 9 for everyone.")
            )
        self.stdout.write(f"{len(outcome.queue)} persons ranked (trace {outcome.trace_id})")
        moves: dict[str, list[str]] = defaultdict(list)
        for swap in outcome.swaps or []:
            _explain_swap(swap, moves)
        for rank, entry in enumerate(outcome.queue, start=1):
            self.stdout.write(_summary(rank, entry))
            if options["explain"]:
                self.stdout.write(f"      rough score: {_score_terms(entry)}")
                self.stdout.write(f"      after the rough sort: #{entry.rough_position + 1}")
                for line in moves[entry.uid] or ["not moved by the RR or SSVIP adjustment"]:
                    self.stdout.write(f"      {line}")


def _summary(rank: int, entry: RankedEntry) -> str:
    c = entry.customer
    be_jump = f"{c.be_jump}" if c.be_jump == entry.be_jump else f"{c.be_jump}->{entry.be_jump}"
    return (
        f"#{rank:<5} uid={entry.uid}  rough_sort_score={entry.rough_sort_score!r}  "
        f"rr={entry.rr}  user_group={entry.user_group}  ssvip={'yes' if c.is_ssvip else 'no'}  "
        f"be_jump={be_jump}"
    )


def _score_terms(entry: RankedEntry) -> str:
    c = entry.customer
    if c.not_confirm_num >= NOT_CONFIRM_LIMIT:
        return f"0 (not_confirm_num {c.not_confirm_num} >= {NOT_CONFIRM_LIMIT})"
    terms = [f"already_wait_time {c.already_wait_time!r}/3600 = {c.already_wait_time / 3600!r}"]
    terms.append(f"is_online {'+0.3' if c.is_online == 1 else '+0'}")
    terms.append(f"is_complaint {'+0.3' if c.is_complaint == 1 else '+0'}")
    terms.append(f"confirm_num {c.confirm_num}*0.1 = {c.confirm_num * 0.1!r}")
    return f"{entry.rough_sort_score!r} = " + ", ".join(terms)


def _explain_swap(swap: Swap, moves: dict[str, list[str]]) -> None:
    ahead, behind = swap.ahead, swap.behind
    if swap.step == "rr":
        listed = "new in" if swap.jump_counted else "already in"
        change = "->" if swap.jump_counted else "stays"
        bookkeeping = (
            f"{listed} {behind.uid}'s jump list, its be_jump {change} {swap.behind_be_jump}"
        )
        moves[ahead.uid].append(
            f"RR adjustment pass i={swap.pass_no}: jumped ahead of {behind.uid} "
            f"(rr {ahead.rr} over rr {behind.rr}; {bookkeeping})"
        )
        moves[behind.uid].append(
            f"RR adjustment pass i={swap.pass_no}: {ahead.uid} (rr {ahead.rr}) jumped ahead "
            f"(rr {behind.rr}; {bookkeeping})"
        )
    else:
        moves[ahead.uid].append(
            f"SSVIP adjustment pass i={swap.pass_no}: moved ahead of {behind.uid} "
            f"(SSVIP, user_group {ahead.user_group} >= {behind.user_group})"
        )
        moves[behind.uid].append(
            f"SSVIP adjustment pass i={swap.pass_no}: SSVIP {ahead.uid} moved ahead "
            f"(user_group {ahead.user_group} >= {behind.user_group})"
        )
