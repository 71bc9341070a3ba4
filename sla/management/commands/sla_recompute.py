from django.core.management.base import BaseCommand

from sla.services import sla_recompute


class Command(BaseCommand):
    help = "Recompute SLA deadlines of open tickets after a rule or calendar change."

    def add_arguments(self, parser):
        parser.add_argument(
            "--dry-run", action="store_true", help="Count the effect, write nothing."
        )

    def handle(self, *args, dry_run=False, **options):
        result = sla_recompute(dry_run=dry_run)
        prefix = "would move" if dry_run else "moved"
        self.stdout.write(
            f"examined {result.examined} open tickets; {prefix} {result.moved}; "
            f"newly breaching: {result.newly_breached}"
        )
