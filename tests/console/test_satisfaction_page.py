"""The ticket page's satisfaction card: the team reads the rating, the applicant rates there
(signed in, the same service as the API and the link); the dashboards show CSAT beside SLA
compliance."""

from datetime import timedelta
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone

from accounts.models import Profile
from collaboration.models import Watcher
from satisfaction.models import Survey
from tests.factories import UserFactory
from ticketing.models import TicketRecord
from workflow import services as ticket_services

pytestmark = pytest.mark.django_db


@pytest.fixture
def completed(submit, group, approver, handlers):
    ticket = submit(handler_group_id=group.pk)
    ticket_services.ticket_approve(ticket_id=ticket.pk, approver=approver)
    ticket_services.ticket_accept(ticket_id=ticket.pk, handler=handlers[0])
    return ticket_services.ticket_complete(ticket_id=ticket.pk, handler=handlers[0])


def page(client, ticket):
    return client.get(f"/console/tickets/{ticket.pk}/")


def rate(client, ticket, **data):
    return client.post(f"/console/tickets/{ticket.pk}/rate/", data)


def state(ticket) -> tuple:
    survey = Survey.objects.filter(ticket=ticket).values("rating", "comment").first()
    return survey, TicketRecord.objects.filter(ticket_id=ticket.pk, action="rated").count()


def test_the_applicant_rates_on_the_ticket_page_once(as_user, completed, applicant):
    client = as_user(applicant)
    shown = page(client, completed).content.decode()
    assert 'data-testid="satisfaction-card"' in shown
    assert shown.count('name="rating"') == 5
    assert f'action="/console/tickets/{completed.pk}/rate/"' in shown

    response = rate(client, completed, rating="2", comment="Slow but done.")
    assert response.status_code == 302
    assert response["Location"].endswith(f"/console/tickets/{completed.pk}/#satisfaction")
    assert state(completed) == ({"rating": 2, "comment": "Slow but done."}, 1)
    after = page(client, completed).content.decode()
    assert 'name="rating"' not in after
    assert "2 of 5" in after and "Slow but done." in after

    twice = rate(client, completed, rating="5")
    assert twice.status_code == 409
    assert state(completed) == ({"rating": 2, "comment": "Slow but done."}, 1)


def test_a_bad_rating_on_the_page_is_a_400_with_the_form_kept(as_user, completed, applicant):
    client = as_user(applicant)
    response = rate(client, completed, comment="x" * 2001)
    assert response.status_code == 400
    body = response.content.decode()
    assert 'data-field="rating"' in body
    assert state(completed) == ({"rating": None, "comment": ""}, 0)


def test_the_team_reads_the_rating_in_their_zone(as_user, completed, applicant, handlers, leader):
    answered = timezone.now().replace(microsecond=0)
    Survey.objects.filter(ticket=completed).update(
        rating=5, comment="Thank you!", answered=answered
    )
    Profile.objects.update_or_create(user=leader, defaults={"time_zone": "Asia/Shanghai"})
    body = page(as_user(leader), completed).content.decode()
    assert 'data-testid="satisfaction-rating"' in body
    assert "5 of 5" in body and "Thank you!" in body
    local = timezone.localtime(answered, timezone=ZoneInfo("Asia/Shanghai"))
    assert local.strftime("%Y-%m-%d %H:%M") + " CST" in body
    assert 'name="rating"' not in body
    # The handler sees it too, and may not rate.
    client = as_user(handlers[0])
    assert "5 of 5" in page(client, completed).content.decode()


def test_the_team_sees_an_unanswered_survey_and_may_not_answer_it(as_user, completed, handlers):
    client = as_user(handlers[0])
    body = page(client, completed).content.decode()
    assert 'data-testid="satisfaction-waiting"' in body
    assert 'name="rating"' not in body
    assert rate(client, completed, rating="5").status_code == 403
    assert state(completed) == ({"rating": None, "comment": ""}, 0)


def test_watchers_and_approvers_see_no_card(as_user, completed, approver):
    watcher = UserFactory(username="colleague")
    Watcher.objects.create(
        ticket=completed, user=watcher, added_by=watcher, source="self", added=timezone.now()
    )
    for user in (watcher, approver):
        body = page(as_user(user), completed).content.decode()
        assert 'data-testid="satisfaction-card"' not in body, user.username


def test_no_card_before_completion_and_rating_it_is_a_409(as_user, pooled, applicant):
    client = as_user(applicant)
    assert 'data-testid="satisfaction-card"' not in page(client, pooled).content.decode()
    assert rate(client, pooled, rating="5").status_code == 409
    assert not Survey.objects.filter(ticket=pooled).exists()


def test_an_expired_survey_offers_no_form(as_user, completed, applicant):
    Survey.objects.filter(ticket=completed).update(expires=timezone.now() - timedelta(hours=1))
    client = as_user(applicant)
    body = page(client, completed).content.decode()
    assert 'data-testid="satisfaction-expired"' in body
    assert 'name="rating"' not in body
    assert rate(client, completed, rating="4").status_code == 409
    assert state(completed) == ({"rating": None, "comment": ""}, 0)


def test_the_dashboards_show_csat_beside_sla_compliance(as_user, complete_three, leader, group):
    client = as_user(leader)
    page_itself = client.get("/console/supervisor/")
    assert page_itself.status_code == 200
    assert 'data-quality-url="/console/supervisor/?part=quality"' in page_itself.content.decode()
    # The 30-day figures are a part of their own, which the page fetches once shown.
    supervisor = client.get("/console/supervisor/?part=quality")
    assert supervisor.status_code == 200
    rows = supervisor.context["quality"]["rows"]
    assert [(r["group"].pk, r["asked"], r["responses"], r["csat"], r["mean"]) for r in rows] == [
        (group.pk, 3, 2, 50, 3.0)
    ]
    assert 'data-testid="quality-card"' in supervisor.content.decode()
    # The live part still renders alone.
    live = client.get("/console/supervisor/?part=live")
    assert live.status_code == 200 and "quality-card" not in live.content.decode()

    sla = client.get("/console/sla/")
    assert sla.status_code == 200
    assert sla.context["satisfaction"] == {"asked": 3, "responses": 2, "csat": 50, "mean": 3.0}
    assert 'data-testid="sla-satisfaction"' in sla.content.decode()


@pytest.fixture
def complete_three(submit, group, approver, handlers):
    tickets = []
    for _ in range(3):
        ticket = submit(handler_group_id=group.pk)
        ticket_services.ticket_approve(ticket_id=ticket.pk, approver=approver)
        ticket_services.ticket_accept(ticket_id=ticket.pk, handler=handlers[0])
        tickets.append(ticket_services.ticket_complete(ticket_id=ticket.pk, handler=handlers[0]))
    now = timezone.now()
    for ticket, rating in zip(tickets[:2], (5, 1), strict=True):
        Survey.objects.filter(ticket=ticket).update(rating=rating, answered=now)
    return tickets
