"""Asking at completion and answering through the API: once, by the applicant only, within
the 14 days; a low rating tells the group's leader in their language."""

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from accounts.models import Profile
from collaboration.models import Watcher
from notifications.models import Notification
from satisfaction.models import Survey
from satisfaction.services import survey_ask
from satisfaction.tokens import read_token
from tests.factories import HandlerGroupFactory, UserFactory
from ticketing.models import Ticket, TicketRecord
from workflow import services as ticket_services

pytestmark = pytest.mark.django_db


def url(ticket) -> str:
    return f"/api/tickets/{ticket.pk}/satisfaction/"


def snapshot(ticket) -> tuple:
    """What a refused answer must leave as it was."""
    survey = Survey.objects.filter(ticket=ticket).values("rating", "comment", "answered").first()
    return (
        survey,
        TicketRecord.objects.filter(ticket_id=ticket.pk, action="rated").count(),
        Notification.objects.filter(template_code="ticket-low-rating").count(),
    )


def test_completion_asks_the_applicant_once_with_a_signed_link(
    completed, applicant, handlers, group, settings
):
    survey = Survey.objects.get(ticket=completed)
    assert survey.applicant_id == applicant.pk
    assert survey.handler_id == handlers[0].pk
    assert survey.handler_group_id == group.pk
    assert survey.expires - survey.asked == timedelta(days=14)
    assert survey.rating is None and survey.answered is None
    notice = Notification.objects.get(template_code="ticket-survey")
    assert notice.recipient_id == applicant.pk
    assert notice.ticket_id == completed.pk
    link = notice.params["link"]
    assert link.startswith(settings.SITE_URL.rstrip("/") + "/survey/")
    assert link in notice.content
    token = link.rsplit("/survey/", 1)[1].rstrip("/")
    assert read_token(token) == (survey.pk, completed.pk)

    # A second completion (after a reopen) asks no second time.
    assert survey_ask(ticket=completed, now=timezone.now()) is None
    assert Survey.objects.filter(ticket=completed).count() == 1
    assert Notification.objects.filter(template_code="ticket-survey").count() == 1


def test_the_applicant_rates_once_and_the_history_says_so(api, completed, applicant):
    response = api.as_user(applicant).post(
        url(completed), {"rating": 4, "comment": "Quick, thanks."}, format="json"
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["rating"] == 4
    assert body["comment"] == "Quick, thanks."
    assert body["ticket_id"] == completed.pk
    assert body["answered"] is not None
    record = TicketRecord.objects.get(ticket_id=completed.pk, action="rated")
    assert record.detail == {"rating": 4}
    assert record.actor_id == applicant.pk

    before = snapshot(completed)
    again = api.as_user(applicant).post(url(completed), {"rating": 1}, format="json")
    assert again.status_code == 409
    assert again.json()["code"] == "conflict"
    assert snapshot(completed) == before


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"rating": 0}, "rating"),
        ({"rating": 6}, "rating"),
        ({"rating": "five"}, "rating"),
        ({"rating": 2.5}, "rating"),
        ({}, "rating"),
        ({"rating": 3, "comment": "x" * 2001}, "comment"),
    ],
)
def test_a_bad_rating_or_comment_is_a_400_naming_it(api, completed, applicant, payload, field):
    before = snapshot(completed)
    response = api.as_user(applicant).post(url(completed), payload, format="json")
    assert response.status_code == 400
    assert field in response.json()["errors"]
    assert snapshot(completed) == before


def test_a_comment_of_2000_characters_is_accepted(api, completed, applicant):
    response = api.as_user(applicant).post(
        url(completed), {"rating": 5, "comment": "y" * 2000}, format="json"
    )
    assert response.status_code == 201
    assert len(Survey.objects.get(ticket=completed).comment) == 2000


def test_only_the_applicant_may_rate(api, completed, handlers, leader, staff, outsider):
    watcher = UserFactory(username="colleague")
    Watcher.objects.create(
        ticket=completed, user=watcher, added_by=watcher, source="self", added=timezone.now()
    )
    before = snapshot(completed)
    for user in (handlers[0], leader, staff, watcher):
        response = api.as_user(user).post(url(completed), {"rating": 5}, format="json")
        assert response.status_code == 403, user.username
    assert api.as_user(outsider).post(url(completed), {"rating": 5}).status_code == 404
    assert snapshot(completed) == before


