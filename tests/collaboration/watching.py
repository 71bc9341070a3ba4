"""The people of the watchers and mentions tests: a support group (two handlers and a leader),
the applicant's colleague, a stranger, a handler of another group, staff, and tickets of the
applicant's in the support group."""

from accounts.models import Profile
from notifications.models import Notification
from tests.factories import HandlerGroupFactory, StaffFactory, UserFactory
from ticketing.models import ReplyType, Ticket
from workflow import services


def make_cast(applicant, approver):
    handlers = [
        UserFactory(username="handler0", first_name="Hana", last_name="Ohara"),
        UserFactory(username="handler1", first_name="Ivo", last_name="Berg"),
    ]
    leader = UserFactory(username="leader", first_name="Lea", last_name="Stone")
    group = HandlerGroupFactory(name="support", leader=leader, members=handlers, assign_strategy=0)
    outsider = UserFactory(username="outsider")
    HandlerGroupFactory(name="facilities", members=[outsider], assign_strategy=0)

    def ticket(*, accept: bool = True, approve: bool = True, creator=None) -> Ticket:
        made = services.ticket_submit(
            creator=creator or applicant,
            title="Printer on fire",
            content="It is on fire.",
            priority=3,
            handler_group_id=group.pk,
        )
        if approve:
            services.ticket_approve(ticket_id=made.pk, approver=approver)
        if approve and accept:
            services.ticket_accept(ticket_id=made.pk, handler=handlers[0])
        return Ticket.objects.get(pk=made.pk)

    return {
        "applicant": applicant,
        "approver": approver,
        "handlers": handlers,
        "leader": leader,
        "group": group,
        "colleague": UserFactory(username="colleague", first_name="Cora", last_name="Lind"),
        "stranger": UserFactory(username="stranger"),
        "outsider": outsider,
        "staff": StaffFactory(username="boss", first_name="Bea"),
        "ticket": ticket,
    }


def reply(ticket, author, content: str = "On it.", *, internal: bool = False):
    return services.ticket_reply(
        ticket_id=ticket.pk,
        author=author,
        reply_type=ReplyType.INTERNAL if internal else ReplyType.PUBLIC,
        content=content,
    )


def inbox(user, template_code: str | None = None):
    messages = Notification.objects.filter(recipient=user)
    if template_code is not None:
        messages = messages.filter(template_code=template_code)
    return messages.order_by("id")


def speaks_chinese(user) -> None:
    Profile.objects.update_or_create(
        user=user, defaults={"language": "zh-hans", "time_zone": "Asia/Shanghai"}
    )
