"""The ticket page, as each viewer may see it (staff-side viewers everything, the applicant and
approvers the public story: see ticketing/access.py), and its actions: each one POST form that
parses its input, calls one service and answers with a redirect or the page again with the
error's status."""

from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from attachments import selectors as attachment_selectors
from attachments.errors import TicketFull
from config.errors import ConflictError, Forbidden, InvalidArgument
from console import files, links, macros, merging, satisfaction, tags, ticket_fields, watchers
from console.badges import badge_display
from console.forms import DeclineForm, PreviewForm, RejectForm, ReplyForm, TransferForm
from console.history import describe_all
from console.pages import (
    LIST_RELATED,
    detail_url,
    error_message,
    error_status,
    perform,
    render_console,
    safe_next,
    visible_ticket,
)
from console.timeline import clock_rows, timeline_svg
from console.wording import customer_status
from live import events as live_events
from live import viewers as live_viewers
from mail.selectors import mail_notes
from notifications.markup import render_markdown
from routing.decisions import decisions_for
from sla import services as sla_services
from sla.models import ClockResult, SlaOutcome
from sla.selectors import sla_badge, sla_timeline
from ticketing import access
from ticketing.models import ProcessStatus, ReplyType, Ticket, TicketStatus
from workflow import selectors, services


def _record_rows(audience: access.Audience, ticket: Ticket) -> list[dict]:
    """The history as this viewer may read it (records_for keeps the audience rules), each
    record in plain words; the names it mentions read in one query."""
    records = selectors.records_for(audience, ticket)
    rows: list[dict[str, Any]] = [
        {
            "id": record.pk,
            "created": record.created,
            "action": record.action,
            "text": text,
            "run": (record.detail or {}).get("macro_run"),
            "steps": [],
        }
        for record, text in zip(records, describe_all(records), strict=True)
    ]
    # A macro's run is one entry: the records its steps wrote (marked with the run's record
    # id, toolbox.macros) are listed under it, not beside it.
    runs = {row["id"]: row for row in rows if row["action"] == "macro"}
    shown = []
    for row in rows:
        run = runs.get(row["run"]) if row["run"] is not None else None
        if run is not None:
            run["steps"].append(row)
        else:
            shown.append(row)
    return shown


def reply_by(ticket: Ticket):
    """When the applicant may expect an answer: the response deadline until the team has
    answered, then the resolve deadline; None once finished, or while waiting on them."""
    if ticket.process_status != ProcessStatus.APPROVED or ticket.ticket_status in (
        TicketStatus.COMPLETED,
        TicketStatus.CLOSED,
    ):
        return None
    if ticket.sla_paused:
        return None
    if ticket.responded_time is None and ticket.response_deadline:
        return ticket.response_deadline
    return ticket.resolve_deadline


def sla_chip(ticket: Ticket, outcome: SlaOutcome | None, now) -> dict:
    """The header's SLA chip: the running clock while the ticket is open; once finished, the
    outcome the SLA card shows (met unless a clock was breached), so the two always agree."""
    finished = ticket.ticket_status in (TicketStatus.COMPLETED, TicketStatus.CLOSED)
    merged = outcome is not None and ClockResult.MERGED in (
        outcome.response_result,
        outcome.resolve_result,
    )
    if finished and merged:
        # A merged duplicate is neither met nor breached: its work went on in the other.
        return {
            "state": "merged",
            "clock": None,
            "text": _("SLA: merged"),
            "css": "sla-none",
            "title": _("Merged into another ticket: its clocks count neither as met nor breached."),
        }
    if outcome is not None and finished:
        results = [outcome.response_met, outcome.resolve_met]
        breached = any(result is False for result in results)
        return {
            "state": "breached" if breached else "ok",
            "clock": None,
            "text": _("SLA breached") if breached else _("SLA met"),
            "css": "sla-breached" if breached else "sla-ok",
            "title": _("The final SLA outcome: see the SLA card."),
        }
    return badge_display(sla_badge(ticket, now))


# The composer's tab after a send: the redirect carries it (?composer=internal), so the
# second note of a series is a note too.
COMPOSER_TAB_PARAM = "composer"
# The session's one-shot "this person's reply on this ticket was accepted": the page tells
# composer.js, which then clears the draft it kept (only after the server accepted it).
SENT_SESSION_KEY = "composer-sent-%d"


