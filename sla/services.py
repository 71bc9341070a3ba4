from datetime import datetime

from ticketing.models import Ticket


def sla_start_clocks(*, ticket: Ticket, now: datetime) -> list[str]:
    """Approval hook: set the ticket's SLA deadlines. Runs inside the approval transaction.
    Returns the names of the fields it changed (none until the SLA engine lands)."""
    return []
