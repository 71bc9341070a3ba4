"""The survey page: the link from the message answers the survey without signing in, for
its own ticket only; anything else learns nothing about any ticket."""

from datetime import timedelta

import pytest
import time_machine
from django.core import signing
from django.test import Client
from django.utils import timezone

from accounts.models import Profile
from notifications.models import Notification
from satisfaction.models import Survey
from satisfaction.tokens import SALT, make_token
from ticketing.models import TicketRecord

pytestmark = pytest.mark.django_db


def link_path(ticket) -> str:
    notice = Notification.objects.get(template_code="ticket-survey", ticket_id=ticket.pk)
    return "/survey/" + notice.params["link"].split("/survey/", 1)[1]


def state(ticket) -> tuple:
    survey = Survey.objects.filter(ticket=ticket).values("rating", "comment", "answered").first()
    return survey, TicketRecord.objects.filter(ticket_id=ticket.pk, action="rated").count()


def assert_tells_nothing(response, *tickets) -> None:
    body = response.content.decode()
    for ticket in tickets:
        assert ticket.bill_code not in body
        assert ticket.title not in body
    assert 'name="rating"' not in body


def test_the_link_shows_the_ticket_and_five_choices_signed_out(completed):
    response = Client().get(link_path(completed))
    assert response.status_code == 200
    body = response.content.decode()
    assert completed.bill_code in body and completed.title in body
    assert body.count('name="rating"') == 5
    assert 'name="comment"' in body
    assert 'name="csrfmiddlewaretoken"' in body


def test_answering_on_the_page_needs_its_csrf_token_and_thanks_once(completed, applicant):
    browser = Client(enforce_csrf_checks=True)
    path = link_path(completed)
    browser.get(path)
    refused = browser.post(path, {"rating": "4", "comment": "Fine."})
    assert refused.status_code == 403
    assert state(completed)[0]["rating"] is None

    csrf = browser.cookies["csrftoken"].value
    response = browser.post(path, {"rating": "4", "comment": "Fine.", "csrfmiddlewaretoken": csrf})
    assert response.status_code == 302
    survey = Survey.objects.get(ticket=completed)
    assert (survey.rating, survey.comment) == (4, "Fine.")
    record = TicketRecord.objects.get(ticket_id=completed.pk, action="rated")
    assert record.actor_id == applicant.pk

    thanks = browser.get(path)
    assert thanks.status_code == 200
    assert thanks.context["state"] == "thanks"
    assert "4 of 5" in thanks.content.decode()

    before = state(completed)
    twice = browser.post(path, {"rating": "1", "csrfmiddlewaretoken": csrf})
    assert twice.status_code == 409
    assert twice.context["state"] == "answered"
    assert state(completed) == before


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"rating": "9"}, "rating"),
        ({}, "rating"),
        ({"rating": "3", "comment": "z" * 2001}, "comment"),
    ],
)
def test_a_bad_answer_on_the_page_is_a_400_by_the_field(completed, data, field):
    before = state(completed)
    response = Client().post(link_path(completed), data)
    assert response.status_code == 400
    assert field in response.context["form"].errors
    assert f'data-field="{field}"' in response.content.decode()
    assert state(completed) == before


def test_a_forged_or_altered_link_is_a_404_that_names_no_ticket(completed):
    path = link_path(completed)
    token = path.split("/")[2]
    survey = Survey.objects.get(ticket=completed)
    forged = [
        "not-a-token",
        token[:-2] + ("AA" if not token.endswith("AA") else "BB"),  # the signature altered
        signing.dumps({"s": survey.pk, "t": completed.pk}, salt="another.salt"),
        signing.dumps({"s": survey.pk, "t": completed.pk}, salt=SALT, key="not-our-key"),
        signing.dumps([survey.pk, completed.pk], salt=SALT),
    ]
    before = state(completed)
    for bad in forged:
        for method in ("get", "post"):
            response = getattr(Client(), method)(f"/survey/{bad}/", {"rating": "5"})
            assert response.status_code == 404, (bad, method)
            assert_tells_nothing(response, completed)
    assert state(completed) == before


def test_a_genuine_token_opens_only_its_own_ticket(complete, submit):
    first, second = complete(title="First"), complete(title="Second")
    survey = Survey.objects.get(ticket=first)
    # Signed by us, but naming the other ticket: not the survey's.
    crossed = make_token(survey_id=survey.pk, ticket_id=second.pk)
    before = state(first), state(second)
    for method in ("get", "post"):
        response = getattr(Client(), method)(f"/survey/{crossed}/", {"rating": "5"})
        assert response.status_code == 404
        assert_tells_nothing(response, first, second)
    assert (state(first), state(second)) == before
    own = Client().get(link_path(second))
    assert second.bill_code in own.content.decode()
    assert first.bill_code not in own.content.decode()


def test_an_expired_link_is_a_410_that_names_no_ticket(completed):
    path = link_path(completed)
    before = state(completed)
    with time_machine.travel(timezone.now() + timedelta(days=14, minutes=1), tick=False):
        for method in ("get", "post"):
            response = getattr(Client(), method)(path, {"rating": "5"})
            assert response.status_code == 410
            assert response.context["state"] == "expired"
            assert_tells_nothing(response, completed)
    assert state(completed) == before


def test_a_fresh_link_to_an_expired_survey_is_a_410(completed):
    Survey.objects.filter(ticket=completed).update(expires=timezone.now() - timedelta(seconds=1))
    response = Client().get(link_path(completed))
    assert response.status_code == 410
    assert_tells_nothing(response, completed)


def test_the_page_speaks_the_applicants_language_unless_the_browser_chose(completed, applicant):
    Profile.objects.update_or_create(user=applicant, defaults={"language": "zh-hans"})
    path = link_path(completed)
    assert '<html lang="zh-hans">' in Client().get(path).content.decode()
    chosen = Client()
    chosen.cookies["django_language"] = "en"
    assert '<html lang="en">' in chosen.get(path).content.decode()


def test_the_page_follows_accept_language_for_an_applicant_who_never_chose(completed):
    response = Client().get(link_path(completed), HTTP_ACCEPT_LANGUAGE="zh-Hans,zh;q=0.9")
    assert '<html lang="zh-hans">' in response.content.decode()
