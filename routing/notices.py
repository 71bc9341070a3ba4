"""The backstop for assignment notices. An assignment writes its agent's notice in its own
transaction (route.py) and its event as notified; an event left unnotified (written by a
version that told the agent after commit, and whose process died in between) is told here,
by the routing sweep. Exactly once: each event is claimed by a compare-and-set on
`notified`, and the notice's dedupe key names the assignment, so a retry or the sweep can
never tell an agent twice."""

from datetime import datetime, timedelta

from django.db import connection, transaction
from django.utils import timezone

from handler_groups.models import HandlerGroup
from ticketing import notify
from ticketing.models import Ticket

from .models import AssignmentEvent

SWEEP_GRACE = timedelta(seconds=10)
# The claim, raw: it runs after every approval that assigns (the ORM's update compiles for
# longer than PostgreSQL takes to run it).
CLAIM_SQL = (
    f"UPDATE {AssignmentEvent._meta.db_table} SET notified = true WHERE id = %s AND NOT notified"
)


def send_assignment_notice(
    *, event_id: int, ticket: Ticket | None = None, group: HandlerGroup | None = None
) -> bool:
    """Tell the agent of this assignment if nobody has yet; False when already told (or the
    ticket has moved on: reclaimed, transferred — then there is nothing to say). A caller
    that holds the ticket and its group passes them."""
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(CLAIM_SQL, [event_id])
            claimed = cursor.rowcount
        if not claimed:
            return False
        if ticket is None or group is None:
            event = AssignmentEvent.objects.select_related("group").get(pk=event_id)
            group = event.group
            ticket = (
                Ticket.objects.select_related("handler_group")
                .filter(pk=event.ticket_id, handler_id=event.user_id, assigned_time=event.created)
                .first()
            )
            if ticket is None:
                return False
        notify.told_of_assignment(ticket, group)
        return True


def notice_sweep(*, now: datetime | None = None) -> int:
    """Backstop: assignments whose notice was not sent after commit (the process died in
    between). Returns how many agents were told."""
    now = now or timezone.now()
    pending = AssignmentEvent.objects.filter(
        notified=False, created__lte=now - SWEEP_GRACE
    ).values_list("pk", flat=True)
    return sum(send_assignment_notice(event_id=pk) for pk in list(pending[:1000]))
