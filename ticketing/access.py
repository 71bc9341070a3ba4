"""Who may see and do what with a ticket: the one home of these rules, used by the API and the
console alike.

- Visibility: `visible_tickets` filters every list; a ticket outside it is a 404 for that user
  on every endpoint and page. A visible ticket whose action the user may not take is a 403.
- Handlers are users in at least one handler group (member or leader) or with the explicit
  permission `ticketing.handle_tickets`; staff count as handlers. Only handlers see the pool of
  approved tickets that have no group. Everybody else sees their own tickets and the ones
  they watch (collaboration.models.Watcher: copied in, or added by the team), and nothing more.
- Audience: staff-side viewers of a ticket (staff, its handler, its group's members and leader,
  any handler for a no-group ticket) see everything about it; everyone else who may see it
  (its applicant, its watchers, approvers) sees its public story only: no internal notes, no routing
  internals, no SLA rule (`Audience.sees_internals`).
- Reopening a completed ticket: its team at any time, its applicant within REOPEN_DAYS of the
  completion (`can_reopen`); after that the applicant opens a new ticket. Writing on a ticket
  by mail (`mail_reply`): its applicant, its watchers and its team."""

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from collaboration.models import Watcher
from config.errors import Forbidden
from handler_groups.selectors import group_ids_for_user, is_member, supervises

from .lifecycle import ACTIONS, actions_allowed_now
from .models import ProcessStatus, Ticket, TicketStatus

HANDLE_PERMISSION = "ticketing.handle_tickets"


def is_approver(user) -> bool:
    return user.is_authenticated and (user.is_staff or user.has_perm("ticketing.approve_ticket"))


@dataclass
class Audience:
    """What one user is (one query, plus the permission lookup), computed once per request so
    that lists can decide per ticket without a query per row."""

    user_id: int | None
    is_staff: bool
    group_ids: frozenset[int] = field(default_factory=frozenset)
    handles_ungrouped: bool = False

    @property
    def is_handler(self) -> bool:
        return self.is_staff or self.handles_ungrouped

    def sees_internals(self, ticket: Ticket) -> bool:
        """Staff-side viewer of this ticket (internal notes, routing, SLA rule)."""
        if self.user_id is None:
            return False
        if self.is_staff or ticket.handler_id == self.user_id:
            return True
        if ticket.handler_group_id is None:
            return self.handles_ungrouped
        return ticket.handler_group_id in self.group_ids


def audience_for(user) -> Audience:
    if not user.is_authenticated:
        return Audience(user_id=None, is_staff=False)
    group_ids = frozenset(group_ids_for_user(user))
    return Audience(
        user_id=user.pk,
        is_staff=user.is_staff,
        group_ids=group_ids,
        handles_ungrouped=user.is_staff or bool(group_ids) or user.has_perm(HANDLE_PERMISSION),
    )


def is_handler(user) -> bool:
    """In at least one handler group (member or leader), or allowed to handle tickets."""
    return audience_for(user).is_handler


def pool_scope(user) -> Q:
    """Approved tickets the user works on: their groups' (as member or leader), and those with
    no group if they are a handler. Staff get every approved ticket; a user who is no handler
    gets none (their own tickets reach them through `visible_tickets`)."""
    approved = Q(process_status=ProcessStatus.APPROVED)
    audience = audience_for(user)
    if audience.is_staff:
        return approved
    scope = Q(handler_group_id__in=audience.group_ids)
    if audience.handles_ungrouped:
        scope |= Q(handler_group__isnull=True)
    return approved & scope


def visible_tickets(user) -> QuerySet[Ticket]:
    """Their own tickets, the ones they handle or watch, and their pool; approvers and staff
    see all."""
    qs = Ticket.objects.all()
    if not user.is_authenticated:
        return qs.none()
    return qs.filter(visible_scope(user))


def visible_scope(user) -> Q:
    """`visible_tickets` as a condition on the ticket, for statements that join it (search):
    Q() for approvers and staff, a condition no ticket meets for an anonymous user."""
    if not user.is_authenticated:
        return Q(pk__in=[])
    if user.is_staff or is_approver(user):
        return Q()
    scope = Q(creator=user) | Q(handler=user) | pool_scope(user)
    watched = watched_ticket_ids(user)
    return scope | Q(pk__in=watched) if watched else scope


