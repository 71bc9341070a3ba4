from django.core.management.base import BaseCommand, CommandError

from config.management import add_now_argument, parse_now
from routing import loads


class Command(BaseCommand):
    help = (
        "Compare the handlers' load rows (what routing reads as each member's held, offered "
        "and assigned-today tickets) with the tickets themselves; --rebuild recounts them from "
        "the tickets, while ticket writes wait."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--rebuild", action="store_true", help="Recount every load row from the tickets."
        )
        add_now_argument(parser)

    def handle(self, *args, rebuild=False, now=None, **options):
        now = parse_now(now)
        if rebuild:
            written = loads.rebuild(now=now)
            self.stdout.write(f"rebuilt: {written} load rows from the tickets")
        wrong = loads.mismatches(now=now)
        for user_id, group_id, summed, counted in wrong:
            self.stdout.write(
                f"user {user_id} group {group_id}: load rows say (held, offered, assigned "
                f"today) {summed}, the tickets {counted}"
            )
        if wrong:
            raise CommandError(
                f"{len(wrong)} handler/group figures differ from the tickets: run with --rebuild"
            )
        self.stdout.write("load rows match the tickets")
