"""The people of the tags tests: a support group (two handlers and a leader), a handler of
another group, staff, a watcher, and tickets of the applicant's in the support group."""

from collaboration.services.watchers import watcher_add
from tests.factories import HandlerGroupFactory, StaffFactory, UserFactory
from ticketing.models import Ticket
from workflow import services


def make_cast(applicant, approver) -> dict:
    handlers = [UserFactory(username="handler0"), UserFactory(username="handler1")]
    leader = UserFactory(username="leader")
    group = HandlerGroupFactory(name="support", leader=leader, members=handlers, assign_strategy=0)
    outsider = UserFactory(username="outsider")
    other = HandlerGroupFactory(name="facilities", members=[outsider], assign_strategy=0)
    watcher = UserFactory(username="watcher")

    def ticket(*, accept: bool = True, category: str = "") -> Ticket:
        made = services.ticket_submit(
            creator=applicant,
            title="Printer on fire",
            content="It is on fire.",
            priority=3,
            handler_group_id=group.pk,
        )
        services.ticket_approve(ticket_id=made.pk, approver=approver)
        if accept:
            services.ticket_accept(ticket_id=made.pk, handler=handlers[0])
        return Ticket.objects.get(pk=made.pk)

    return {
        "applicant": applicant,
        "approver": approver,
        "handlers": handlers,
        "leader": leader,
        "group": group,
        "other_group": other,
        "outsider": outsider,
        "watcher": watcher,
        "staff": StaffFactory(username="staff"),
        "ticket": ticket,
        "watch": lambda t: watcher_add(ticket_id=t.pk, user_id=watcher.pk, actor=applicant),
    }
