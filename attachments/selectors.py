"""Which attachments a caller may read: those on a ticket they may see, less the files of
internal notes unless they are on the ticket's team; their own uploads not yet attached."""

from collections import defaultdict

from django.db.models import Q, QuerySet

from ticketing import access
from ticketing.access import Audience
from ticketing.models import ReplyType, Ticket

from .models import Attachment


def _base() -> QuerySet[Attachment]:
    return Attachment.objects.select_related("blob").order_by("id")


def readable(user, attachment_id: int) -> Attachment:
    """The attachment if `user` may read it; Attachment.DoesNotExist (the API's 404, the
    same as for an unknown id) otherwise."""
    attachment = Attachment.objects.select_related("blob", "reply").filter(pk=attachment_id).first()
    if attachment is None:
        raise Attachment.DoesNotExist
    if attachment.ticket_id is None:
        if attachment.uploader_id != user.pk:
            raise Attachment.DoesNotExist
        return attachment
    ticket = access.visible_tickets(user).filter(pk=attachment.ticket_id).first()
    if ticket is None:
        raise Attachment.DoesNotExist
    if is_internal(attachment) and not access.audience_for(user).sees_internals(ticket):
        raise Attachment.DoesNotExist
    attachment.ticket = ticket
    return attachment


def is_internal(attachment: Attachment) -> bool:
    return attachment.reply is not None and attachment.reply.reply_type == ReplyType.INTERNAL


def _visible(audience: Audience, ticket: Ticket) -> Q:
    if audience.sees_internals(ticket):
        return Q()
    return Q(reply=None) | Q(reply__reply_type=ReplyType.PUBLIC)


def on_ticket(audience: Audience, ticket: Ticket) -> list[Attachment]:
    """Every file on the ticket the viewer may read, oldest first (the ticket's own first)."""
    return list(_base().select_related("reply").filter(_visible(audience, ticket), ticket=ticket))


def by_reply(replies) -> dict[int, list[Attachment]]:
    """The files of these replies (already filtered to what the viewer may read), by reply."""
    found: dict[int, list[Attachment]] = defaultdict(list)
    ids = [reply.pk for reply in replies]
    if ids:
        for attachment in _base().filter(reply_id__in=ids):
            found[attachment.reply_id].append(attachment)  # type: ignore[index]
    return found


def own_files(tickets) -> dict[int, list[Attachment]]:
    """The files submitted with these tickets (no reply: the applicant's, public), by ticket."""
    found: dict[int, list[Attachment]] = defaultdict(list)
    ids = [ticket.pk for ticket in tickets]
    if ids:
        for attachment in _base().filter(ticket_id__in=ids, reply=None):
            found[attachment.ticket_id].append(attachment)  # type: ignore[index]
    return found


def waiting(user, ids: list[int]) -> dict[int, Attachment]:
    """The user's own uploads among `ids` that no ticket has yet, by id."""
    if not ids:
        return {}
    return {a.pk: a for a in _base().filter(pk__in=ids, uploader=user, ticket=None)}
