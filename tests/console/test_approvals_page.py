"""The approvers' queue through HTTP: a preview of each ticket's content, Approve and Reject in
the row, bulk approve of selected rows, and back to the queue with the next ticket ready."""

from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

import pytest
from django.utils import timezone

from accounts.models import Profile
from notifications.models import Notification
from tests.factories import ApproverFactory
from ticketing.models import ProcessStatus, Ticket, TicketRecord
from workflow import services

pytestmark = pytest.mark.django_db

QUEUE = "/console/approvals/"
BULK = "/console/approvals/bulk/"


def action(ticket, name):
    return f"/console/tickets/{ticket.pk}/{name}/"


def text(response) -> str:
    return response.content.decode()


def messages_of(response) -> list[str]:
    return [str(m) for m in response.context["messages"]]


@pytest.fixture
def waiting(submit, group):
    """Three tickets awaiting approval, submitted a minute apart (the queue's order)."""
    start = timezone.now() - timedelta(hours=1)
    return [
        submit(
            handler_group_id=group.pk,
            title=f"Request {i}",
            content=f"Details of request {i}.",
            now=start + timedelta(minutes=i),
        )
        for i in range(3)
    ]


def statuses(tickets) -> list[int]:
    return [Ticket.objects.get(pk=t.pk).process_status for t in tickets]


def snapshot():
    return (
        list(Ticket.objects.order_by("pk").values_list()),
        TicketRecord.objects.count(),
        Notification.objects.count(),
    )


# --- the list -------------------------------------------------------------------------------


def test_the_queue_shows_an_escaped_truncated_preview_of_each_ticket(as_user, approver, submit):
    long = "<script>alert(1)</script> " + "word " * 60
    ticket = submit(title="Laptop", content=long)
    body = text(as_user(approver).get(QUEUE))
    assert ticket.bill_code in body
    assert "<script>alert(1)</script>" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert "word " * 20 in body and "word " * 60 not in body and "…" in body


def test_the_queue_has_no_handler_or_sla_column_and_offers_actions_per_row(
    as_user, approver, waiting
):
    response = as_user(approver).get(QUEUE)
    body = text(response)
    assert response.status_code == 200
    for column in ("Applicant", "Priority", "Category", "Submitted"):
        assert f">{column}</th>" in body
    assert ">Handler</th>" not in body and ">SLA</th>" not in body and "no SLA" not in body
    for ticket in waiting:
        assert f'action="{action(ticket, "approve")}"' in body
        assert f'action="{action(ticket, "reject")}"' in body
        assert f'aria-label="Approve {ticket.bill_code}"' in body
        assert f'value="{ticket.pk}" form="bulk-approve"' in body
        assert f"Select {ticket.bill_code} {ticket.title}" in body
    assert 'id="bulk-approve"' in body and 'action="/console/approvals/bulk/"' in body
    assert 'name="reason" rows="2" maxlength="2000" required' in body


def test_times_in_the_queue_are_in_the_viewers_zone(as_user, approver, submit):
    Profile.objects.create(user=approver, time_zone="Asia/Shanghai")
    submit(now=datetime(2026, 3, 2, 9, 30, tzinfo=UTC))
    body = text(as_user(approver).get(QUEUE))
    assert "2026-03-02 17:30 CST" in body and "09:30" not in body


# --- approve / reject in the row -------------------------------------------------------------


def test_approving_in_the_row_goes_back_to_the_queue_with_the_next_ticket_ready(
    as_user, approver, waiting
):
    first, second, third = waiting
    client = as_user(approver)
    response = client.post(action(first, "approve"))
    assert response.status_code == 302
    assert response["Location"] == f"{QUEUE}?focus={second.pk}#ticket-{second.pk}"
    assert statuses(waiting) == [
        ProcessStatus.APPROVED,
        ProcessStatus.APPROVING,
        ProcessStatus.APPROVING,
    ]

    location = urlsplit(response["Location"])
    page = client.get(f"{location.path}?{location.query}")
    body = text(page)
    [message] = messages_of(page)
    assert f"{first.bill_code} is approved and routed." in message
    assert f"Next: {second.bill_code} {second.title}." in message
    assert f'id="ticket-{second.pk}" data-ticket-id="{second.pk}" class="is-next"' in body
    assert "Next up:" in body and first.bill_code not in body.split("<table")[1]


def test_acting_on_the_last_ticket_in_order_offers_the_oldest_still_waiting(
    as_user, approver, waiting
):
    first, _, third = waiting
    response = as_user(approver).post(action(third, "approve"))
    assert response["Location"] == f"{QUEUE}?focus={first.pk}#ticket-{first.pk}"


def test_approving_the_only_ticket_says_the_queue_is_empty(as_user, approver, submit):
    ticket = submit()
    client = as_user(approver)
    response = client.post(action(ticket, "approve"), follow=True)
    assert response.redirect_chain == [(QUEUE, 302)]
    assert "Nothing else is waiting for approval." in messages_of(response)[0]
    assert "Nothing waiting for approval." in text(response)


def test_approving_from_the_ticket_page_also_returns_to_the_queue(as_user, approver, waiting):
    first, second, _ = waiting
    client = as_user(approver)
    assert f'action="{action(second, "approve")}"' in text(
        client.get(f"/console/tickets/{second.pk}/")
    )
    response = client.post(action(second, "approve"))
    assert response["Location"].startswith(f"{QUEUE}?focus=")


