"""The header's presence switch through real requests: agents see their state on every
console page and change it with a plain form or fetch; a heartbeat keeps them available but
never revives an offline agent; logging out (the console's or an API token's) sets them
offline; people without presence get no switch and are refused."""

import pytest
from django.urls import reverse

from routing import idle_pool
from routing.models import AgentPresence, PresenceSpan
from tests.factories import HandlerGroupFactory, UserFactory

pytestmark = pytest.mark.django_db

FETCH = {"HTTP_X_REQUESTED_WITH": "fetch"}


@pytest.fixture(autouse=True)
def _clean_routing_keys(settings):
    settings.ASSIGNMENT_REDIS_URL = settings.REDIS_URL
    client = idle_pool.client()
    keys = list(client.scan_iter("td:{g*"))
    if keys:
        client.delete(*keys)


@pytest.fixture
def agent():
    user = UserFactory(username="agent")
    HandlerGroupFactory(name="desk", members=[user], assign_strategy=4, requires_presence=True)
    return user


def state_of(user) -> str | None:
    return AgentPresence.objects.filter(pk=user.pk).values_list("state", flat=True).first()


def test_every_console_page_shows_an_agent_their_state_and_the_switch(client, agent):
    client.force_login(agent)
    page = client.get("/console/").content.decode()
    assert 'data-testid="presence-switch"' in page and "state-offline" in page
    assert 'value="available"' in page and 'value="busy"' in page and 'value="offline"' in page
    AgentPresence.objects.create(user=agent, state="busy", state_since="2026-01-01T00:00Z")
    page = client.get("/console/profile/").content.decode()
    assert "state-busy" in page and ">Busy<" in page


def test_someone_without_presence_has_no_switch_and_is_refused(client):
    person = UserFactory()
    client.force_login(person)
    assert "presence-switch" not in client.get("/console/my-tickets/").content.decode()

    response = client.post(reverse("console:presence"), {"state": "available"}, **FETCH)

    assert response.status_code == 403 and response.json()["code"] == "forbidden"
    assert not AgentPresence.objects.filter(pk=person.pk).exists()


def test_the_form_without_javascript_sets_the_state_and_returns_to_the_page(client, agent):
    client.force_login(agent)
    response = client.post(
        reverse("console:presence"), {"state": "available", "next": "/console/profile/"}
    )
    assert response.status_code == 302 and response["Location"] == "/console/profile/"
    assert state_of(agent) == "available"
    assert "state-available" in client.get("/console/profile/").content.decode()


def test_fetch_sets_the_state_and_the_api_agrees(client, agent):
    client.force_login(agent)
    response = client.post(reverse("console:presence"), {"state": "available"}, **FETCH)
    assert response.status_code == 200 and response.json() == {
        "state": "available",
        "label": "Available",
    }
    (row,) = client.get("/api/presence/").json()
    assert row["state"] == "available"
    assert (
        client.post(reverse("console:presence"), {"state": "busy"}, **FETCH).json()["state"]
        == "busy"
    )
    assert client.get("/api/presence/").json()[0]["state"] == "busy"


@pytest.mark.parametrize("state", ["", "napping", "wrap_up"])
def test_a_state_the_switch_does_not_offer_is_400_naming_the_field(client, agent, state):
    client.force_login(agent)
    client.post(reverse("console:presence"), {"state": "busy"}, **FETCH)
    spans = PresenceSpan.objects.count()

    response = client.post(reverse("console:presence"), {"state": state}, **FETCH)

    assert response.status_code == 400 and "state" in response.json()["errors"]
    assert state_of(agent) == "busy" and PresenceSpan.objects.count() == spans


def test_the_plain_form_with_a_bad_state_is_a_400_page_saying_why(client, agent):
    client.force_login(agent)
    response = client.post(reverse("console:presence"), {"state": "napping", "next": "/x/"})
    assert response.status_code == 400
    assert 'data-testid="presence-error"' in response.content.decode()
    assert state_of(agent) is None


def test_the_heartbeat_keeps_an_available_agent_but_never_revives_an_offline_one(client, agent):
    client.force_login(agent)
    response = client.post(reverse("console:presence-heartbeat"), **FETCH)
    assert response.status_code == 200 and response.json()["state"] == "offline"
    assert state_of(agent) == "offline"

    client.post(reverse("console:presence"), {"state": "available"}, **FETCH)
    before = AgentPresence.objects.get(pk=agent.pk).last_heartbeat
    assert client.post(reverse("console:presence-heartbeat"), **FETCH).json()["state"] == (
        "available"
    )
    assert AgentPresence.objects.get(pk=agent.pk).last_heartbeat > before


def test_the_heartbeat_refuses_someone_without_presence(client):
    person = UserFactory()
    client.force_login(person)
    assert client.post(reverse("console:presence-heartbeat"), **FETCH).status_code == 403
    assert not AgentPresence.objects.filter(pk=person.pk).exists()


def test_logging_out_of_the_console_sets_the_agent_offline(client, agent):
    group = HandlerGroupFactory(name="second", members=[agent], requires_presence=True)
    client.force_login(agent)
    client.post(reverse("console:presence"), {"state": "available"}, **FETCH)

    assert [u for u, _ in idle_pool.snapshot(group.pk)["idle"]] == [agent.pk]

    client.post(reverse("logout"))

    assert state_of(agent) == "offline"
    assert idle_pool.snapshot(group.pk)["idle"] == []


def test_logging_out_an_api_token_sets_the_agent_offline(client, agent):
    agent.set_password("pw-123456")
    agent.save()
    token = client.post(
        "/api/auth/token/",
        {"username": "agent", "password": "pw-123456"},
        content_type="application/json",
    ).json()["token"]
    auth = {"HTTP_AUTHORIZATION": f"Token {token}"}
    answer = client.post(
        "/api/presence/state/", {"state": "available"}, content_type="application/json", **auth
    )
    assert answer.status_code == 200
    assert state_of(agent) == "available"

    assert client.post("/api/auth/logout/", **auth).status_code == 204

    assert state_of(agent) == "offline"


def test_logging_out_someone_without_presence_creates_no_presence(client):
    person = UserFactory()
    client.force_login(person)
    client.post(reverse("logout"))
    assert not AgentPresence.objects.exists()
