"""Demo data for `make run`: idempotent, safe to run on every start."""

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.management.base import BaseCommand
from django.db import transaction

from handler_groups.models import HandlerGroup
from handler_groups.services import handler_group_save

PASSWORD = "demo12345"

USERS = [
    # username, is_staff, is_superuser
    ("admin", True, True),
    ("approver", False, False),
    ("lead_it", False, False),
    ("lead_hr", False, False),
    ("it_alice", False, False),
    ("it_bob", False, False),
    ("it_carol", False, False),
    ("hr_dave", False, False),
    ("hr_erin", False, False),
    ("applicant1", False, False),
    ("applicant2", False, False),
]


class Command(BaseCommand):
    help = "Create demo users, handler groups, SLA rules and templates (idempotent)."

    def add_arguments(self, parser):
        parser.add_argument(
            "--history-days",
            type=int,
            default=0,
            help="Also generate this many days of past tickets, presence and SLA results for "
            "the demo groups, and tickets in every console state now — only when the demo "
            "groups have no tickets yet (a second run adds nothing). 0: none (default).",
        )
        parser.add_argument(
            "--seed", type=int, default=None, help="Random seed of the history (default fixed)."
        )

    @transaction.atomic
    def handle(self, *args, **options):
        User = get_user_model()
        users = {}
        for username, is_staff, is_superuser in USERS:
            user, created = User.objects.get_or_create(
                username=username,
                defaults={
                    "email": f"{username}@example.test",
                    "is_staff": is_staff,
                    "is_superuser": is_superuser,
                },
            )
            if created:
                user.set_password(PASSWORD)
                user.save(update_fields=["password"])
            users[username] = user
        users["approver"].user_permissions.add(Permission.objects.get(codename="approve_ticket"))

        groups = [
            ("IT support", "lead_it", ["it_alice", "it_bob", "it_carol"], 1),
            ("HR services", "lead_hr", ["hr_dave", "hr_erin"], 2),
        ]
        for name, leader, members, strategy in groups:
            if not HandlerGroup.objects.filter(name=name).exists():
                handler_group_save(
                    name=name,
                    leader_id=users[leader].pk,
                    member_ids=[users[m].pk for m in members],
                    assign_strategy=strategy,
                    status=1,
                )

        for seeder in self.extra_seeders():
            seeder(users=users)

        if options.get("history_days"):
            self.seed_history(users, options["history_days"], options.get("seed"))

        self.stdout.write(f"Demo logins (password for all: {PASSWORD}):")
        roles = {
            "admin": "superuser (admin site, everything)",
            "approver": "approves/rejects tickets",
            "lead_it": "leader of IT support (round robin)",
            "lead_hr": "leader of HR services (least load)",
            "it_alice": "IT support handler",
            "it_bob": "IT support handler",
            "it_carol": "IT support handler",
            "hr_dave": "HR services handler",
            "hr_erin": "HR services handler",
            "applicant1": "applicant",
            "applicant2": "applicant",
        }
        for username, role in roles.items():
            self.stdout.write(f"  {username:<11} {role}")

    def seed_history(self, users, days: int, seed: int | None) -> None:
        from django.utils import timezone

        from demo import history as demo_history

        groups = list(HandlerGroup.objects.filter(name__in=demo_history.GROUPS))
        if demo_history.history_present(groups):
            self.stdout.write("Demo history: the demo groups have tickets already; none added.")
            return
        self.stdout.write(f"Demo history: generating {days} days …")
        summary = demo_history.generate(
            days=days,
            users=users,
            seed=demo_history.DEFAULT_SEED if seed is None else seed,
            now=timezone.now(),
            progress=lambda line: self.stdout.write(f"  {line}"),
        )
        states = ", ".join(f"{n} {state}" for state, n in sorted(summary.states.items()))
        agents = ", ".join(f"{name} {n}" for name, n in sorted(summary.per_agent.items()))
        self.stdout.write(
            f"Demo history: {summary.tickets} tickets ({states}); "
            f"{summary.assignments} assignments ({agents}); {summary.records} records; "
            f"{summary.sla_events} SLA events; {summary.outcomes} outcomes "
            f"({summary.response_breaches} response and {summary.resolve_breaches} resolve "
            f"breaches); {summary.spans} presence spans; {summary.seconds:.1f}s"
        )

    def extra_seeders(self):
        """Other apps' demo data (SLA rules, templates) hook in here."""
        return []