def test_rejecting_in_the_row_with_a_reason(as_user, approver, applicant, waiting):
    first, second, _ = waiting
    response = as_user(approver).post(action(first, "reject"), {"reason": "Duplicate of TK9"})
    assert response.status_code == 302
    assert response["Location"] == f"{QUEUE}?focus={second.pk}#ticket-{second.pk}"
    assert statuses(waiting) == [
        ProcessStatus.REJECTED,
        ProcessStatus.APPROVING,
        ProcessStatus.APPROVING,
    ]
    record = TicketRecord.objects.get(ticket=first, action="reject")
    assert record.detail["reason"] == "Duplicate of TK9"


def test_rejecting_without_a_reason_is_refused_and_changes_nothing(as_user, approver, waiting):
    before = snapshot()
    response = as_user(approver).post(action(waiting[0], "reject"), {"reason": "  "})
    assert response.status_code == 400
    assert "Give a reason for the rejection." in text(response)
    assert snapshot() == before


def test_approving_a_ticket_someone_else_approved_is_a_conflict_on_its_page(
    as_user, approver, waiting
):
    services.ticket_approve(ticket_id=waiting[0].pk, approver=ApproverFactory())
    response = as_user(approver).post(action(waiting[0], "approve"))
    assert response.status_code == 409 and "Cannot approve" in text(response)


# --- bulk approve ---------------------------------------------------------------------------


def test_bulk_approve_reports_the_one_that_someone_else_approved(as_user, approver, submit, group):
    start = timezone.now() - timedelta(hours=1)
    tickets = [
        submit(handler_group_id=group.pk, title=f"T{i}", now=start + timedelta(minutes=i))
        for i in range(4)
    ]
    selected, untouched = tickets[:3], tickets[3]
    services.ticket_approve(ticket_id=selected[1].pk, approver=ApproverFactory(username="other"))
    records_before = TicketRecord.objects.filter(ticket=untouched).count()
    already = Ticket.objects.values_list().get(pk=selected[1].pk)

    client = as_user(approver)
    response = client.post(BULK, {"ticket": [t.pk for t in selected]})
    assert response.status_code == 302
    assert response["Location"] == f"{QUEUE}?focus={untouched.pk}#ticket-{untouched.pk}"
    assert statuses(selected) == [ProcessStatus.APPROVED] * 3
    approvers = {
        t.pk: TicketRecord.objects.get(ticket=t, action="approve").actor_id for t in selected
    }
    assert approvers[selected[0].pk] == approvers[selected[2].pk] == approver.pk
    assert approvers[selected[1].pk] != approver.pk
    # The one approved by someone else and the one not selected are as they were.
    assert Ticket.objects.values_list().get(pk=selected[1].pk) == already
    assert Ticket.objects.get(pk=untouched.pk).process_status == ProcessStatus.APPROVING
    assert TicketRecord.objects.filter(ticket=untouched).count() == records_before

    page = client.get(QUEUE)
    [message] = messages_of(page)
    assert message == (
        f"Approved 2. 1 could not be approved: {selected[1].bill_code} (already approved)."
    )
    assert selected[0].bill_code not in message and selected[2].bill_code not in message


def test_bulk_approve_of_all_selected_says_so(as_user, approver, waiting):
    response = as_user(approver).post(BULK, {"ticket": [t.pk for t in waiting]}, follow=True)
    assert messages_of(response) == ["Approved 3."]
    assert statuses(waiting) == [ProcessStatus.APPROVED] * 3
    assert "Nothing waiting for approval." in text(response)


def test_bulk_approve_names_tickets_that_do_not_exist(as_user, approver, waiting):
    response = as_user(approver).post(BULK, {"ticket": [waiting[0].pk, 999999]}, follow=True)
    assert messages_of(response) == ["Approved 1. 1 could not be approved: #999999 (not found)."]


@pytest.mark.parametrize(
    "ids",
    [[], ["abc"], ["1; DROP TABLE"], ["-3"], ["0"], [str(n) for n in range(1, 102)]],
    ids=["none", "letters", "injection", "negative", "zero", "over-the-limit"],
)
def test_a_bad_list_of_ids_is_a_400_and_changes_nothing(as_user, approver, waiting, ids):
    before = snapshot()
    response = as_user(approver).post(BULK, {"ticket": ids})
    assert response.status_code == 400
    assert snapshot() == before
    assert "Awaiting approval" in text(response)


def test_non_approvers_may_not_approve_in_bulk_or_one_by_one(as_user, applicant, handlers, waiting):
    before = snapshot()
    ids = {"ticket": [t.pk for t in waiting]}
    owner = as_user(applicant)  # sees their own tickets, may not approve them
    assert owner.get(QUEUE).status_code == 403
    assert owner.post(BULK, ids).status_code == 403
    assert owner.post(action(waiting[0], "approve")).status_code == 403
    assert owner.post(action(waiting[0], "reject"), {"reason": "no"}).status_code == 403
    member = as_user(handlers[0])  # may not even see tickets awaiting approval
    assert member.get(QUEUE).status_code == 403
    assert member.post(BULK, ids).status_code == 403
    assert member.post(action(waiting[0], "approve")).status_code == 404
    assert snapshot() == before


def test_bulk_approve_requires_login_and_post(client, as_user, approver, waiting):
    response = client.post(BULK, {"ticket": [waiting[0].pk]})
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    assert as_user(approver).get(BULK).status_code == 405
    assert statuses(waiting) == [ProcessStatus.APPROVING] * 3