def reply_form_for(request: HttpRequest, insider: bool, latest_reply_id: int) -> ReplyForm:
    """A fresh composer on the tab the last send used, remembering the newest reply shown."""
    internal = insider and request.GET.get(COMPOSER_TAB_PARAM) == "internal"
    return ReplyForm(
        allow_internal=insider,
        initial={
            "reply_type": ReplyType.INTERNAL if internal else ReplyType.PUBLIC,
            "seen_reply_id": latest_reply_id,
        },
    )


def render_ticket(
    request: HttpRequest,
    ticket: Ticket,
    *,
    status: int = 200,
    forms: dict | None = None,
    newer_reply: bool = False,
) -> HttpResponse:
    user = request.user
    # Visibility was checked by the caller (ticket_for); load what the page shows in one go.
    ticket = Ticket.objects.select_related(*LIST_RELATED).get(pk=ticket.pk)
    audience = access.audience_for(user)
    insider = audience.sees_internals(ticket)
    actions = access.permitted_actions(user, ticket, audience)
    forms = forms or {}
    now = timezone.now()
    outcome = SlaOutcome.objects.filter(ticket=ticket).first()
    applicant = ticket.creator_id == user.pk and not insider
    # The reply box is the composer, not an action: the Actions card shows only when one of
    # the others is allowed.
    shown = {name: allowed for name, allowed in actions.items() if name != "reply"}
    replies = list(selectors.replies_for(audience, ticket))
    # The greatest id, not the last shown: replies are in time order, and a merged
    # duplicate's keep their own ids (the composer and live.js compare ids).
    latest_reply_id = max((reply.pk for reply in replies), default=0)
    # The files the viewer may read (an internal note's only for the team): each reply's
    # under it, the ticket's own under its text, all of them in the side panel.
    reply_files = files.rows_by_reply(attachment_selectors.by_reply(replies), replies)
    # Which came by e-mail, and the whole message behind each (mail.selectors).
    by_mail = mail_notes(ticket=ticket, replies=replies, viewer_id=user.pk, insider=insider)
    for reply in replies:
        reply.files = reply_files[reply.pk]  # type: ignore[attr-defined]
        reply.mail = by_mail.get(reply.pk)  # type: ignore[attr-defined]
    ticket_files = files.rows(attachment_selectors.on_ticket(audience, ticket))
    reply_form = forms.get("reply") or reply_form_for(request, insider, latest_reply_id)
    tracks = sla_timeline(ticket, outcome=outcome) if insider else []
    context = {
        "ticket": ticket,
        "sla": sla_chip(ticket, outcome, now),
        "applicant_view": applicant,
        "is_agent": audience.is_handler,
        "status_text": customer_status(ticket) if applicant else None,
        "reply_by": reply_by(ticket) if applicant else None,
        "outcome": outcome,
        # Escalation levels and their firing are internals: the team's view only (access.py).
        "sla_timeline": timeline_svg(tracks, now=now) if insider else "",
        "sla_clocks": clock_rows(tracks, now=now) if insider else [],
        "insider": insider,
        # "Why this agent?": routing internals, the team's view only; newest decision first.
        "routing_decisions": decisions_for(ticket.pk)[::-1] if insider else [],
        "replies": replies,
        "opening_mail": by_mail.get(None),
        "latest_reply_id": latest_reply_id,
        "composer_sent": request.session.pop(SENT_SESSION_KEY % ticket.pk, False),
        "newer_reply": newer_reply,
        "records": _record_rows(audience, ticket),
        "actions": actions,
        "reply_form": reply_form,
        # The uploads a composer that came back (an error, a newer reply) still carries.
        "waiting_uploads": files.waiting_uploads(user, reply_form.carried_ids()),
        "own_files": [file for file in ticket_files if file.reply_id is None],
        "ticket_files": ticket_files,
        "reject_form": forms.get("reject") or RejectForm(),
        "decline_form": forms.get("decline") or DeclineForm(),
        "transfer_form": (
            forms.get("transfer") or (TransferForm() if actions["transfer"] else None)
        ),
        "any_action": any(shown.values()),
        # The live page (live.js) resumes its event stream from the id current at render time,
        # so nothing that happens before it connects is missed; the team sees who else is here.
        "live_events_url": live_events_url(ticket, live_events.latest_id()),
        "viewers": (live_viewers.viewers_of(ticket.pk, exclude_user_id=user.pk) if insider else []),
        # Working together: watchers, links, merging, satisfaction (each its module's card).
        **watchers.panel(request, ticket, audience),
        **links.panel(request, ticket, audience),
        **merging.panel(request, ticket, audience),
        **satisfaction.panel(request, ticket, audience),
        # The toolbox: macros, tags and custom fields (each its module's card).
        **macros.panel(request, ticket, audience),
        **tags.panel(request, ticket, audience),
        **ticket_fields.panel(request, ticket, audience),
    }
    return render_console(request, "console/ticket_detail.html", context, status=status)


