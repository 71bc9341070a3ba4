"""Merging duplicates: who may merge, and which tickets may be merged (the service re-checks
both under its row locks; the console's card asks them to decide what to offer)."""

from django.utils.translation import gettext as _

from handler_groups.selectors import supervises
from ticketing.models import ProcessStatus, Ticket, TicketStatus


def may_merge(user, ticket: Ticket) -> bool:
    """Whether `user` may merge this ticket, or merge another into it: its group's leader, or
    staff (supervises: staff whatever the group, a ticket with no group staff only). A merge
    needs it for both tickets."""
    return supervises(user, ticket.handler_group)


def source_refusal(ticket: Ticket) -> str | None:
    """Why this ticket cannot be merged into another (a 409's message), or None: it must be
    approved, and neither closed nor merged already. A completed ticket may be merged (its
    SLA outcome stays as it was finalised); one awaiting approval may not (approve it, or
    reject it as a duplicate)."""
    code = ticket.bill_code
    if ticket.merged_into_id is not None:
        return _("%(code)s was already merged into another ticket.") % {"code": code}
    if ticket.process_status == ProcessStatus.APPROVING:
        return _("%(code)s awaits approval: it can be merged once approved.") % {"code": code}
    if ticket.process_status in (ProcessStatus.REJECTED, ProcessStatus.CANCELLED):
        return _("%(code)s was rejected or cancelled: there is nothing to merge.") % {"code": code}
    if ticket.ticket_status == TicketStatus.CLOSED:
        return _("%(code)s is closed: a closed ticket is not merged.") % {"code": code}
    return None


def target_refusal(ticket: Ticket) -> str | None:
    """Why nothing can be merged into this ticket (a 409's message), or None: it must be
    approved, and neither closed nor merged itself (a completed ticket may take a
    duplicate: its applicant can still reply)."""
    code = ticket.bill_code
    if ticket.merged_into_id is not None:
        return _("Cannot merge into %(code)s: it was itself merged into another ticket.") % {
            "code": code
        }
    if ticket.process_status == ProcessStatus.APPROVING:
        return _("Cannot merge into %(code)s: it awaits approval.") % {"code": code}
    if ticket.process_status in (ProcessStatus.REJECTED, ProcessStatus.CANCELLED):
        return _("Cannot merge into %(code)s: it was rejected or cancelled.") % {"code": code}
    if ticket.ticket_status == TicketStatus.CLOSED:
        return _("Cannot merge into %(code)s: it is closed.") % {"code": code}
    return None
