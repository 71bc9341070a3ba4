"""The agent's web console: server-rendered pages over the same selectors and services as the
API. Views parse a form, check `access`, call one service and turn domain errors into a
message on the page (400 bad input, 403 not allowed, 404 not visible, 409 illegal state)."""

from collections.abc import Callable
from datetime import datetime

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from config.errors import ConflictError, Forbidden, InvalidArgument
from notifications.views import render_console, safe_next
from sla import services as sla_services
from sla.models import SlaOutcome
from sla.selectors import sla_badge

from . import access, selectors, services
from .forms import (
    POOL_VIEWS,
    PoolFilterForm,
    RejectForm,
    ReplyForm,
    TicketSubmitForm,
    TransferForm,
)
from .models import OPEN_STATUSES, ProcessStatus, ReplyType, Ticket, TicketStatus

PAGE_SIZE = 20

EMPTY_POOL = {
    "pending": "No tickets waiting — nice.",
    "my_handling": "You are not handling any tickets right now.",
    "all": "No tickets in your groups yet.",
}

LIST_RELATED = ("handler_group", "handler", "creator", "sla_rule")


# --- SLA badge -----------------------------------------------------------------------------


def duration_text(seconds: int) -> str:
    """A compact duration: "<1m", "45m", "2h 05m", "3d 4h"."""
    seconds = abs(int(seconds))
    minutes = seconds // 60
    if minutes < 1:
        return "<1m"
    if minutes < 60:
        return f"{minutes}m"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours}h {minutes:02d}m"
    days, hours = divmod(hours, 24)
    return f"{days}d {hours}h"


def badge_display(badge: dict) -> dict:
    """`sla.selectors.sla_badge` plus what the page shows: text, CSS class, tooltip."""
    state, left, clock = badge["state"], badge["seconds_left"], badge["clock"]
    if state == "none":
        text = "no SLA"
    elif state == "paused":
        text = "paused"
    elif state == "breached":
        text = f"overdue {duration_text(left)}" if left is not None and left < 0 else "breached"
    elif left is not None:
        text = f"{duration_text(left)} left"
    else:
        text = state
    if state == "paused":
        title = "Waiting on the applicant: the resolve clock is stopped."
    elif badge["deadline"] is not None:
        deadline = timezone.localtime(badge["deadline"])
        title = f"{clock} deadline {deadline:%Y-%m-%d %H:%M %Z}"
    else:
        title = "No SLA clock is running for this ticket."
    return {**badge, "text": text, "css": f"sla-{state}", "title": title}


def _with_badges(tickets, now: datetime) -> list[Ticket]:
    rows = list(tickets)
    for ticket in rows:
        ticket.sla = badge_display(sla_badge(ticket, now))
    return rows


# --- helpers -------------------------------------------------------------------------------


def _visible(request: HttpRequest, ticket_id: int) -> Ticket:
    """The ticket if the user may see it; 404 otherwise (never a hint that it exists)."""
    try:
        return selectors.ticket_for(request.user, ticket_id)
    except Ticket.DoesNotExist:
        raise Http404("No such ticket, or you may not see it.") from None


def _can_accept(user, ticket: Ticket) -> bool:
    """Whether to offer the Accept button (ticket_accept decides): a pool ticket the user may
    handle, or one assigned to them and not yet accepted."""
    if ticket.process_status != ProcessStatus.APPROVED:
        return False
    if ticket.ticket_status == TicketStatus.PENDING_ASSIGN:
        return access.can_handle(user, ticket)
    return ticket.ticket_status == TicketStatus.PENDING_PROCESS and ticket.handler_id == user.pk


def _detail_url(ticket_id: int) -> str:
    return reverse("console:ticket", args=[ticket_id])


ERROR_STATUS = ((InvalidArgument, 400), (Forbidden, 403), (ConflictError, 409))


def _error_status(exc: Exception) -> int:
    return next(code for kind, code in ERROR_STATUS if isinstance(exc, kind))


def _error_message(exc: Exception) -> str:
    if isinstance(exc, InvalidArgument):
        return exc.message
    return str(exc) or "This action is not allowed."


def _perform(
    request: HttpRequest,
    ticket: Ticket,
    *,
    allowed: bool,
    denied: str,
    call: Callable[[], object],
    success: str,
    redirect_to: str | None = None,
) -> HttpResponse:
    """Run one service for a POSTed action. Success: a message and a redirect (POST →
    redirect → GET). A domain error: the ticket page again, with the message and the
    error's status code; nothing was changed."""
    try:
        if not allowed:
            raise Forbidden(denied)
        call()
    except (ConflictError, Forbidden, InvalidArgument) as exc:
        return _action_failed(request, ticket.pk, exc)
    messages.success(request, success)
    return redirect(redirect_to or _detail_url(ticket.pk))