def live_events_url(ticket: Ticket, since: str | None) -> str:
    query = urlencode({"page": "ticket", "ticket": ticket.pk, "since": since or ""})
    return f"{reverse('live-events')}?{query}"


@login_required
@require_POST
def ticket_activity(request: HttpRequest, ticket_id: int) -> HttpResponse:
    """The composer says its person is viewing or replying (live.js, at most every 3 s): the
    ticket's other team pages show it. Only staff-side viewers count; 204 even when Redis is
    not answering (nothing depends on it)."""
    ticket = visible_ticket(request, ticket_id)
    state = request.POST.get("state", "")
    if state not in live_viewers.STATES:
        return JsonResponse(
            {"code": "invalid", "errors": {"state": [_("Choose viewing or replying.")]}},
            status=400,
        )
    if not access.can_work_on(request.user, ticket):
        return JsonResponse(
            {"code": "forbidden", "detail": _("Only the team is shown.")}, status=403
        )
    user_id = request.user.pk
    assert user_id is not None  # (login_required)
    live_viewers.set_state(
        ticket=ticket, user_id=user_id, name=request.user.get_username(), state=state
    )
    return HttpResponse(status=204)


def action_failed(
    request: HttpRequest, ticket_id: int, exc: Exception, forms: dict | None = None
) -> HttpResponse:
    messages.error(request, error_message(exc))
    try:
        ticket = selectors.ticket_for(request.user, ticket_id)
    except Ticket.DoesNotExist:  # the action lost a race that also took the ticket away
        return redirect("console:pool")
    return render_ticket(request, ticket, status=error_status(exc), forms=forms)


def _perform(request, ticket, **kwargs) -> HttpResponse:
    return perform(request, ticket, render_failure=action_failed, **kwargs)


@login_required
@require_GET
def ticket_detail(request: HttpRequest, ticket_id: int) -> HttpResponse:
    """The ticket's page. A duplicate merged into another ticket shows the other (a message
    says so) when the viewer may see it, unless they ask for the duplicate itself
    (?show=merged); otherwise the duplicate, with a banner saying where it went."""
    ticket = visible_ticket(request, ticket_id)
    if ticket.merged_into_id is not None and request.GET.get("show") != "merged":
        into = access.visible_tickets(request.user).filter(pk=ticket.merged_into_id).first()
        if into is not None:
            messages.info(
                request,
                _("%(source)s was merged into %(target)s.")
                % {"source": ticket.bill_code, "target": into.bill_code},
            )
            return redirect(detail_url(into.pk))
    return render_ticket(request, ticket)


@login_required
@require_POST
def ticket_accept(request: HttpRequest, ticket_id: int) -> HttpResponse:
    ticket = visible_ticket(request, ticket_id)
    return _perform(
        request,
        ticket,
        action="accept",
        call=lambda: services.ticket_accept(ticket_id=ticket.pk, handler=request.user),
        success=_("You accepted %(code)s; it is now in My work.") % {"code": ticket.bill_code},
        redirect_to=safe_next(request, detail_url(ticket.pk)),
    )


@login_required
@require_POST
def ticket_decline(request: HttpRequest, ticket_id: int) -> HttpResponse:
    ticket = visible_ticket(request, ticket_id)
    try:
        access.require("decline", request.user, ticket)
    except Forbidden as exc:
        return action_failed(request, ticket.pk, exc)
    form = DeclineForm(request.POST)
    if not form.is_valid():
        error = InvalidArgument("reason", _("The ticket was not declined: see the reason below."))
        return action_failed(request, ticket.pk, error, forms={"decline": form})
    return _perform(
        request,
        ticket,
        action="decline",
        call=lambda: services.ticket_decline(
            ticket_id=ticket.pk, handler=request.user, reason=form.cleaned_data["reason"]
        ),
        success=_("You declined %(code)s; it goes to someone else.") % {"code": ticket.bill_code},
        redirect_to=reverse("console:pool"),
    )


