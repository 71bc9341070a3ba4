"""The approvers' queue and the approve / reject actions."""

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from config.errors import Forbidden, InvalidArgument
from console.badges import with_badges
from console.forms import RejectForm
from console.pages import LIST_RELATED, PAGE_SIZE, perform, render_console, visible_ticket
from ticketing import access, selectors, services

from .ticket import action_failed


@login_required
@require_GET
def approvals(request: HttpRequest) -> HttpResponse:
    """The approvers' queue: submitted tickets awaiting approval, oldest first."""
    try:
        access.require_approver(request.user)
    except Forbidden as exc:
        raise PermissionDenied(str(exc)) from None
    tickets = selectors.awaiting_approval_for(request.user).select_related(*LIST_RELATED)
    page = Paginator(tickets, PAGE_SIZE).get_page(request.GET.get("page"))
    return render_console(
        request,
        "console/approvals.html",
        {"page": page, "tickets": with_badges(page, timezone.now())},
    )


@login_required
@require_POST
def ticket_approve(request: HttpRequest, ticket_id: int) -> HttpResponse:
    ticket = visible_ticket(request, ticket_id)
    return perform(
        request,
        ticket,
        action="approve",
        call=lambda: services.ticket_approve(ticket_id=ticket.pk, approver=request.user),
        success=f"{ticket.bill_code} is approved and routed.",
        render_failure=action_failed,
    )


@login_required
@require_POST
def ticket_reject(request: HttpRequest, ticket_id: int) -> HttpResponse:
    ticket = visible_ticket(request, ticket_id)
    try:
        access.require("reject", request.user, ticket)
    except Forbidden as exc:
        return action_failed(request, ticket.pk, exc)
    form = RejectForm(request.POST)
    if not form.is_valid():
        exc = InvalidArgument("reason", "Give a reason for the rejection.")
        return action_failed(request, ticket.pk, exc, forms={"reject": form})
    return perform(
        request,
        ticket,
        action="reject",
        call=lambda: services.ticket_reject(
            ticket_id=ticket.pk, approver=request.user, reason=form.cleaned_data["reason"]
        ),
        success=f"{ticket.bill_code} is rejected; the applicant has been told why.",
        render_failure=action_failed,
    )