def _action_failed(
    request: HttpRequest, ticket_id: int, exc: Exception, forms: dict | None = None
) -> HttpResponse:
    messages.error(request, _error_message(exc))
    try:
        ticket = selectors.ticket_for(request.user, ticket_id)
    except Ticket.DoesNotExist:  # the action lost a race that also took the ticket away
        return redirect("console:pool")
    return _render_detail(request, ticket, status=_error_status(exc), forms=forms)


# --- the pool ------------------------------------------------------------------------------


@login_required
@require_GET
def pool(request: HttpRequest) -> HttpResponse:
    form = PoolFilterForm(request.GET, user=request.user)
    view = request.GET.get("view") or "pending"
    if view not in dict(POOL_VIEWS):
        view = "pending"
    status = 200
    if form.is_valid():
        arguments = form.pool_arguments()
        tickets = selectors.pool_for(request.user, **arguments).select_related(*LIST_RELATED)
        filtered = any(value is not None for key, value in arguments.items() if key != "view")
    else:
        messages.error(request, "Some filters are not valid; fix them to see tickets.")
        tickets, filtered, status = Ticket.objects.none(), True, 400
    page = Paginator(tickets, PAGE_SIZE).get_page(request.GET.get("page"))
    rows = _with_badges(page, timezone.now())
    for ticket in rows:
        ticket.can_accept = _can_accept(request.user, ticket)
    return render_console(
        request,
        "console/pool.html",
        {
            "form": form,
            "view": view,
            "views": POOL_VIEWS,
            "page": page,
            "tickets": rows,
            "filtered": filtered,
            "empty_message": ("No tickets match these filters." if filtered else EMPTY_POOL[view]),
        },
        status=status,
    )


# --- the ticket page -----------------------------------------------------------------------


def _record_rows(audience: access.Audience, ticket: Ticket) -> list[dict]:
    rows = []
    for record in selectors.records_for(audience, ticket):
        detail = dict(record.detail or {})
        field = detail.pop("field", "ticket_status")
        labels = ProcessStatus if field == "process_status" else TicketStatus

        def label(value, labels=labels):
            if value is None:
                return None
            try:
                return labels(value).label
            except ValueError:
                return str(value)

        rows.append(
            {
                "created": record.created,
                "actor": record.actor,
                "action": record.action.replace("_", " "),
                "from_label": label(record.from_status),
                "to_label": label(record.to_status),
                "detail": ", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in detail.items()),
            }
        )
    return rows


def _allowed_actions(user, ticket: Ticket) -> dict[str, bool]:
    """Which action forms to show; each service still decides."""
    insider = access.can_work_on(user, ticket)
    may_pause = access.can_pause(user, ticket)
    approved = ticket.process_status == ProcessStatus.APPROVED
    is_open = approved and ticket.ticket_status in OPEN_STATUSES
    reply_closed = ticket.ticket_status == TicketStatus.CLOSED or ticket.process_status in (
        ProcessStatus.REJECTED,
        ProcessStatus.CANCELLED,
    )
    return {
        "accept": _can_accept(user, ticket),
        "reply": not reply_closed and (insider or ticket.creator_id == user.pk),
        "pause": is_open and may_pause and not ticket.sla_paused,
        "resume": is_open and may_pause and ticket.sla_paused,
        "complete": (
            approved
            and ticket.ticket_status == TicketStatus.PROCESSING
            and ticket.handler_id == user.pk
        ),
        "transfer": is_open and access.can_transfer(user, ticket),
        "close": (
            approved
            and ticket.ticket_status in (*OPEN_STATUSES, TicketStatus.COMPLETED)
            and access.can_close(user, ticket)
        ),
        "approve": (ticket.process_status == ProcessStatus.APPROVING and access.is_approver(user)),
    }


