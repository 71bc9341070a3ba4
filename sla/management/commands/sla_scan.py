from datetime import datetime

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from sla.scanner import sla_scan


class Command(BaseCommand):
    help = "Warn before SLA deadlines and mark timeouts (the same logic as the beat task)."

    def add_arguments(self, parser):
        parser.add_argument(
            "--now",
            help="Replay a moment, ISO-8601 (without an offset: the server's TIME_ZONE).",
        )

    def handle(self, *args, now=None, **options):
        moment = None
        if isinstance(now, datetime):
            moment = now
        elif now:
            try:
                moment = datetime.fromisoformat(now)
            except ValueError as exc:
                raise CommandError(f"--now: not an ISO-8601 date-time: {now!r}") from exc
        if moment is not None and timezone.is_naive(moment):
            moment = timezone.make_aware(moment)  # the server's TIME_ZONE
        result = sla_scan(now=moment)
        for name, count in result.counts.items():
            self.stdout.write(f"{name}: {count}")
