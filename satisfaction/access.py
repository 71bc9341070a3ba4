"""Who may rate a ticket and read its rating (ticketing.access decides who sees the ticket
at all: an invisible ticket is a 404 before these are asked)."""

from django.utils.translation import gettext as _

from config.errors import Forbidden
from ticketing.access import Audience
from ticketing.models import Ticket


def may_rate(user, ticket: Ticket) -> bool:
    """The applicant only: the survey asks them."""
    return user.is_authenticated and ticket.creator_id == user.pk


def require_rater(user, ticket: Ticket) -> None:
    """Forbidden (403) for anyone but the ticket's applicant."""
    if not may_rate(user, ticket):
        raise Forbidden(_("Only the ticket's applicant may rate the help."))


def may_read_rating(user, ticket: Ticket, audience: Audience) -> bool:
    """The applicant (their own answer) and the team (`Audience.sees_internals`); not a
    watcher or an approver outside the team."""
    return may_rate(user, ticket) or audience.sees_internals(ticket)
