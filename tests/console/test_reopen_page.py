"""The ticket page's Reopen button: shown to the applicant within REOPEN_DAYS of the completion
and to the team at any time, never on an open or closed ticket; the POST reopens, and a
refused one changes nothing."""

from datetime import timedelta
from html import unescape

import pytest
from django.utils import timezone

from ticketing.models import Ticket, TicketRecord, TicketStatus
from workflow import services

pytestmark = pytest.mark.django_db

BUTTON = 'data-testid="reopen-button"'


def detail(ticket):
    return f"/console/tickets/{ticket.pk}/"


def reopen(ticket):
    return f"/console/tickets/{ticket.pk}/reopen/"


def page(client, ticket) -> str:
    response = client.get(detail(ticket))
    assert response.status_code == 200
    return unescape(response.content.decode())


@pytest.fixture
def completed(pooled, handlers):
    """completed(days_ago) → the pool's ticket, accepted and completed that long ago."""

    def make(days_ago=0):
        at = timezone.now() - timedelta(days=days_ago)
        services.ticket_accept(ticket_id=pooled.pk, handler=handlers[0], now=at)
        return services.ticket_complete(ticket_id=pooled.pk, handler=handlers[0], now=at)

    return make


def unchanged(ticket):
    return (
        Ticket.objects.values().get(pk=ticket.pk),
        TicketRecord.objects.filter(ticket=ticket).count(),
    )


def test_the_applicant_reopens_from_the_page_within_the_window(as_user, applicant, completed):
    ticket = completed(days_ago=13)
    client = as_user(applicant)
    html = page(client, ticket)
    assert BUTTON in html and f'action="{reopen(ticket)}"' in html

    response = client.post(reopen(ticket))

    assert response.status_code == 302 and response["Location"] == detail(ticket)
    ticket.refresh_from_db()
    assert ticket.ticket_status == TicketStatus.PROCESSING
    html = page(client, ticket)
    assert f"{ticket.bill_code} is reopened" in html
    assert BUTTON not in html  # open again: nothing to reopen


def test_after_the_window_the_applicant_has_no_button_and_a_post_changes_nothing(
    as_user, applicant, completed
):
    ticket = completed(days_ago=15)
    client = as_user(applicant)
    assert BUTTON not in page(client, ticket)
    before = unchanged(ticket)

    response = client.post(reopen(ticket))

    assert response.status_code == 403
    assert "within 14 days" in unescape(response.content.decode())
    assert unchanged(ticket) == before


def test_the_team_has_the_button_at_any_time(as_user, handlers, leader, completed):
    ticket = completed(days_ago=60)
    assert BUTTON in page(as_user(leader), ticket)
    assert BUTTON in page(as_user(handlers[1]), ticket)
    response = as_user(handlers[0]).post(reopen(ticket))
    assert response.status_code == 302
    ticket.refresh_from_db()
    assert ticket.ticket_status == TicketStatus.PROCESSING
    assert ticket.handler_id == handlers[0].pk


def test_no_button_on_an_open_or_closed_ticket_and_a_post_is_a_409(
    as_user, applicant, handlers, pooled, completed
):
    services.ticket_accept(ticket_id=pooled.pk, handler=handlers[0])
    assert BUTTON not in page(as_user(handlers[0]), pooled)
    before = unchanged(pooled)
    response = as_user(handlers[0]).post(reopen(pooled))
    assert response.status_code == 409
    assert "Cannot reopen this ticket" in unescape(response.content.decode())
    assert unchanged(pooled) == before

    services.ticket_complete(ticket_id=pooled.pk, handler=handlers[0])
    services.ticket_close(ticket_id=pooled.pk, user=applicant)
    for user in (applicant, handlers[0]):
        assert BUTTON not in page(as_user(user), pooled)
    before = unchanged(pooled)
    assert as_user(applicant).post(reopen(pooled)).status_code == 409
    assert unchanged(pooled) == before


def test_the_approver_reading_it_has_no_button_and_may_not(as_user, approver, completed):
    ticket = completed()
    assert BUTTON not in page(as_user(approver), ticket)
    before = unchanged(ticket)
    assert as_user(approver).post(reopen(ticket)).status_code == 403
    assert unchanged(ticket) == before


def test_a_get_is_not_allowed(as_user, applicant, completed):
    ticket = completed()
    assert as_user(applicant).get(reopen(ticket)).status_code == 405
    ticket.refresh_from_db()
    assert ticket.ticket_status == TicketStatus.COMPLETED
