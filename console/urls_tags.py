"""The Tags card's actions (console/tags.py shows it): add tags (comma-separated) and remove
one. Each POST form calls one service (ticketing.tags, after access "tag") and answers with a
redirect and a message, or the ticket page again with the error's status (400 a bad tag, 403
not the ticket's team, 409 a tag already gone) and nothing changed."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import path
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from config.errors import ConflictError, Forbidden, InvalidArgument
from console.pages import detail_url, visible_ticket
from console.tags import TagAddForm
from console.views.ticket import action_failed
from ticketing import access
from ticketing.models import Tag
from ticketing.tags import normalize_tag, tags_add, tags_remove

TAGS_ANCHOR = "#tags"


class NotTagged(ConflictError):
    """The tag shown on the page is no longer on the ticket (removed meanwhile): a 409."""


def _failed(request: HttpRequest, ticket_id: int, exc: Exception, form=None) -> HttpResponse:
    if form is not None:
        # render_ticket's panels take no forms: the card finds the refused one here.
        request._tag_form = form  # type: ignore[attr-defined]
    return action_failed(request, ticket_id, exc)


@login_required
@require_POST
def tag_add(request: HttpRequest, ticket_id: int) -> HttpResponse:
    ticket = visible_ticket(request, ticket_id)
    form = TagAddForm(request.POST)
    try:
        access.require("tag", request.user, ticket)
        if not form.is_valid() or not form.tag_list():
            raise InvalidArgument("tags", _("Nothing was added: give a tag."))
        tags_add(ticket_id=ticket.pk, tags=form.tag_list(), actor_id=request.user.pk)
    except InvalidArgument as exc:
        form.errors.pop("tags", None)
        form.add_error("tags", exc.message)
        return _failed(request, ticket.pk, exc, form)
    except (ConflictError, Forbidden) as exc:
        return _failed(request, ticket.pk, exc)
    messages.success(request, _("Tags of %(code)s saved.") % {"code": ticket.bill_code})
    return redirect(detail_url(ticket.pk) + TAGS_ANCHOR)


@login_required
@require_POST
def tag_remove(request: HttpRequest, ticket_id: int) -> HttpResponse:
    ticket = visible_ticket(request, ticket_id)
    name = request.POST.get("tag", "")
    try:
        access.require("tag", request.user, ticket)
        try:
            tags_remove(
                ticket_id=ticket.pk, tags=[name], actor_id=request.user.pk, require_present=True
            )
        except Tag.DoesNotExist:
            raise NotTagged(_("This ticket no longer carries this tag.")) from None
    except (ConflictError, Forbidden, InvalidArgument) as exc:
        return _failed(request, ticket.pk, exc)
    messages.success(request, _("The tag %(tag)s was removed.") % {"tag": normalize_tag(name)})
    return redirect(detail_url(ticket.pk) + TAGS_ANCHOR)


urlpatterns: list = [
    path("tickets/<int:ticket_id>/tags/", tag_add, name="ticket-tag-add"),
    path("tickets/<int:ticket_id>/tags/remove/", tag_remove, name="ticket-tag-remove"),
]