@login_required
@require_POST
def ticket_reply(request: HttpRequest, ticket_id: int) -> HttpResponse:
    """A reply or internal note, with its files: uploaded already (attachments.js:
    attachment_ids) or, without script, sent with the form (uploaded here, all or none). A
    refused file, or files beyond the ticket's total, send nothing: the page again, 400, with
    the message by the file field and the text and the uploads kept."""
    ticket = visible_ticket(request, ticket_id)
    audience = access.audience_for(request.user)
    form = ReplyForm(request.POST, request.FILES, allow_internal=audience.sees_internals(ticket))
    try:
        access.require("reply", request.user, ticket, audience)
        if request.POST.get("reply_type") == str(ReplyType.INTERNAL):
            access.require("internal_reply", request.user, ticket, audience)
    except Forbidden as exc:
        return action_failed(request, ticket.pk, exc)
    uploaded = files.take_chosen(request.user, form)
    if not form.is_valid():
        return _reply_refused(request, ticket, form)
    reply_type = form.cleaned_data["reply_type"]
    newest = newer_reply_id(request, audience, ticket, form.cleaned_data["seen_reply_id"])
    if newest is not None:
        # Nothing saved: the page again, with the newer reply, the notice, the draft and its
        # files; the form now remembers that reply, so the second Send sends.
        data = request.POST.copy()
        data["seen_reply_id"] = str(newest)
        data.setlist("attachment_ids", [str(i) for i in form.carried_ids()])
        again = ReplyForm(data, allow_internal=audience.sees_internals(ticket))
        again.is_valid()
        return render_ticket(request, ticket, status=409, forms={"reply": again}, newer_reply=True)
    internal = reply_type == ReplyType.INTERNAL

    def send() -> None:
        try:
            services.ticket_reply(
                ticket_id=ticket.pk,
                author=request.user,
                reply_type=reply_type,
                content=form.cleaned_data["content"],
                attachment_ids=form.carried_ids(),
            )
        except TicketFull as exc:
            # (said by the file field, as the service's own refusals of attachment_ids are)
            raise InvalidArgument("attachment_ids", str(exc.detail)) from exc

    def failed(request: HttpRequest, ticket_id: int, exc: Exception) -> HttpResponse:
        if isinstance(exc, InvalidArgument) and exc.field == "attachment_ids":
            files.refuse(request.user, form, uploaded, exc.message)
            return _reply_refused(request, ticket, form)
        files.discard(request.user, uploaded)  # not sent, and the form is not kept
        return action_failed(request, ticket_id, exc)

    response = perform(
        request,
        ticket,
        action="internal_reply" if internal else "reply",
        call=send,
        success=_("Internal note added.") if internal else _("Reply sent."),
        redirect_to=detail_url(ticket.pk)
        + (f"?{COMPOSER_TAB_PARAM}=internal" if internal else "")
        + "#replies",
        render_failure=failed,
    )
    if response.status_code == 302:
        request.session[SENT_SESSION_KEY % ticket.pk] = True
    return response


def _reply_refused(request: HttpRequest, ticket: Ticket, form: ReplyForm) -> HttpResponse:
    error = InvalidArgument("content", _("The reply was not sent: see the errors below."))
    return action_failed(request, ticket.pk, error, forms={"reply": form})


def newer_reply_id(
    request: HttpRequest, audience: access.Audience, ticket: Ticket, seen_reply_id: int | None
) -> int | None:
    """The newest reply by someone else that the sender may see and had not seen when they
    wrote (their own, from another tab, they know of); None when there is none, or when the
    form named no reply (no check)."""
    if seen_reply_id is None:
        return None
    newer = (
        selectors.replies_for(audience, ticket)
        .filter(pk__gt=seen_reply_id)
        .exclude(author_id=request.user.pk)
        .order_by("-pk")
        .values_list("pk", flat=True)
        .first()
    )
    return newer


