"""The people of the saved views, bulk and export tests: a support group (two handlers and a
leader), a facilities group with its own handler, staff, and a way to make tickets in either
group (approved into the pool, or accepted by a handler)."""

from datetime import datetime

from tests.factories import HandlerGroupFactory, StaffFactory, UserFactory
from ticketing.models import Ticket
from workflow import services


def make_world(applicant, approver) -> dict:
    handlers = [UserFactory(username="handler0"), UserFactory(username="handler1")]
    leader = UserFactory(username="leader")
    group = HandlerGroupFactory(name="support", leader=leader, members=handlers, assign_strategy=0)
    outsider = UserFactory(username="outsider")
    other = HandlerGroupFactory(name="facilities", members=[outsider], assign_strategy=0)

    def ticket(
        *,
        in_group=None,
        accept_by=None,
        title: str = "Printer on fire",
        priority: int = 3,
        category: str = "",
        now: datetime | None = None,
    ) -> Ticket:
        made = services.ticket_submit(
            creator=applicant,
            title=title,
            content="It is on fire.",
            priority=priority,
            handler_group_id=(in_group or group).pk,
            **({"category": category} if category else {}),
        )
        services.ticket_approve(
            ticket_id=made.pk, approver=approver, **({"now": now} if now else {})
        )
        if accept_by is not None:
            services.ticket_accept(ticket_id=made.pk, handler=accept_by)
        return Ticket.objects.get(pk=made.pk)

    return {
        "applicant": applicant,
        "approver": approver,
        "handlers": handlers,
        "leader": leader,
        "group": group,
        "other_group": other,
        "outsider": outsider,
        "staff": StaffFactory(username="staff"),
        "ticket": ticket,
    }
