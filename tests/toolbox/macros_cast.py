"""The people of the canned responses and macros tests: a support group (two handlers, a
leader), a facilities group (its member and leader), staff, the applicant and approver, and
a ticket of the applicant's in the support group, accepted by the first handler."""

from django.utils import timezone

from tests.factories import HandlerGroupFactory, StaffFactory, UserFactory
from ticketing.models import Ticket
from toolbox.models import CannedResponse, Macro
from workflow import services

NOW = timezone.now().replace(microsecond=0)


def make_cast(applicant, approver) -> dict:
    applicant.first_name, applicant.last_name = "Ada", "Byron"
    applicant.save(update_fields=["first_name", "last_name"])
    handlers = [
        UserFactory(username="handler0", first_name="Bob", last_name="Hale"),
        UserFactory(username="handler1"),
    ]
    leader = UserFactory(username="leader")
    group = HandlerGroupFactory(name="support", leader=leader, members=handlers, assign_strategy=0)
    outsider = UserFactory(username="outsider")
    other_leader = UserFactory(username="other_leader")
    other = HandlerGroupFactory(
        name="facilities", leader=other_leader, members=[outsider], assign_strategy=0
    )

    def ticket(*, accept: bool = True, title: str = "Printer on fire") -> Ticket:
        made = services.ticket_submit(
            creator=applicant,
            title=title,
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
        "other_leader": other_leader,
        "outsider": outsider,
        "staff": StaffFactory(username="staff"),
        "ticket": ticket,
    }


def canned(owner, *, scope="personal", group=None, name="Greeting", body="Hello", language=""):
    return CannedResponse.objects.create(
        name=name, body=body, scope=scope, group=group, owner=owner, language=language
    )


def macro(owner, actions, *, scope="personal", group=None, name="Printer: awaiting part"):
    return Macro.objects.create(name=name, actions=actions, scope=scope, group=group, owner=owner)
