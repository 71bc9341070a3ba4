"""The ticket state machine: every status change in the project is one of these transitions.

A transition names the statuses it may start from and the status it leads to. Services apply
it with a compare-and-set UPDATE (`WHERE <status> IN from_statuses`), so a transition that
lost a race changes nothing and is reported as a conflict."""

from dataclasses import dataclass

from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from config.errors import ConflictError

from .models import ProcessStatus, TicketStatus


@dataclass(frozen=True)
class Transition:
    name: str
    field: str  # "process_status" or "ticket_status"
    sources: tuple[int, ...]
    target: int
    # Other status the ticket must be in (e.g. the handling transitions need an approved ticket).
    requires_approved: bool = True


APPROVE = Transition(
    "approve", "process_status", (ProcessStatus.APPROVING,), ProcessStatus.APPROVED, False
)
REJECT = Transition(
    "reject", "process_status", (ProcessStatus.APPROVING,), ProcessStatus.REJECTED, False
)
CANCEL = Transition(
    "cancel", "process_status", (ProcessStatus.APPROVING,), ProcessStatus.CANCELLED, False
)
# After approval the ticket enters the pool, and may be assigned straight away.
ENTER_POOL = Transition(
    "enter_pool", "ticket_status", (TicketStatus.SUBMITTED,), TicketStatus.PENDING_ASSIGN
)
ASSIGN = Transition(
    "assign",
    "ticket_status",
    (TicketStatus.SUBMITTED, TicketStatus.PENDING_ASSIGN),
    TicketStatus.PENDING_PROCESS,
)
# An offered ticket taken back from a handler who did not accept it in time.
RECLAIM = Transition(
    "reclaim", "ticket_status", (TicketStatus.PENDING_PROCESS,), TicketStatus.PENDING_ASSIGN
)
# An offered or auto-assigned ticket its handler turns down before accepting it: back to the
# pool, routed again without them.
DECLINE = Transition(
    "decline", "ticket_status", (TicketStatus.PENDING_PROCESS,), TicketStatus.PENDING_ASSIGN
)
# A ticket nobody in its group could take moves to the group's overflow group's pool.
OVERFLOW = Transition(
    "overflow", "ticket_status", (TicketStatus.PENDING_ASSIGN,), TicketStatus.PENDING_ASSIGN
)
ACCEPT = Transition(
    "accept",
    "ticket_status",
    (TicketStatus.PENDING_ASSIGN, TicketStatus.PENDING_PROCESS),
    TicketStatus.PROCESSING,
)
COMPLETE = Transition(
    "complete", "ticket_status", (TicketStatus.PROCESSING,), TicketStatus.COMPLETED
)
CLOSE = Transition(
    "close",
    "ticket_status",
    (
        TicketStatus.PENDING_ASSIGN,
        TicketStatus.PENDING_PROCESS,
        TicketStatus.PROCESSING,
        TicketStatus.COMPLETED,
    ),
    TicketStatus.CLOSED,
)
# A completed ticket its applicant (within settings.REOPEN_DAYS) or its team takes up again: a
# reply by mail on it, or the Reopen action. The same handler works on it; the resolve clock
# runs on from where it stopped (sla.services.sla_reopen). A closed ticket is never reopened.
REOPEN = Transition("reopen", "ticket_status", (TicketStatus.COMPLETED,), TicketStatus.PROCESSING)
# A duplicate merged into another ticket (collaboration.services.merging): closed, with
# `merged_into` set, from wherever a close may start.
MERGE = Transition(
    "merge",
    "ticket_status",
    (
        TicketStatus.PENDING_ASSIGN,
        TicketStatus.PENDING_PROCESS,
        TicketStatus.PROCESSING,
        TicketStatus.COMPLETED,
    ),
    TicketStatus.CLOSED,
)
# Transfer keeps the ticket open; to a person it becomes pending process, to a group it goes
# back to the pool (and may be assigned again by the new group's strategy).
TRANSFER_TO_HANDLER = Transition(
    "transfer",
    "ticket_status",
    (TicketStatus.PENDING_ASSIGN, TicketStatus.PENDING_PROCESS, TicketStatus.PROCESSING),
    TicketStatus.PENDING_PROCESS,
)
TRANSFER_TO_GROUP = Transition(
    "transfer",
    "ticket_status",
    (TicketStatus.PENDING_ASSIGN, TicketStatus.PENDING_PROCESS, TicketStatus.PROCESSING),
    TicketStatus.PENDING_ASSIGN,
)