def watched_ticket_ids(user) -> list[int]:
    """The tickets a person watches, read first (watcher_user_idx) and given to the ticket
    statement as a list of ids: inside the OR of `visible_scope` a list keeps each branch an
    index scan of its own, where a subquery would be a filter over every ticket."""
    return list(Watcher.objects.filter(user=user).values_list("ticket_id", flat=True))


def internals_scope(audience: Audience) -> Q:
    """The tickets whose internals (notes, their files) this audience sees, as a condition on
    the ticket: `Audience.sees_internals` for a statement over many tickets."""
    if audience.user_id is None:
        return Q(pk__in=[])
    if audience.is_staff:
        return Q()
    scope = Q(handler_id=audience.user_id) | Q(handler_group_id__in=audience.group_ids)
    if audience.handles_ungrouped:
        scope |= Q(handler_group__isnull=True)
    return scope


def can_handle(user, ticket: Ticket, audience: Audience | None = None) -> bool:
    """May take the ticket from the pool: a member of its group, or any handler when it has
    none, or the handler it is assigned to. Pass the caller's `audience` when deciding for
    many tickets (one query, not one per ticket)."""
    if ticket.handler_id == user.pk:
        return True
    if ticket.handler_group is None:  # (no group: no query)
        return (audience or audience_for(user)).is_handler
    return is_member(user, ticket.handler_group)


def can_work_on(user, ticket: Ticket, audience: Audience | None = None) -> bool:
    """May write internal replies and see internal content: staff, the handler, members and
    the leader of the ticket's group (any handler for a ticket with no group)."""
    return (audience or audience_for(user)).sees_internals(ticket)


def can_pause(user, ticket: Ticket) -> bool:
    """May stop or restart the ticket's resolve clock: its handler, its group's leader, staff.
    Other members of the group may not decide it for a colleague."""
    return ticket.handler_id == user.pk or supervises(user, ticket.handler_group)


def can_transfer(user, ticket: Ticket) -> bool:
    return supervises(user, ticket.handler_group)


def can_close(user, ticket: Ticket) -> bool:
    return user.is_staff or ticket.creator_id == user.pk


def reopen_window_open(ticket: Ticket, now: datetime | None = None) -> bool:
    """Within settings.REOPEN_DAYS of the ticket's completion (a ticket not completed has no
    window to miss: whether it may be reopened at all is its state's business, a 409)."""
    if ticket.completed_time is None:
        return True
    window = timedelta(days=settings.REOPEN_DAYS)
    return (now or timezone.now()) <= ticket.completed_time + window


def can_reopen(
    user, ticket: Ticket, audience: Audience | None = None, *, now: datetime | None = None
) -> bool:
    """Its team (whoever works on it) at any time; its applicant within the reopen window.
    `now`: the instant to judge the window at (the mail intake's), else the present."""
    if can_work_on(user, ticket, audience):
        return True
    return ticket.creator_id == user.pk and reopen_window_open(ticket, now)


def can_write_by_mail(user, ticket: Ticket, audience: Audience | None = None) -> bool:
    """May add a public reply to the ticket by e-mail: its applicant, a watcher of it (copied
    in, or added by the team) or its team. Anyone else's message starts a ticket of their
    own (mail.services.intake)."""
    if ticket.creator_id == user.pk or can_work_on(user, ticket, audience):
        return True
    return Watcher.objects.filter(ticket_id=ticket.pk, user_id=user.pk).exists()


def can_accept(user, ticket: Ticket, audience: Audience | None = None) -> bool:
    """A pool ticket: whoever may handle it; an assigned one: only its handler."""
    if ticket.ticket_status == TicketStatus.PENDING_PROCESS:
        return ticket.handler_id == user.pk
    return can_handle(user, ticket, audience)