def test_a_ticket_not_completed_was_not_asked(api, pooled, applicant):
    response = api.as_user(applicant).post(url(pooled), {"rating": 5}, format="json")
    assert response.status_code == 409
    assert not Survey.objects.filter(ticket=pooled).exists()
    assert not TicketRecord.objects.filter(ticket_id=pooled.pk, action="rated").exists()
    assert api.as_user(applicant).get(url(pooled)).status_code == 404


def test_after_14_days_the_survey_is_closed(api, completed, applicant):
    before = snapshot(completed)
    with time_machine.travel(timezone.now() + timedelta(days=14, minutes=1), tick=False):
        response = api.as_user(applicant).post(url(completed), {"rating": 5}, format="json")
    assert response.status_code == 409
    assert "expired" in response.json()["detail"]
    assert snapshot(completed) == before


def test_the_applicant_and_the_team_read_the_rating_others_do_not(
    api, completed, applicant, handlers, leader, staff, approver, outsider
):
    api.as_user(applicant).post(url(completed), {"rating": 2, "comment": "Slow."}, format="json")
    for user in (applicant, handlers[0], handlers[1], leader, staff):
        response = api.as_user(user).get(url(completed))
        assert response.status_code == 200, user.username
        assert response.json()["rating"] == 2
        assert response.json()["comment"] == "Slow."
    watcher = UserFactory(username="colleague")
    Watcher.objects.create(
        ticket=completed, user=watcher, added_by=watcher, source="self", added=timezone.now()
    )
    for user in (approver, watcher, outsider):
        assert api.as_user(user).get(url(completed)).status_code == 404, user.username


def test_the_ticket_carries_its_rating_for_the_team_and_the_applicant_only(
    api, completed, applicant, handlers, approver
):
    ticket_url = f"/api/tickets/{completed.pk}/"
    assert api.as_user(applicant).get(ticket_url).json()["satisfaction"] == {
        "rating": None,
        "comment": "",
        "answered": None,
    }
    api.as_user(applicant).post(url(completed), {"rating": 5, "comment": "Great"}, format="json")
    for user in (applicant, handlers[0]):
        shown = api.as_user(user).get(ticket_url).json()["satisfaction"]
        assert shown["rating"] == 5 and shown["comment"] == "Great" and shown["answered"]
    listed = api.as_user(handlers[0]).get("/api/tickets/").json()["results"]
    assert [t["satisfaction"]["rating"] for t in listed if t["id"] == completed.pk] == [5]
    assert api.as_user(approver).get(ticket_url).json()["satisfaction"] is None


def test_a_low_rating_tells_the_groups_leader_in_their_language(api, completed, applicant, leader):
    Profile.objects.update_or_create(user=leader, defaults={"language": "zh-hans"})
    response = api.as_user(applicant).post(
        url(completed), {"rating": 1, "comment": "Nobody answered for a week."}, format="json"
    )
    assert response.status_code == 201
    alert = Notification.objects.get(template_code="ticket-low-rating")
    assert alert.recipient_id == leader.pk
    assert alert.ticket_id == completed.pk
    assert completed.bill_code in alert.title
    assert "收到低分" in alert.title  # the Chinese wording
    assert "1" in alert.content and "handler0" in alert.content
    assert alert.params["body"] == "Nobody answered for a week."


@pytest.mark.parametrize("rating", [3, 4, 5])
def test_a_good_or_fair_rating_tells_nobody(api, completed, applicant, rating):
    api.as_user(applicant).post(url(completed), {"rating": rating}, format="json")
    assert not Notification.objects.filter(template_code="ticket-low-rating").exists()


def test_a_low_rating_in_a_group_without_a_leader_tells_nobody(
    api, submit, approver, applicant, handlers
):
    leaderless = HandlerGroupFactory(name="night", members=handlers, assign_strategy=0)
    ticket = submit(handler_group_id=leaderless.pk)
    ticket_services.ticket_approve(ticket_id=ticket.pk, approver=approver)
    ticket_services.ticket_accept(ticket_id=ticket.pk, handler=handlers[0])
    ticket_services.ticket_complete(ticket_id=ticket.pk, handler=handlers[0])
    response = api.as_user(applicant).post(url(ticket), {"rating": 2}, format="json")
    assert response.status_code == 201
    assert not Notification.objects.filter(template_code="ticket-low-rating").exists()
    assert Ticket.objects.get(pk=ticket.pk).survey.rating == 2
