import json
from datetime import date

from django.core.management.base import BaseCommand, CommandError

from handler_groups.models import HandlerGroup
from insight import scenarios, services
from insight.simulator import SIMULATED_STRATEGIES, SimulationError

COLUMNS = (
    ("strategy", "strategy_label", "{}"),
    ("wait p50 s", "wait_p50_seconds", "{:.1f}"),
    ("wait p95 s", "wait_p95_seconds", "{:.1f}"),
    ("breaches", "sla_response_breaches", "{}"),
    ("max queue", "max_queue_length", "{}"),
    ("count sd", "count_stddev", "{:.2f}"),
    ("occup. sd", "occupancy_stddev", "{:.3f}"),
    ("unassigned", "unassigned", "{}"),
)


def _strategies(raw: str) -> list[int]:
    try:
        codes = [int(part) for part in raw.split(",") if part.strip()]
    except ValueError:
        raise CommandError("--strategies: comma-separated codes, e.g. 1,2,3,4") from None
    bad = [c for c in codes if c not in SIMULATED_STRATEGIES]
    if bad or not codes or len(set(codes)) != len(codes):
        raise CommandError(f"--strategies: each of {list(SIMULATED_STRATEGIES)} at most once")
    return codes


def _date(raw: str | None, name: str) -> date:
    if not raw:
        raise CommandError(f"--{name} is required with --group")
    try:
        return date.fromisoformat(raw)
    except ValueError:
        raise CommandError(f"--{name}: a date, YYYY-MM-DD") from None


class Command(BaseCommand):
    help = (
        "Replay a group's recorded arrivals, handle times and presence windows (or a synthetic "
        "day) through each routing strategy's real code, and print per strategy: wait to "
        "assignment p50/p95, SLA response breaches, max queue length, per-agent count and "
        "occupancy standard deviations."
    )

    def add_arguments(self, parser):
        parser.add_argument("--group", help="The handler group's id or name.")
        parser.add_argument("--from", dest="date_from", help="First day, YYYY-MM-DD.")
        parser.add_argument("--to", dest="date_to", help="Last day (inclusive), YYYY-MM-DD.")
        parser.add_argument("--strategies", default="1,2,3,4")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--synthetic",
            nargs="?",
            const="",
            help="A synthetic day instead of a record: agents=4,calls=80,hours=8,aht=300,"
            "wrap_up=60,max_active=1,speeds=0.6:0.9:1.2:1.6,dist=lognormal,sigma=0.5,sla=60,"
            "warmup=0,daily_cap=N (all optional; the defaults are the call-centre seed's "
            "small store).",
        )
        parser.add_argument(
            "--response-budget", type=float, help="Seconds, for every ticket (recorded mode)."
        )
        parser.add_argument("--json", action="store_true", help="Print the whole report.")

    def handle(self, *args, **options):
        strategies = _strategies(options["strategies"])
        seed = options["seed"]

        def progress(code: int, routed: int) -> None:
            self.stderr.write(f"  strategy {code}: {routed} arrivals replayed")

        try:
            if options["synthetic"] is not None:
                if options["group"]:
                    raise CommandError("--synthetic or --group, not both")
                try:
                    params = scenarios.parse_synthetic(options["synthetic"])
                except scenarios.ParamsError as exc:
                    raise CommandError(f"--synthetic: {exc}") from None
                result = services.simulate_synthetic(
                    params=params, strategies=strategies, seed=seed, progress=progress
                )
            else:
                if not options["group"]:
                    raise CommandError("--group (with --from and --to) or --synthetic")
                group = self._group(options["group"])
                date_from = _date(options["date_from"], "from")
                date_to = _date(options["date_to"], "to")
                if date_to < date_from:
                    raise CommandError("--to must not be before --from")
                self.stderr.write(f"replaying {group.name} {date_from} – {date_to} …")
                result = services.simulate_recorded(
                    group=group,
                    date_from=date_from,
                    date_to=date_to,
                    strategies=strategies,
                    seed=seed,
                    response_budget_seconds=options["response_budget"],
                    progress=progress,
                )
        except SimulationError as exc:
            raise CommandError(str(exc)) from None
        if options["json"]:
            self.stdout.write(json.dumps(result, indent=2, ensure_ascii=False))
            return
        self._print(result)

    def _group(self, raw: str) -> HandlerGroup:
        group = None
        if raw.isdigit():
            group = HandlerGroup.objects.filter(pk=int(raw)).first()
        group = group or HandlerGroup.objects.filter(name=raw).first()
        if group is None:
            raise CommandError(f"no handler group {raw!r}")
        return group

    def _print(self, result: dict) -> None:
        out = self.stdout
        if result["mode"] == "synthetic":
            spec = ",".join(
                f"{k}={':'.join(f'{x:g}' for x in v) if isinstance(v, list) else v}"
                for k, v in result["synthetic"].items()
                if v is not None
            )
            out.write(f"synthetic day, seed {result['seed']}: {spec}")
        else:
            out.write(
                f"group {result['group']['name']}, {result['period']['from']} – "
                f"{result['period']['to']}: {result['arrivals']} arrivals, seed {result['seed']}"
            )
            out.write(f"presence: {result['presence_basis']['summary']}")
            basis = result["handle_time_basis"]
            out.write(
                f"handle times: {basis['recorded_tickets']} recorded, mean "
                f"{basis['mean_seconds']} s (from {basis['mean_from']}); response budget: "
                f"{result['response_budget']}"
            )
        rows = [[title for title, _, _ in COLUMNS]]
        for report in result["strategies"]:
            rows.append(
                ["-" if report[key] is None else fmt.format(report[key]) for _, key, fmt in COLUMNS]
            )
        widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
        for index, row in enumerate(rows):
            out.write(
                "  ".join(
                    cell.ljust(w) if i == 0 else cell.rjust(w)
                    for i, (cell, w) in enumerate(zip(row, widths, strict=True))
                )
            )
            if index == 0:
                out.write("  ".join("-" * w for w in widths))
        for report in result["strategies"]:
            counts = " ".join(f"{name} {n}" for name, n in report["counts"].items())
            out.write(f"{report['strategy_label']} counts: {counts}")
        claim = result.get("claim")
        if claim:
            med = claim["medians"]
            out.write(
                f"seed claim (round robin 6.2 → longest idle + wrap-up 1.8), medians over "
                f"{claim['runs']} days: round robin {med['round_robin_no_wrap_up']} "
                f"(with wrap-up {med['round_robin_wrap_up']}) → longest idle + wrap-up "
                f"{med['longest_idle_wrap_up']}: "
                + ("reduced" if claim["reduced"] else "not reduced")
            )
            out.write(claim["explanation"])
