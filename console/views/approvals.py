"""The approvers' list and the approve / reject actions: approve or reject in the row or on
the ticket page, approve many selected rows at once. After each action the approver is back
on the list, with the next waiting ticket highlighted (and named in the message)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_GET, require_POST

from config.errors import ConflictError, Forbidden, InvalidArgument
from config.pagination import EstimatedPaginator
from console.forms import BulkApproveForm, RejectForm
from console.pages import PAGE_SIZE, error_message, perform, render_console, visible_ticket
from ticketing import access
from ticketing.lifecycle import IllegalTransition
from ticketing.models import ProcessStatus, Ticket
from workflow import selectors, services

from .ticket import action_failed

WAITING_RELATED = ("creator", "handler_group")


def _require_approver(request: HttpRequest) -> None:
    try:
        access.require_approver(request.user)
    except Forbidden as exc:
        raise PermissionDenied(str(exc)) from None


def _waiting(user):
    return selectors.awaiting_approval_for(user)


def _focus(request: HttpRequest, waiting) -> Ticket | None:
    """The ticket named by `?focus=<id>` (the next one after an action), if still waiting."""
    raw = request.GET.get("focus", "")
    if not raw.isascii() or not raw.isdigit():
        return None
    return waiting.filter(pk=int(raw)).first()


def _page_of(waiting, ticket: Ticket) -> int:
    """The list's page (oldest first) that shows `ticket`."""
    before = waiting.filter(
        Q(submitted_time__lt=ticket.submitted_time)
        | Q(submitted_time=ticket.submitted_time, pk__lt=ticket.pk)
    ).count()
    return before // PAGE_SIZE + 1


def next_waiting(user, after: Ticket) -> Ticket | None:
    """The ticket to look at after acting on `after`: the next one in the list's order,
    else (it was the last) the oldest one still waiting; None when nothing waits."""
    waiting = _waiting(user).exclude(pk=after.pk)
    later = waiting.filter(
        Q(submitted_time__gt=after.submitted_time)
        | Q(submitted_time=after.submitted_time, pk__gt=after.pk)
    )
    return later.first() or waiting.first()


def approvals_url(focus: Ticket | None = None) -> str:
    url = reverse("console:approvals")
    if focus is None:
        return url
    return f"{url}?focus={focus.pk}#ticket-{focus.pk}"


def _render_approvals(request: HttpRequest, *, status: int = 200) -> HttpResponse:
    waiting = _waiting(request.user)
    focus = _focus(request, waiting)
    page_number: int | str | None = request.GET.get("page")
    if focus is not None and not page_number:
        page_number = _page_of(waiting, focus)
    paginator = EstimatedPaginator(waiting.select_related(*WAITING_RELATED), PAGE_SIZE)
    page = paginator.get_page(page_number)
    return render_console(
        request,
        "console/approvals.html",
        {
            "page": page,
            "tickets": list(page),
            "focus": focus,
            "max_bulk": BulkApproveForm.MAX_TICKETS,
        },
        status=status,
    )


@login_required
@require_GET
def approvals(request: HttpRequest) -> HttpResponse:
    """The approvers' list: submitted tickets awaiting approval, oldest first, each with a
    preview of its content and its own Approve / Reject; `?focus=<id>` highlights one."""
    _require_approver(request)
    return _render_approvals(request)


def _done(message: str, upcoming: Ticket | None) -> str:
    if upcoming is None:
        return _("%(message)s Nothing else is waiting for approval.") % {"message": message}
    return _("%(message)s Next: %(code)s %(title)s.") % {
        "message": message,
        "code": upcoming.bill_code,
        "title": upcoming.title,
    }