# Who may take each action on a ticket they can see (the state is lifecycle's business).
# Each rule takes (user, ticket, audience); the audience may be None (computed when needed).
# action -> (user, ticket, audience) -> may they
_RULES: dict[str, Callable[[Any, Ticket, "Audience | None"], bool]] = {
    "approve": lambda user, ticket, audience: is_approver(user),
    "reject": lambda user, ticket, audience: is_approver(user),
    "cancel": lambda user, ticket, audience: ticket.creator_id == user.pk,
    # Whoever may handle it; that it is assigned to someone else is a state conflict (409).
    "accept": can_handle,
    # Likewise: that the offer is someone else's (or accepted, or in the pool) is a 409.
    "decline": can_handle,
    "reply": lambda user, ticket, audience: (
        ticket.creator_id == user.pk or can_work_on(user, ticket, audience)
    ),
    "internal_reply": can_work_on,
    "pause": lambda user, ticket, audience: can_pause(user, ticket),
    "resume": lambda user, ticket, audience: can_pause(user, ticket),
    "complete": lambda user, ticket, audience: ticket.handler_id == user.pk,
    "transfer": lambda user, ticket, audience: can_transfer(user, ticket),
    "close": lambda user, ticket, audience: can_close(user, ticket),
    "reopen": can_reopen,
    "mail_reply": can_write_by_mail,
    # Satisfaction: the survey asks the applicant; the team reads the answer too.
    "rate": lambda user, ticket, audience: ticket.creator_id == user.pk,
    "read_rating": lambda user, ticket, audience: (
        ticket.creator_id == user.pk or can_work_on(user, ticket, audience)
    ),
    # The toolbox: the team reads and changes tags, custom fields and the priority.
    "tag": can_work_on,
    "edit_fields": can_work_on,
    "set_priority": can_work_on,
}

DENIED = {
    "approve": _("Only approvers may approve tickets."),
    "reject": _("Only approvers may reject tickets."),
    "cancel": _("Only the applicant may cancel a ticket awaiting approval."),
    "accept": _("Only members of the ticket's handler group may accept it."),
    "decline": _("Only members of the ticket's handler group may decline it."),
    "reply": _("Only the applicant and the handlers may reply."),
    "internal_reply": _("Only handlers may write internal replies."),
    "pause": _("Only the ticket's handler, its group's leader or staff may pause its clock."),
    "resume": _("Only the ticket's handler, its group's leader or staff may resume its clock."),
    "complete": _("Only the ticket's handler may complete it."),
    "transfer": _("Only the group leader or staff may transfer a ticket."),
    "close": _("Only the applicant or staff may close a ticket."),
    "reopen": _(
        "Only the ticket's team may reopen it now: its applicant may reopen it within "
        "%(days)s days of its completion, and may open a new ticket after that."
    ),
    "mail_reply": _("Only the applicant, the watchers and the team may write on this ticket."),
    "rate": _("Only the ticket's applicant may rate the help."),
    "read_rating": _("Only the applicant and the team read the rating."),
    "tag": _("Only the ticket's team may tag it."),
    "edit_fields": _("Only the ticket's team may change its fields."),
    "set_priority": _("Only the ticket's team may change its priority."),
}


def may(action: str, user, ticket: Ticket, audience: Audience | None = None) -> bool:
    return _RULES[action](user, ticket, audience)


def denied(action: str) -> str:
    """The refusal's words (DENIED), with the setting a rule names filled in."""
    message = str(DENIED[action])
    if action == "reopen":
        message = message % {"days": settings.REOPEN_DAYS}
    return message


def require(action: str, user, ticket: Ticket, audience: Audience | None = None) -> None:
    """Raise Forbidden (a 403, on the API and the pages alike) unless the user may take this
    action on this ticket; whether its state allows it is the service's to say (409)."""
    if not may(action, user, ticket, audience):
        raise Forbidden(denied(action))


def require_approver(user) -> None:
    """For the approvers' list (no ticket yet)."""
    if not is_approver(user):
        raise Forbidden(str(_("Only approvers have an approval queue.")))


def permitted_actions(user, ticket: Ticket, audience: Audience | None = None) -> dict[str, bool]:
    """What to offer this user on this ticket now: allowed by its state and by who they are.
    Pages listing many tickets pass the caller's `audience`, read once."""
    audience = audience or audience_for(user)
    now_allowed = actions_allowed_now(ticket)
    permitted = {
        action: action in now_allowed and may(action, user, ticket, audience) for action in ACTIONS
    }
    permitted["accept"] = permitted["accept"] and can_accept(user, ticket, audience)
    # Only the agent it is offered or assigned to (and has not accepted) may decline it.
    permitted["decline"] = permitted["decline"] and ticket.handler_id == user.pk
    return permitted
