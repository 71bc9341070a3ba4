"""The applicant's pages: their tickets and the submission form."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods

from attachments.errors import TicketFull
from config.errors import InvalidArgument
from config.pagination import EstimatedPaginator
from console import files
from console.badges import with_badges
from console.forms import TicketSubmitForm
from console.pages import LIST_RELATED, PAGE_SIZE, detail_url, render_console
from console.ticket_fields import error_input
from console.wording import customer_status
from ticketing import access
from workflow import selectors, services


@login_required
@require_GET
def my_tickets(request: HttpRequest) -> HttpResponse:
    """Their tickets as their ticket page tells them: a ticket whose team they are not on reads
    in the applicant's words (customer_status), without the SLA clock; the SLA column shows
    only to someone who works tickets."""
    tickets = selectors.my_submitted_tickets(request.user).select_related(*LIST_RELATED)
    page = EstimatedPaginator(tickets, PAGE_SIZE).get_page(request.GET.get("page"))
    audience = access.audience_for(request.user)
    rows = with_badges(page, timezone.now())
    for ticket in rows:
        # Display attributes for the template, as with_badges sets `sla`.
        applicant_view = not audience.sees_internals(ticket)
        ticket.applicant_view = applicant_view  # type: ignore[attr-defined]
        ticket.status_text = customer_status(ticket) if applicant_view else None  # type: ignore[attr-defined]
    return render_console(
        request,
        "console/my_tickets.html",
        {"page": page, "tickets": rows, "hide_sla": not audience.is_handler},
    )


# A service's InvalidArgument field, as the form names it.
SUBMIT_FIELDS = {"handler_group_id": "handler_group"}


@login_required
@require_http_methods(["GET", "POST"])
def submit(request: HttpRequest) -> HttpResponse:
    """The new-ticket form. Its files come uploaded already (attachments.js: attachment_ids)
    or, without script, with the form (uploaded here, all or none); a refused file, or files
    beyond the ticket's total, submit nothing and bring the form back with the message by
    the file field and everything else as typed."""
    if request.method == "GET":
        return _submit_page(request, TicketSubmitForm())
    form = TicketSubmitForm(request.POST, request.FILES)
    uploaded = files.take_chosen(request.user, form)
    if form.is_valid():
        try:
            ticket = services.ticket_submit(creator=request.user, **form.submit_arguments())
        except TicketFull as exc:
            files.refuse(request.user, form, uploaded, str(exc.detail))
        except InvalidArgument as exc:
            if exc.field == "attachment_ids":
                files.refuse(request.user, form, uploaded, exc.message)
            else:
                field = SUBMIT_FIELDS.get(exc.field) or error_input(exc.field) or exc.field
                form.add_error(field if field in form.fields else None, exc.message)
        else:
            messages.success(
                request,
                _("Ticket %(code)s submitted. An approver will review it shortly.")
                % {"code": ticket.bill_code},
            )
            return redirect(detail_url(ticket.pk))
    messages.error(request, _("The ticket was not submitted: please fix the errors below."))
    return _submit_page(request, form, status=400)


def _submit_page(request: HttpRequest, form: TicketSubmitForm, status: int = 200) -> HttpResponse:
    context = {
        "form": form,
        "waiting_uploads": files.waiting_uploads(request.user, form.carried_ids()),
    }
    return render_console(request, "console/submit.html", context, status=status)
