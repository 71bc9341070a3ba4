from django.core.management.base import BaseCommand

from config.management import add_now_argument, parse_now
from sla.scanner import sla_scan


class Command(BaseCommand):
    help = "Warn before SLA deadlines and mark timeouts (the same logic as the beat task)."

    def add_arguments(self, parser):
        add_now_argument(parser)

    def handle(self, *args, now=None, **options):
        result = sla_scan(now=parse_now(now))
        for name, count in result.counts.items():
            self.stdout.write(f"{name}: {count}")