def _render_detail(
    request: HttpRequest, ticket: Ticket, *, status: int = 200, forms: dict | None = None
) -> HttpResponse:
    user = request.user
    # Visibility was checked by the caller (ticket_for); load what the page shows in one go.
    ticket = Ticket.objects.select_related(*LIST_RELATED).get(pk=ticket.pk)
    audience = access.audience_for(user)
    insider = audience.sees_internals(ticket)
    replies = selectors.replies_for(audience, ticket)
    actions = _allowed_actions(user, ticket)
    forms = forms or {}
    context = {
        "ticket": ticket,
        "sla": badge_display(sla_badge(ticket, timezone.now())),
        "outcome": SlaOutcome.objects.filter(ticket=ticket).first(),
        "insider": insider,
        "replies": replies,
        "records": _record_rows(audience, ticket),
        "actions": actions,
        "reply_form": forms.get("reply") or ReplyForm(allow_internal=insider),
        "reject_form": forms.get("reject") or RejectForm(),
        "transfer_form": (
            forms.get("transfer") or (TransferForm() if actions["transfer"] else None)
        ),
        "any_action": any(actions.values()),
    }
    return render_console(request, "console/ticket_detail.html", context, status=status)


@login_required
@require_GET
def ticket_detail(request: HttpRequest, ticket_id: int) -> HttpResponse:
    return _render_detail(request, _visible(request, ticket_id))


# --- actions: each one POST form, one service ----------------------------------------------


@login_required
@require_POST
def ticket_accept(request: HttpRequest, ticket_id: int) -> HttpResponse:
    ticket = _visible(request, ticket_id)
    return _perform(
        request,
        ticket,
        allowed=access.can_handle(request.user, ticket),
        denied="Only members of the ticket's handler group may accept it.",
        call=lambda: services.ticket_accept(ticket_id=ticket.pk, handler=request.user),
        success=f"You accepted {ticket.bill_code}; it is now in My handling.",
        redirect_to=safe_next(request, _detail_url(ticket.pk)),
    )


@login_required
@require_POST
def ticket_reply(request: HttpRequest, ticket_id: int) -> HttpResponse:
    ticket = _visible(request, ticket_id)
    insider = access.can_work_on(request.user, ticket)
    form = ReplyForm(request.POST, allow_internal=insider)
    if not (insider or ticket.creator_id == request.user.pk):
        exc: Exception = Forbidden("Only the applicant and the handlers may reply.")
        return _action_failed(request, ticket.pk, exc)
    if not form.is_valid():
        exc = InvalidArgument("content", "The reply was not sent: see the errors below.")
        return _action_failed(request, ticket.pk, exc, forms={"reply": form})
    reply_type = form.cleaned_data["reply_type"]
    return _perform(
        request,
        ticket,
        allowed=True,
        denied="",
        call=lambda: services.ticket_reply(
            ticket_id=ticket.pk,
            author=request.user,
            reply_type=reply_type,
            content=form.cleaned_data["content"],
        ),
        success="Internal note added." if reply_type == ReplyType.INTERNAL else "Reply sent.",
        redirect_to=_detail_url(ticket.pk) + "#replies",
    )


@login_required
@require_POST
def ticket_pause(request: HttpRequest, ticket_id: int) -> HttpResponse:
    ticket = _visible(request, ticket_id)
    return _perform(
        request,
        ticket,
        allowed=access.can_pause(request.user, ticket),
        denied="Only the ticket's handler, its group's leader or staff may pause its clock.",
        call=lambda: sla_services.sla_pause(ticket_id=ticket.pk, user=request.user),
        success="Waiting on the applicant: the resolve clock is paused.",
    )


@login_required
@require_POST
def ticket_resume(request: HttpRequest, ticket_id: int) -> HttpResponse:
    ticket = _visible(request, ticket_id)
    return _perform(
        request,
        ticket,
        allowed=access.can_pause(request.user, ticket),
        denied="Only the ticket's handler, its group's leader or staff may resume its clock.",
        call=lambda: sla_services.sla_resume(ticket_id=ticket.pk, user=request.user),
        success="Resumed: the resolve clock is running again.",
    )


@login_required
@require_POST
def ticket_complete(request: HttpRequest, ticket_id: int) -> HttpResponse:
    ticket = _visible(request, ticket_id)
    return _perform(
        request,
        ticket,
        allowed=ticket.handler_id == request.user.pk,
        denied="Only the ticket's handler may complete it.",
        call=lambda: services.ticket_complete(ticket_id=ticket.pk, handler=request.user),
        success=f"{ticket.bill_code} is completed; the applicant has been told.",
    )


