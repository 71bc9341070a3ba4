from django.core.management.base import BaseCommand

from config.management import add_now_argument, parse_now
from routing.sweeps import routing_sweep


class Command(BaseCommand):
    help = "Reclaim timed-out offers, overflow stuck tickets, drain waiting tickets (beat task)."

    def add_arguments(self, parser):
        add_now_argument(parser)

    def handle(self, *args, now=None, **options):
        for name, count in routing_sweep(now=parse_now(now)).items():
            self.stdout.write(f"{name}: {count}")
