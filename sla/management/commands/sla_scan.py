from datetime import datetime

from django.core.management.base import BaseCommand, CommandError

from sla.scanner import sla_scan


class Command(BaseCommand):
    help = "Warn before SLA deadlines and mark timeouts (the same logic as the beat task)."

    def add_arguments(self, parser):
        parser.add_argument("--now", help="Replay a moment, ISO-8601 with a timezone.")

    def handle(self, *args, now=None, **options):
        moment = None
        if now:
            try:
                moment = datetime.fromisoformat(now)
            except ValueError as exc:
                raise CommandError(f"--now: not an ISO-8601 date-time: {now!r}") from exc
            if moment.tzinfo is None:
                raise CommandError("--now: give a timezone, e.g. 2026-01-05T09:00:00+00:00")
        result = sla_scan(now=moment)
        for name, count in result.counts.items():
            self.stdout.write(f"{name}: {count}")