# The words an error message uses for each transition and status field.
TRANSITION_WORDS = {
    "approve": _("approve"),
    "reject": _("reject"),
    "cancel": _("cancel"),
    "enter_pool": _("put in the pool"),
    "assign": _("assign"),
    "reclaim": _("reclaim"),
    "decline": _("decline"),
    "overflow": _("overflow"),
    "accept": _("accept"),
    "complete": _("complete"),
    "close": _("close"),
    "reopen": _("reopen"),
    "transfer": _("transfer"),
    "merge": _("merge"),
    "pause": _("pause"),
    "resume": _("resume"),
}
FIELD_WORDS = {"process_status": _("process status"), "ticket_status": _("ticket status")}


class IllegalTransition(ConflictError):
    def __init__(self, transition: Transition, current: int | None):
        self.transition = transition
        self.current = current
        enum = ProcessStatus if transition.field == "process_status" else TicketStatus
        field = FIELD_WORDS.get(transition.field, transition.field.replace("_", " "))
        if current is None:
            state = gettext("in a state that does not allow it")
        else:
            try:
                state = gettext("%(field)s is '%(status)s'") % {
                    "field": field,
                    "status": enum(current).label,
                }
            except ValueError:
                state = gettext("%(field)s is %(status)s") % {
                    "field": transition.field,
                    "status": current,
                }
        allowed = ", ".join(f"'{enum(s).label}'" for s in transition.sources)
        super().__init__(
            gettext("Cannot %(action)s this ticket: its %(state)s; allowed only from %(allowed)s.")
            % {
                "action": TRANSITION_WORDS.get(transition.name, transition.name),
                "state": state,
                "allowed": allowed,
            }
        )

    def with_message(self, message: str) -> "IllegalTransition":
        self.args = (message,)
        return self


# Which actions a ticket's state allows now, whoever asks (access.py adds who may).
ACTIONS = (
    "approve",
    "reject",
    "cancel",
    "accept",
    "decline",
    "reply",
    "pause",
    "resume",
    "complete",
    "reopen",
    "transfer",
    "close",
)
_OPEN = (TicketStatus.PENDING_ASSIGN, TicketStatus.PENDING_PROCESS, TicketStatus.PROCESSING)


def actions_allowed_now(ticket) -> frozenset[str]:
    """The actions the ticket's current state allows (each service still re-checks with its
    compare-and-set): derived from the transitions above, the SLA pause flag and whether the
    conversation is over."""
    allowed = set()
    if ticket.process_status == ProcessStatus.APPROVING:
        allowed |= {"approve", "reject", "cancel"}
    approved = ticket.process_status == ProcessStatus.APPROVED
    if approved:
        for name, transition in (
            ("accept", ACCEPT),
            ("complete", COMPLETE),
            # (completed, so neither closed nor merged: both leave the ticket closed)
            ("reopen", REOPEN),
            ("close", CLOSE),
            ("transfer", TRANSFER_TO_GROUP),
        ):
            if ticket.ticket_status in transition.sources:
                allowed.add(name)
        if ticket.ticket_status in _OPEN:
            allowed.add("resume" if ticket.sla_paused else "pause")
        if ticket.ticket_status in DECLINE.sources and ticket.accepted_time is None:
            allowed.add("decline")
    conversation_over = ticket.ticket_status == TicketStatus.CLOSED or ticket.process_status in (
        ProcessStatus.REJECTED,
        ProcessStatus.CANCELLED,
    )
    if not conversation_over:
        allowed.add("reply")
    return frozenset(allowed)
