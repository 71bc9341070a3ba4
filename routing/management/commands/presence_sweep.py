from django.core.management.base import BaseCommand

from config.management import add_now_argument, parse_now
from routing.presence import presence_sweep


class Command(BaseCommand):
    help = "Take agents without a heartbeat offline and end expired wrap-ups (the beat task)."

    def add_arguments(self, parser):
        add_now_argument(parser)

    def handle(self, *args, now=None, **options):
        for name, count in presence_sweep(now=parse_now(now)).items():
            self.stdout.write(f"{name}: {count}")
