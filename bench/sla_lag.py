"""How late escalation levels fire with the real worker and beat of a running `make run` (or
any deployment): tickets are approved here, in the deployment's database, with a rule whose
levels fall due seconds later; the deployment's own processes fire them; the lag of each is
fired_at - due_at.

    DATABASE_URL=<the running deployment's> .venv/bin/python bench/sla_lag.py [--tickets 50]

It adds a rule (category "lag-bench", removed at the end with its tickets) and needs nothing
else from the deployment than its database.
"""

import argparse
import os
import sys
import time
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import percentile  # noqa: E402

CATEGORY = "lag-bench"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tickets", type=int, default=50)
    parser.add_argument("--spacing", type=float, default=0.5, help="seconds between tickets")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    import django

    django.setup()
    from django.contrib.auth.models import Permission, User

    from handler_groups.models import HandlerGroup
    from sla import ladder
    from sla.models import SlaEvent, SlaRule
    from sla.rules import set_levels
    from ticketing.models import Category, Ticket
    from workflow import services

    applicant, _ = User.objects.get_or_create(username="lag_bench_applicant")
    approver, _ = User.objects.get_or_create(username="lag_bench_approver")
    approver.user_permissions.add(Permission.objects.get(codename="approve_ticket"))
    agent, _ = User.objects.get_or_create(username="lag_bench_agent")
    group, _ = HandlerGroup.objects.get_or_create(
        name="lag bench", defaults={"member_user_ids": str(agent.pk), "leader": approver}
    )
    Category.objects.get_or_create(name=CATEGORY)  # (categories are rows)
    rule = SlaRule.objects.create(
        name="lag bench", category=CATEGORY, response_hours=Decimal("0.05"), sort=-1
    )  # response in 3 minutes: levels at 5 %, 10 % and 20 % = 9 s, 18 s and 36 s
    set_levels(
        rule,
        [
            ladder.Level(n, "response", ladder.PERCENT_ELAPSED, Decimal(p), ("leader",))
            for n, p in ((1, 5), (2, 10), (3, 20))
        ],
    )
    ids = []
    try:
        print(f"approving {args.tickets} tickets, one every {args.spacing} s", flush=True)
        for n in range(args.tickets):
            ticket = services.ticket_submit(
                creator=applicant,
                title=f"lag {n}",
                content="c",
                priority=2,
                category=CATEGORY,
                handler_group_id=group.pk,
            )
            services.ticket_approve(ticket_id=ticket.pk, approver=approver)
            ids.append(ticket.pk)
            time.sleep(args.spacing)
        expected = 3 * len(ids)
        deadline = time.monotonic() + 120
        while True:
            fired = SlaEvent.objects.filter(ticket_id__in=ids, state="fired").count()
            print(f"  fired {fired}/{expected}", flush=True)
            if fired == expected or time.monotonic() > deadline:
                break
            time.sleep(5)
        rows = SlaEvent.objects.filter(ticket_id__in=ids, state="fired").values_list(
            "due_at", "fired_at"
        )
        lags = [(fired_at - due).total_seconds() for due, fired_at in rows]
        print(
            f"{len(lags)} levels fired by the deployment's worker and beat: lag p50 "
            f"{percentile(lags, 50):.2f} s, p95 {percentile(lags, 95):.2f} s, "
            f"max {max(lags):.2f} s, min {min(lags):.2f} s"
        )
    finally:
        Ticket.objects.filter(pk__in=ids).delete()
        rule.delete()


if __name__ == "__main__":
    main()