@login_required
@require_POST
def ticket_transfer(request: HttpRequest, ticket_id: int) -> HttpResponse:
    ticket = _visible(request, ticket_id)
    if not access.can_transfer(request.user, ticket):
        exc: Exception = Forbidden("Only the group leader or staff may transfer a ticket.")
        return _action_failed(request, ticket.pk, exc)
    form = TransferForm(request.POST)
    if not form.is_valid():
        exc = InvalidArgument("transfer", "The ticket was not transferred: see the form.")
        return _action_failed(request, ticket.pk, exc, forms={"transfer": form})
    try:
        services.ticket_transfer(
            ticket_id=ticket.pk, user=request.user, **form.transfer_arguments()
        )
    except InvalidArgument as exc:
        field = exc.field if exc.field in form.fields else None
        form.add_error(field, exc.message)
        return _action_failed(request, ticket.pk, exc, forms={"transfer": form})
    except (ConflictError, Forbidden) as exc:
        return _action_failed(request, ticket.pk, exc)
    messages.success(request, f"{ticket.bill_code} was transferred.")
    try:
        selectors.ticket_for(request.user, ticket.pk)
    except Ticket.DoesNotExist:  # handed to a group the user does not work in
        return redirect("console:pool")
    return redirect(_detail_url(ticket.pk))


@login_required
@require_POST
def ticket_close(request: HttpRequest, ticket_id: int) -> HttpResponse:
    ticket = _visible(request, ticket_id)
    return _perform(
        request,
        ticket,
        allowed=access.can_close(request.user, ticket),
        denied="Only the applicant or staff may close a ticket.",
        call=lambda: services.ticket_close(ticket_id=ticket.pk, user=request.user),
        success=f"{ticket.bill_code} is closed.",
    )


@login_required
@require_POST
def ticket_approve(request: HttpRequest, ticket_id: int) -> HttpResponse:
    ticket = _visible(request, ticket_id)
    return _perform(
        request,
        ticket,
        allowed=access.is_approver(request.user),
        denied="Only approvers may approve tickets.",
        call=lambda: services.ticket_approve(ticket_id=ticket.pk, approver=request.user),
        success=f"{ticket.bill_code} is approved and routed.",
    )


@login_required
@require_POST
def ticket_reject(request: HttpRequest, ticket_id: int) -> HttpResponse:
    ticket = _visible(request, ticket_id)
    if not access.is_approver(request.user):
        exc: Exception = Forbidden("Only approvers may reject tickets.")
        return _action_failed(request, ticket.pk, exc)
    form = RejectForm(request.POST)
    if not form.is_valid():
        exc = InvalidArgument("reason", "Give a reason for the rejection.")
        return _action_failed(request, ticket.pk, exc, forms={"reject": form})
    return _perform(
        request,
        ticket,
        allowed=True,
        denied="",
        call=lambda: services.ticket_reject(
            ticket_id=ticket.pk, approver=request.user, reason=form.cleaned_data["reason"]
        ),
        success=f"{ticket.bill_code} is rejected; the applicant has been told why.",
    )


# --- the applicant's side ------------------------------------------------------------------


@login_required
@require_GET
def my_tickets(request: HttpRequest) -> HttpResponse:
    tickets = selectors.my_submitted_tickets(request.user).select_related(*LIST_RELATED)
    page = Paginator(tickets, PAGE_SIZE).get_page(request.GET.get("page"))
    return render_console(
        request,
        "console/my_tickets.html",
        {"page": page, "tickets": _with_badges(page, timezone.now())},
    )


@login_required
@require_GET
def approvals(request: HttpRequest) -> HttpResponse:
    """The approvers' queue: submitted tickets awaiting approval, oldest first."""
    if not access.is_approver(request.user):
        raise PermissionDenied("Only approvers have an approval queue.")
    tickets = selectors.awaiting_approval_for(request.user).select_related(*LIST_RELATED)
    page = Paginator(tickets, PAGE_SIZE).get_page(request.GET.get("page"))
    return render_console(
        request,
        "console/approvals.html",
        {"page": page, "tickets": _with_badges(page, timezone.now())},
    )


@login_required
@require_http_methods(["GET", "POST"])
def submit(request: HttpRequest) -> HttpResponse:
    if request.method == "GET":
        return render_console(request, "console/submit.html", {"form": TicketSubmitForm()})
    form = TicketSubmitForm(request.POST)
    if form.is_valid():
        try:
            ticket = services.ticket_submit(creator=request.user, **form.submit_arguments())
        except InvalidArgument as exc:
            field = "handler_group" if exc.field == "handler_group_id" else exc.field
            form.add_error(field if field in form.fields else None, exc.message)
        else:
            messages.success(
                request,
                f"Ticket {ticket.bill_code} submitted. An approver will review it shortly.",
            )
            return redirect(_detail_url(ticket.pk))
    messages.error(request, "The ticket was not submitted: please fix the errors below.")
    return render_console(request, "console/submit.html", {"form": form}, status=400)