@login_required
@require_POST
def ticket_approve(request: HttpRequest, ticket_id: int) -> HttpResponse:
    """Approve from the row or from the ticket page; on success back to the list with the
    next waiting ticket highlighted. A refusal shows the ticket page (403 / 409)."""
    ticket = visible_ticket(request, ticket_id)
    upcoming = next_waiting(request.user, ticket) if access.is_approver(request.user) else None
    return perform(
        request,
        ticket,
        action="approve",
        call=lambda: services.ticket_approve(ticket_id=ticket.pk, approver=request.user),
        success=_done(_("%(code)s is approved and routed.") % {"code": ticket.bill_code}, upcoming),
        redirect_to=approvals_url(upcoming),
        render_failure=action_failed,
    )


@login_required
@require_POST
def ticket_reject(request: HttpRequest, ticket_id: int) -> HttpResponse:
    """Reject with a reason (required: the applicant is told it); then as for approve."""
    ticket = visible_ticket(request, ticket_id)
    try:
        access.require("reject", request.user, ticket)
    except Forbidden as exc:
        return action_failed(request, ticket.pk, exc)
    form = RejectForm(request.POST)
    if not form.is_valid():
        error = InvalidArgument("reason", _("Give a reason for the rejection."))
        return action_failed(request, ticket.pk, error, forms={"reject": form})
    upcoming = next_waiting(request.user, ticket)
    message = _("%(code)s is rejected; the applicant has been told why.") % {
        "code": ticket.bill_code
    }
    return perform(
        request,
        ticket,
        action="reject",
        call=lambda: services.ticket_reject(
            ticket_id=ticket.pk, approver=request.user, reason=form.cleaned_data["reason"]
        ),
        success=_done(message, upcoming),
        redirect_to=approvals_url(upcoming),
        render_failure=action_failed,
    )


def _why_not(ticket: Ticket | None, exc: Exception) -> str:
    """A few words on why one ticket of a bulk approval was not approved."""
    if ticket is None:
        return _("not found")
    if isinstance(exc, IllegalTransition):
        status = Ticket.objects.filter(pk=ticket.pk).values_list("process_status", flat=True)
        reasons: dict[int | None, str] = {
            ProcessStatus.APPROVED: _("already approved"),
            ProcessStatus.REJECTED: _("already rejected"),
            ProcessStatus.CANCELLED: _("cancelled by the applicant"),
        }
        return reasons.get(status.first(), _("no longer awaiting approval"))
    return error_message(exc)


@login_required
@require_POST
def bulk_approve(request: HttpRequest) -> HttpResponse:
    """Approve the selected tickets, each in its own transaction (services.ticket_approve):
    one that fails (approved by someone else meanwhile, cancelled, not visible) is named in
    the message and the others go through. A bad list of ids: the list again with 400."""
    _require_approver(request)
    form = BulkApproveForm(request.POST)
    if not form.is_valid():
        for error in form.errors.get("ticket", []):
            messages.error(request, str(error))  # (an ErrorList yields its messages)
        return _render_approvals(request, status=400)
    approved: list[str] = []
    failed: list[str] = []
    for ticket_id in form.cleaned_data["ticket"]:
        ticket = None
        try:
            ticket = selectors.ticket_for(request.user, ticket_id)
            access.require("approve", request.user, ticket)
            services.ticket_approve(ticket_id=ticket.pk, approver=request.user)
        except Ticket.DoesNotExist as exc:
            failed.append(f"#{ticket_id} ({_why_not(None, exc)})")
        except (ConflictError, Forbidden, InvalidArgument) as exc:
            name = ticket.bill_code if ticket is not None else f"#{ticket_id}"
            failed.append(f"{name} ({_why_not(ticket, exc)})")
        else:
            approved.append(ticket.bill_code)
    summary = ngettext("Approved %(count)d.", "Approved %(count)d.", len(approved)) % {
        "count": len(approved)
    }
    if failed:
        summary += " " + ngettext(
            "%(count)d could not be approved: %(tickets)s.",
            "%(count)d could not be approved: %(tickets)s.",
            len(failed),
        ) % {"count": len(failed), "tickets": ", ".join(failed)}
    (messages.warning if failed else messages.success)(request, summary)
    return redirect(approvals_url(_waiting(request.user).first()))
