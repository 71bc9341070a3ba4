from django.core.management.base import BaseCommand

from routing.reconcile import reconcile


class Command(BaseCommand):
    help = "Rebuild the Redis routing state (idle pools, states, offers) from PostgreSQL."

    def handle(self, *args, **options):
        self.stdout.write(f"reconciled {reconcile()} groups")
