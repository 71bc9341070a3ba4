"""The ticket page through HTTP: the composer (tabs for the team, none for the applicant), the
history in words (the applicant reads their public story only), the applicant's wording,
promise and Cancel, no empty cards, and one SLA status in the chip and the card."""

import re
from html import unescape
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.models import Profile
from sla import services as sla_services
from tests.factories import HandlerGroupFactory, UserFactory
from ticketing.models import ProcessStatus, ReplyType, Ticket, TicketRecord, TicketReply
from ticketing.transitions import record
from workflow import services

pytestmark = pytest.mark.django_db


def detail(ticket):
    return f"/console/tickets/{ticket.pk}/"


def action(ticket, name):
    return f"/console/tickets/{ticket.pk}/{name}/"


def page(client, ticket) -> str:
    response = client.get(detail(ticket))
    assert response.status_code == 200
    return response.content.decode()


def history(html: str) -> list[str]:
    return [unescape(t) for t in re.findall(r'<span class="record-text">([^<]*)</span>', html)]


def status_chip(html: str) -> str:
    return unescape(re.search(r'data-testid="ticket-status">([^<]*)<', html).group(1))


def api(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


# --- the composer ---------------------------------------------------------------------------


def test_the_team_writes_in_two_tabs_and_the_applicant_has_no_choice(
    as_user, handlers, applicant, pooled
):
    team = page(as_user(handlers[0]), pooled)
    assert 'id="reply-type-public"' in team and 'id="reply-type-internal"' in team
    # The tabs come before the editor; the button says what it does.
    assert team.index('id="reply-type-internal"') < team.index("<textarea")
    assert "Send to customer" in team and "Add internal note" in team
    assert re.search(r'id="reply-type-public" value="1"\s+checked', team)  # public by default

    mine = page(as_user(applicant), pooled)
    assert "reply-type-internal" not in mine and "Internal note" not in mine
    assert 'type="hidden" name="reply_type" value="1"' in mine
    assert "Send reply" in mine and "Send to customer" not in mine


def test_a_note_sent_back_with_errors_keeps_its_tab(as_user, handlers, pooled):
    response = as_user(handlers[0]).post(
        action(pooled, "reply"), {"reply_type": ReplyType.INTERNAL, "content": ""}
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert re.search(r'id="reply-type-internal" value="2"\s+checked', html)
    assert "composer is-internal" in html


def test_an_internal_note_from_the_console_never_reaches_the_applicant(
    as_user, handlers, applicant, pooled
):
    services.ticket_accept(ticket_id=pooled.pk, handler=handlers[0])
    client = as_user(handlers[0])
    note = client.post(
        action(pooled, "reply"), {"reply_type": ReplyType.INTERNAL, "content": "NOTE-4711"}
    )
    assert note.status_code == 302
    client.get(detail(pooled))  # the message is shown once
    public = client.post(
        action(pooled, "reply"), {"reply_type": ReplyType.PUBLIC, "content": "Fixed it."}
    )
    assert public.status_code == 302
    assert TicketReply.objects.get(content="NOTE-4711").reply_type == ReplyType.INTERNAL
    assert "NOTE-4711" in page(client, pooled)

    html = page(as_user(applicant), pooled)
    assert "Fixed it." in html and "NOTE-4711" not in html and "Internal note" not in html
    replies = api(applicant).get(f"/api/tickets/{pooled.pk}/replies/").json()
    assert [r["content"] for r in replies] == ["Fixed it."]
    records = api(applicant).get(f"/api/tickets/{pooled.pk}/records/").json()
    assert "NOTE-4711" not in str(records) and "internal" not in str(records)


# --- history in words -----------------------------------------------------------------------


def test_the_history_reads_in_words_for_the_team_and_publicly_for_the_applicant(
    as_user, applicant, approver, handlers
):
    bob, carol = UserFactory(username="it_bob"), UserFactory(username="it_carol")
    lead = UserFactory(username="lead_it")
    tier1 = HandlerGroupFactory(name="Tier 1", leader=lead, members=[carol, bob], assign_strategy=1)
    tier2 = HandlerGroupFactory(name="Tier 2", members=[handlers[0]], assign_strategy=0)
    ticket = services.ticket_submit(
        creator=applicant, title="VPN", content="down", priority=2, handler_group_id=tier1.pk
    )
    ticket = services.ticket_approve(ticket_id=ticket.pk, approver=approver)
    offered_to = ticket.handler
    now = timezone.now()
    # What background jobs write (the offer timing out, the SLA ladder): through the one writer.
    record(
        ticket_id=ticket.pk,
        action="reclaim",
        actor_id=None,
        now=now,
        detail={"handler_id": offered_to.pk, "reason": "timeout"},
    )
    record(
        ticket_id=ticket.pk,
        action="sla_response_level",
        actor_id=None,
        now=now,
        detail={
            "level": 1,
            "due_at": "2026-01-01T09:00:00+00:00",
            "deadline": "2026-01-01T10:00:00+00:00",
            "recipients": [bob.pk, lead.pk],
        },
    )
    record(
        ticket_id=ticket.pk,
        action="sla_response_timeout",
        actor_id=None,
        now=now,
        detail={"deadline": "2026-01-01T10:00:00+00:00"},
    )
    Ticket.objects.filter(pk=ticket.pk).update(handler=bob)
    services.ticket_decline(ticket_id=ticket.pk, handler=bob, reason="not my area")
    services.ticket_transfer(ticket_id=ticket.pk, user=lead, handler_id=carol.pk)
    services.ticket_accept(ticket_id=ticket.pk, handler=carol)
    services.ticket_reply(
        ticket_id=ticket.pk, author=carol, reply_type=ReplyType.INTERNAL, content="gateway 3"
    )
    services.ticket_reply(
        ticket_id=ticket.pk, author=carol, reply_type=ReplyType.PUBLIC, content="On it"
    )
    services.ticket_escalate_to_group(ticket_id=ticket.pk, group_id=tier2.pk, level=2, now=now)
    services.ticket_accept(ticket_id=ticket.pk, handler=handlers[0])
    services.ticket_complete(ticket_id=ticket.pk, handler=handlers[0])

    team = history(page(as_user(handlers[0]), ticket))
    for line in (
        "Submitted by applicant",
        "Approved by approver",
        f"Round robin chose {offered_to.username}",
        f"Offered to {offered_to.username} — not accepted in",
        "SLA warning sent to it_bob and lead_it (response, level 1)",
        "The response deadline passed without a response",
        "Declined by it_bob: not my area",
        "Transferred to it_carol in Tier 1 by lead_it",
        "Accepted by it_carol",
        "Internal note by it_carol",
        "Reply from it_carol",
        "Moved to Tier 2 by the SLA escalation (level 2)",
        "Accepted by handler0",
        "Completed by handler0",
    ):
        assert any(shown.startswith(line) for shown in team), (line, team)
    assert not any(re.search(r"\bid\b|: \d", shown) for shown in team), team

    public = history(page(as_user(applicant), ticket))
    assert public == ["Submitted by applicant", "Approved", "Reply from it_carol", "Completed"]


def test_a_round_robin_pick_says_who_came_before(as_user, approver, submit):
    """The first pick of a group has nobody before it; each later one names the member whose
    turn it last was, as the decision recorded it (members' last_turn, the record's after_id)."""
    from routing.models import RoutingDecision

    alice, bob = UserFactory(username="it_alice"), UserFactory(username="it_bob")
    rotation = HandlerGroupFactory(name="rotation", members=[alice, bob], assign_strategy=1)
    tickets = []
    for _ in range(3):
        ticket = submit(handler_group_id=rotation.pk)
        tickets.append(services.ticket_approve(ticket_id=ticket.pk, approver=approver))
    assert [t.handler_id for t in tickets] == [alice.pk, bob.pk, alice.pk]

    def assign_line(ticket, user) -> str:
        return next(line for line in history(page(as_user(user), ticket)) if "chose" in line)

    assert assign_line(tickets[0], alice) == "Round robin chose it_alice"
    assert assign_line(tickets[1], bob) == "Round robin chose it_bob (next after it_alice)"
    assert assign_line(tickets[2], alice) == "Round robin chose it_alice (next after it_bob)"
    decision = RoutingDecision.objects.get(ticket=tickets[1])
    assert [m.get("last_turn", False) for m in decision.members] == [True, False]
    assert TicketRecord.objects.get(ticket=tickets[1], action="assign").detail["after_id"] == (
        alice.pk
    )
    Profile.objects.create(user=bob, language="zh-hans")
    chinese = history(page(as_user(bob), tickets[1]))
    assert "轮询：分配给 it_bob（接在 it_alice 之后）" in chinese


# --- the applicant's pages ------------------------------------------------------------------


def list_statuses(html: str) -> list[str]:
    """The Status cells of the ticket list, in order, as text."""
    cells = re.findall(r'<td data-label="([^"]*)"[^>]*>\s*([^<]*?)\s*</td>', html)
    return [unescape(text) for label, text in cells if label in ("Status", "状态")]


def my_tickets(client) -> str:
    response = client.get("/console/my-tickets/")
    assert response.status_code == 200
    return response.content.decode()


@pytest.fixture
def three_tickets(submit, group, approver):
    """Newest first in the list: in the pool (pending assign), rejected, waiting for approval."""
    waiting = submit(handler_group_id=group.pk, title="Waiting")
    rejected = submit(handler_group_id=group.pk, title="Rejected one")
    services.ticket_reject(ticket_id=rejected.pk, approver=approver, reason="dup")
    pooled = submit(handler_group_id=group.pk, title="Pooled")
    services.ticket_approve(ticket_id=pooled.pk, approver=approver)
    return waiting, rejected, pooled


def test_the_applicants_list_reads_their_words_without_the_sla_column(
    as_user, applicant, three_tickets
):
    html = my_tickets(as_user(applicant))
    assert list_statuses(html) == ["We're on it", "Rejected", "Waiting for approval"]
    # The apostrophe reaches the page as it is: it is text, not an attribute.
    assert "We're on it" in html and "We&#x27;re" not in html
    assert ">SLA</th>" not in html and 'data-label="SLA"' not in html
    assert "sla-badge" not in html
    for code_word in ("pending assign", "approving", "rejected<"):
        assert code_word not in html


def test_the_applicants_list_in_chinese(as_user, applicant, three_tickets):
    Profile.objects.create(user=applicant, language="zh-hans")
    html = my_tickets(as_user(applicant))
    assert list_statuses(html) == ["处理中", "已驳回", "待审批"]
    assert ">SLA</th>" not in html and "sla-badge" not in html
    assert "待分配" not in html and "审批中" not in html


def test_a_handler_listing_a_ticket_of_their_own_group_sees_its_status_and_sla(
    as_user, handlers, group, approver, submit
):
    ticket = submit(creator=handlers[0], handler_group_id=group.pk)
    services.ticket_approve(ticket_id=ticket.pk, approver=approver)
    html = my_tickets(as_user(handlers[0]))
    assert list_statuses(html) == ["pending assign"]
    assert ">SLA</th>" in html and "sla-badge" in html


def test_the_applicant_reads_customer_words_for_every_status(
    as_user, applicant, approver, handlers, submit, group
):
    client = as_user(applicant)
    waiting = submit(handler_group_id=group.pk)
    assert status_chip(page(client, waiting)) == "Waiting for approval"
    rejected = submit(handler_group_id=group.pk)
    services.ticket_reject(ticket_id=rejected.pk, approver=approver, reason="dup")
    assert status_chip(page(client, rejected)) == "Rejected"
    cancelled = submit(handler_group_id=group.pk)
    services.ticket_cancel(ticket_id=cancelled.pk, user=applicant)
    assert status_chip(page(client, cancelled)) == "Cancelled"

    ticket = services.ticket_approve(ticket_id=waiting.pk, approver=approver)
    assert status_chip(page(client, ticket)) == "We're on it"
    services.ticket_accept(ticket_id=ticket.pk, handler=handlers[0])
    sla_services.sla_pause(ticket_id=ticket.pk, user=handlers[0])
    assert status_chip(page(client, ticket)) == "Waiting for your reply"
    sla_services.sla_resume(ticket_id=ticket.pk, user=handlers[0])
    services.ticket_complete(ticket_id=ticket.pk, handler=handlers[0])
    assert status_chip(page(client, ticket)) == "Resolved"
    services.ticket_close(ticket_id=ticket.pk, user=applicant)
    html = page(client, ticket)
    assert status_chip(html) == "Closed"
    assert "pending" not in html.lower() and "approving" not in html


def test_the_applicant_is_told_when_we_reply_in_their_zone(as_user, applicant, handlers, pooled):
    Profile.objects.create(user=applicant, time_zone="Asia/Shanghai")
    shanghai = ZoneInfo("Asia/Shanghai")
    html = page(as_user(applicant), pooled)
    due = pooled.response_deadline.astimezone(shanghai)
    assert f"We'll reply by {due:%Y-%m-%d %H:%M} CST" in html
    # No SLA rule, no clocks, no business-time figures: the promise in words.
    assert "Response by" not in html and "Rule" not in html and "sla-badge" not in html
    # Once answered, the promise is the resolve deadline.
    services.ticket_accept(ticket_id=pooled.pk, handler=handlers[0])
    pooled.refresh_from_db()
    due = pooled.resolve_deadline.astimezone(shanghai)
    assert f"We'll reply by {due:%Y-%m-%d %H:%M} CST" in page(as_user(applicant), pooled)


def test_the_applicant_cancels_before_approval(as_user, applicant, submit, group):
    ticket = submit(handler_group_id=group.pk)
    client = as_user(applicant)
    html = page(client, ticket)
    assert f'action="{action(ticket, "cancel")}"' in html and "Cancel ticket" in html
    response = client.post(action(ticket, "cancel"))
    assert response.status_code == 302 and response["Location"] == detail(ticket)
    ticket.refresh_from_db()
    assert ticket.process_status == ProcessStatus.CANCELLED
    html = page(client, ticket)
    assert "is cancelled." in html and status_chip(html) == "Cancelled"
    assert "Cancelled by applicant" in history(html)
    assert 'data-testid="actions-card"' not in html  # nothing left to do: no empty card


def test_cancel_after_approval_is_refused_and_changes_nothing(as_user, applicant, pooled):
    before = Ticket.objects.values().get(pk=pooled.pk)
    records = TicketRecord.objects.filter(ticket=pooled).count()
    client = as_user(applicant)
    assert "Cancel ticket" not in page(client, pooled)
    response = client.post(action(pooled, "cancel"))
    assert response.status_code == 409
    assert "Cannot cancel this ticket" in response.content.decode()
    assert Ticket.objects.values().get(pk=pooled.pk) == before
    assert TicketRecord.objects.filter(ticket=pooled).count() == records


def test_only_the_applicant_may_cancel(as_user, approver, submit, group):
    ticket = submit(handler_group_id=group.pk)
    response = as_user(approver).post(action(ticket, "cancel"))
    assert response.status_code == 403
    assert "Only the applicant may cancel" in response.content.decode()
    ticket.refresh_from_db()
    assert ticket.process_status == ProcessStatus.APPROVING


def test_the_back_link_goes_home_by_role(as_user, applicant, handlers, pooled):
    assert "← My tickets" in page(as_user(applicant), pooled)
    team = page(as_user(handlers[0]), pooled)
    assert "← My work" in team and "← Pool" not in team


def test_no_empty_actions_card(as_user, approver, handlers, pooled):
    # An approver reading an approved ticket may do nothing on it: no Actions card at all.
    html = page(as_user(approver), pooled)
    assert 'data-testid="actions-card"' not in html and ">Actions<" not in html
    assert 'data-testid="actions-card"' in page(as_user(handlers[0]), pooled)


def test_error_pages_lead_back_home(as_user, handlers):
    response = as_user(handlers[0]).get("/console/tickets/999999/")
    assert response.status_code == 404
    html = response.content.decode()
    assert "Back to your home" in html and "Back to the pool" not in html


# --- one SLA status -------------------------------------------------------------------------


def test_chip_and_card_agree_after_completion(as_user, handlers, pooled):
    services.ticket_accept(ticket_id=pooled.pk, handler=handlers[0])
    services.ticket_complete(ticket_id=pooled.pk, handler=handlers[0])
    html = page(as_user(handlers[0]), pooled)
    chip = re.search(r'<p class="chips">.*?</p>', html, re.S).group(0)
    assert "SLA met" in chip and "no SLA" not in chip
    outcome = re.search(r'data-testid="sla-outcome">(.*?)</dd>', html, re.S).group(1)
    assert outcome.count(">met<") == 2 and "breached" not in outcome


def test_a_breached_outcome_shows_in_the_chip_too(as_user, handlers, pooled):
    services.ticket_accept(ticket_id=pooled.pk, handler=handlers[0])
    later = pooled.resolve_deadline + (pooled.resolve_deadline - pooled.submitted_time)
    services.ticket_complete(ticket_id=pooled.pk, handler=handlers[0], now=later)
    html = page(as_user(handlers[0]), pooled)
    chip = re.search(r'<p class="chips">.*?</p>', html, re.S).group(0)
    assert "SLA breached" in chip
    outcome = re.search(r'data-testid="sla-outcome">(.*?)</dd>', html, re.S).group(1)
    assert ">breached<" in outcome
