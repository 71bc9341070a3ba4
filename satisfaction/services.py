"""Asking and answering (being written)."""

from datetime import datetime

from ticketing.models import Ticket


def survey_ask(*, ticket: Ticket, now: datetime) -> None:
    """Ask the applicant of a just-completed ticket how it went, once (being written)."""
