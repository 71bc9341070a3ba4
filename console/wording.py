"""The applicant's words for where their ticket stands, on their ticket page and in their list."""

from django.utils.translation import gettext as _

from ticketing.models import ProcessStatus, Ticket, TicketStatus


def customer_status(ticket: Ticket) -> str:
    if ticket.process_status == ProcessStatus.APPROVING:
        return _("Waiting for approval")
    if ticket.process_status == ProcessStatus.REJECTED:
        return _("Rejected")
    if ticket.process_status == ProcessStatus.CANCELLED:
        return _("Cancelled")
    if ticket.ticket_status == TicketStatus.COMPLETED:
        return _("Resolved")
    if ticket.ticket_status == TicketStatus.CLOSED:
        return _("Closed")
    if ticket.sla_paused:
        return _("Waiting for your reply")
    return _("We're on it")
