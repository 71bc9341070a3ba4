"""Shared by management commands that replay a moment (`--now`)."""

from datetime import datetime

from django.core.management.base import CommandError
from django.utils import timezone


def add_now_argument(parser) -> None:
    parser.add_argument(
        "--now", help="Replay a moment, ISO-8601 (without an offset: the server's TIME_ZONE)."
    )


def parse_now(value) -> datetime | None:
    """None (meaning: now), a datetime, or an ISO-8601 string → an aware datetime."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        moment = value
    else:
        try:
            moment = datetime.fromisoformat(value)
        except ValueError as exc:
            raise CommandError(f"--now: not an ISO-8601 date-time: {value!r}") from exc
    return timezone.make_aware(moment) if timezone.is_naive(moment) else moment