@login_required
@require_POST
def reply_preview(request: HttpRequest) -> HttpResponse:
    """The composer's Preview: the server's rendering of the text (notifications.markup, as
    the page and the e-mail will show it), or 400 naming the field."""
    form = PreviewForm(request.POST)
    if not form.is_valid():
        return JsonResponse({"code": "invalid", "errors": form.errors.get_json_data()}, status=400)
    return JsonResponse({"html": render_markdown(form.cleaned_data["content"])})


@login_required
@require_POST
def ticket_pause(request: HttpRequest, ticket_id: int) -> HttpResponse:
    ticket = visible_ticket(request, ticket_id)
    return _perform(
        request,
        ticket,
        action="pause",
        call=lambda: sla_services.sla_pause(ticket_id=ticket.pk, user=request.user),
        success=_("Waiting on the applicant: the resolve clock is paused."),
    )


@login_required
@require_POST
def ticket_resume(request: HttpRequest, ticket_id: int) -> HttpResponse:
    ticket = visible_ticket(request, ticket_id)
    return _perform(
        request,
        ticket,
        action="resume",
        call=lambda: sla_services.sla_resume(ticket_id=ticket.pk, user=request.user),
        success=_("Resumed: the resolve clock is running again."),
    )


@login_required
@require_POST
def ticket_complete(request: HttpRequest, ticket_id: int) -> HttpResponse:
    ticket = visible_ticket(request, ticket_id)
    return _perform(
        request,
        ticket,
        action="complete",
        call=lambda: services.ticket_complete(ticket_id=ticket.pk, handler=request.user),
        success=_("%(code)s is completed; the applicant has been told.")
        % {"code": ticket.bill_code},
    )


@login_required
@require_POST
def ticket_reopen(request: HttpRequest, ticket_id: int) -> HttpResponse:
    """Take a completed ticket up again: its team at any time, its applicant within
    REOPEN_DAYS of the completion (403 for anyone else, 409 once it is not completed:
    nothing changed)."""
    ticket = visible_ticket(request, ticket_id)
    return _perform(
        request,
        ticket,
        action="reopen",
        call=lambda: services.ticket_reopen(ticket_id=ticket.pk, user=request.user),
        success=_("%(code)s is reopened: it is being worked on again.")
        % {"code": ticket.bill_code},
    )


@login_required
@require_POST
def ticket_transfer(request: HttpRequest, ticket_id: int) -> HttpResponse:
    ticket = visible_ticket(request, ticket_id)
    try:
        access.require("transfer", request.user, ticket)
    except Forbidden as exc:
        return action_failed(request, ticket.pk, exc)
    form = TransferForm(request.POST)
    if not form.is_valid():
        error = InvalidArgument("transfer", _("The ticket was not transferred: see the form."))
        return action_failed(request, ticket.pk, error, forms={"transfer": form})
    try:
        services.ticket_transfer(
            ticket_id=ticket.pk, user=request.user, **form.transfer_arguments()
        )
    except InvalidArgument as exc:
        field = exc.field if exc.field in form.fields else None
        form.add_error(field, exc.message)
        return action_failed(request, ticket.pk, exc, forms={"transfer": form})
    except (ConflictError, Forbidden) as exc:
        return action_failed(request, ticket.pk, exc)
    messages.success(request, _("%(code)s was transferred.") % {"code": ticket.bill_code})
    try:
        selectors.ticket_for(request.user, ticket.pk)
    except Ticket.DoesNotExist:  # handed to a group the user does not work in
        return redirect("console:pool")
    return redirect(detail_url(ticket.pk))


@login_required
@require_POST
def ticket_close(request: HttpRequest, ticket_id: int) -> HttpResponse:
    ticket = visible_ticket(request, ticket_id)
    return _perform(
        request,
        ticket,
        action="close",
        call=lambda: services.ticket_close(ticket_id=ticket.pk, user=request.user),
        success=_("%(code)s is closed.") % {"code": ticket.bill_code},
    )


@login_required
@require_POST
def ticket_cancel(request: HttpRequest, ticket_id: int) -> HttpResponse:
    """The applicant withdraws their ticket while it waits for approval (403 for anyone else,
    409 once it has been approved, rejected or cancelled: nothing changed)."""
    ticket = visible_ticket(request, ticket_id)
    return _perform(
        request,
        ticket,
        action="cancel",
        call=lambda: services.ticket_cancel(ticket_id=ticket.pk, user=request.user),
        success=_("%(code)s is cancelled.") % {"code": ticket.bill_code},
    )
