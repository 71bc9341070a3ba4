"""Every page shows times in the person's time zone, named in the header: chosen in the
profile, else the browser's (sent once, on the first visit), else the server's TIME_ZONE.
The API keeps ISO-8601 with offsets whatever the zone."""

from datetime import UTC, datetime

import pytest
from django.utils.dateparse import parse_datetime

from accounts.models import Profile
from tests.factories import ApproverFactory, UserFactory
from workflow import services

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)  # 17:00 in Shanghai, 10:00 in Berlin


@pytest.fixture
def ticket(group):
    applicant = UserFactory(username="applicant")
    submitted = services.ticket_submit(
        creator=applicant,
        title="VPN",
        content="down",
        priority=2,
        handler_group_id=group.pk,
        now=T0,
    )
    return services.ticket_approve(ticket_id=submitted.pk, approver=ApproverFactory(), now=T0)


def page(client, ticket) -> str:
    response = client.get(f"/console/tickets/{ticket.pk}/")
    assert response.status_code == 200
    return response.content.decode()


def test_times_are_shown_in_the_profiles_zone_and_the_zone_is_named(as_user, handlers, ticket):
    Profile.objects.create(user=handlers[0], time_zone="Asia/Shanghai")
    html = page(as_user(handlers[0]), ticket)
    assert "2026-03-02 17:00 CST" in html  # submitted, in the person's zone
    assert "2026-03-02 09:00 UTC" not in html
    assert ">Asia/Shanghai<" in html
    assert "data-detect-time-zone-url" not in html  # chosen: the browser is not asked


def test_without_a_choice_the_server_zone_applies_and_the_browser_is_asked_once(
    as_user, handlers, ticket
):
    client = as_user(handlers[0])
    html = page(client, ticket)
    assert "2026-03-02 09:00 UTC" in html and "data-detect-time-zone-url" in html
    answer = client.post("/console/profile/time-zone/", {"time_zone": "Europe/Berlin"})
    assert answer.status_code == 204
    html = page(client, ticket)
    assert "2026-03-02 10:00 CET" in html and "data-detect-time-zone-url" not in html
    # Sent again from another browser: the choice stands.
    assert (
        client.post("/console/profile/time-zone/", {"time_zone": "Asia/Tokyo"}).status_code == 204
    )
    assert Profile.objects.get(user=handlers[0]).time_zone == "Europe/Berlin"


def test_an_unknown_zone_from_the_browser_is_a_400_and_changes_nothing(as_user, handlers):
    client = as_user(handlers[0])
    answer = client.post("/console/profile/time-zone/", {"time_zone": "Mars/Olympus"})
    assert answer.status_code == 400
    assert "time_zone" in answer.json()["errors"]
    assert not Profile.objects.filter(user=handlers[0]).exclude(time_zone="").exists()


def test_the_profile_page_sets_the_zone_and_refuses_an_unknown_one(as_user, handlers, ticket):
    client = as_user(handlers[0])
    assert client.get("/console/profile/").status_code == 200
    saved = client.post("/console/profile/", {"time_zone": "Asia/Shanghai", "language": ""})
    assert saved.status_code == 302
    assert "17:00 CST" in page(client, ticket)
    refused = client.post("/console/profile/", {"time_zone": "Nowhere/Atall", "language": ""})
    assert refused.status_code == 400
    assert Profile.objects.get(user=handlers[0]).time_zone == "Asia/Shanghai"


def test_anonymous_visitors_are_sent_to_log_in(client):
    assert client.get("/console/profile/").status_code == 302
    assert client.post("/console/profile/time-zone/", {"time_zone": "UTC"}).status_code == 302


def test_the_api_answers_iso_8601_with_an_offset_in_any_zone(as_user, handlers, ticket):
    Profile.objects.create(user=handlers[0], time_zone="Asia/Shanghai")
    client = as_user(handlers[0])
    body = client.get(f"/api/tickets/{ticket.pk}/").json()
    submitted = parse_datetime(body["submitted_time"])
    assert submitted.utcoffset() is not None and submitted == T0


def test_every_page_names_an_icon_and_favicon_ico_leads_to_it(as_user, handlers, client):
    html = as_user(handlers[0]).get("/console/", follow=True).content.decode()
    assert 'rel="icon"' in html and "favicon.svg" in html
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"].endswith("favicon.svg")
