"""The people and rows of the custom-fields tests: a support group (two handlers and a
leader) whose category "printer" has its own fields beside one of every category, a handler
of another group, staff, and the applicant's tickets in the support group."""

from datetime import UTC, datetime

from tests.factories import HandlerGroupFactory, StaffFactory, UserFactory
from ticketing.models import Category, FieldType, Ticket, TicketField
from workflow import services

NOW = datetime(2026, 12, 7, 10, 0, tzinfo=UTC)


def make_fields() -> dict:
    """printer's fields (model: text required, copies: number, bought: date, colour: choice,
    trays: multi_choice, owner: user, urgent_box: checkbox) and one of every category
    (asset: text, optional); "network" has only asset."""
    printer = Category.objects.create(name="printer", translations={"zh-hans": "打印机"})
    network = Category.objects.create(name="network", order=1)
    made = {}
    for order, (key, kind, extra) in enumerate(
        [
            ("model", FieldType.TEXT, {"required": True}),
            ("copies", FieldType.NUMBER, {}),
            ("bought", FieldType.DATE, {}),
            ("colour", FieldType.CHOICE, {"choices": ["black", "cyan"]}),
            ("trays", FieldType.MULTI_CHOICE, {"choices": ["a4", "a3", "letter"]}),
            ("owner", FieldType.USER, {}),
            ("urgent_box", FieldType.CHECKBOX, {}),
        ]
    ):
        field = TicketField.objects.create(
            key=key, label=key.title(), type=kind, order=order, **extra
        )
        field.categories.set([printer])
        made[key] = field
    made["asset"] = TicketField.objects.create(
        key="asset",
        label="Asset tag",
        label_translations={"zh-hans": "资产编号"},
        type=FieldType.TEXT,
        order=20,
    )
    return {"printer": printer, "network": network, "fields": made}


def make_cast(applicant, approver) -> dict:
    handlers = [UserFactory(username="handler0"), UserFactory(username="handler1")]
    leader = UserFactory(username="leader")
    group = HandlerGroupFactory(name="support", leader=leader, members=handlers, assign_strategy=0)
    outsider = UserFactory(username="outsider")
    HandlerGroupFactory(name="facilities", members=[outsider], assign_strategy=0)
    rows = make_fields()

    def ticket(*, category: str = "printer", fields: dict | None = None, approve=True) -> Ticket:
        made = services.ticket_submit(
            creator=applicant,
            title="Printer on fire",
            content="It is on fire.",
            priority=3,
            category=category,
            handler_group_id=group.pk,
            fields={"model": "LJ 4000"} if fields is None and category == "printer" else fields,
            now=NOW,
        )
        if approve:
            services.ticket_approve(ticket_id=made.pk, approver=approver, now=NOW)
        return Ticket.objects.get(pk=made.pk)

    return {
        "applicant": applicant,
        "approver": approver,
        "handlers": handlers,
        "leader": leader,
        "group": group,
        "outsider": outsider,
        "staff": StaffFactory(username="staff"),
        "ticket": ticket,
        **rows,
    }
