"""The pool page's saved-view tabs (with counts) and its bulk bar (per-ticket results)."""

import pytest
from django.contrib.messages import get_messages

from tests.toolbox.views_world import make_world
from ticketing.models import Ticket
from toolbox.models import SavedView

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(applicant, approver):
    return make_world(applicant, approver)


def logged_in(client, user):
    client.force_login(user)
    return client


def test_saved_views_show_as_tabs_with_counts_and_list_their_tickets(client, world):
    agent = world["handlers"][0]
    urgent = world["ticket"](priority=4, title="Urgent printer")
    world["ticket"](priority=1, title="Someday scanner")
    view = SavedView.objects.create(name="Urgent ones", owner=agent, filters={"priority": 4})
    SavedView.objects.create(name="Not mine", owner=world["handlers"][1])

    page = logged_in(client, agent).get("/console/?view=all")
    html = page.content.decode()
    assert page.status_code == 200
    assert f'data-saved-view="{view.pk}"' in html and "Urgent ones" in html
    assert "Not mine" not in html

    listed = client.get(f"/console/?saved_view={view.pk}")
    html = listed.content.decode()
    assert listed.status_code == 200
    assert "Urgent printer" in html and "Someday scanner" not in html
    assert f'aria-current="page" data-saved-view="{view.pk}"' in html
    assert listed.context["saved"].pk == view.pk
    assert [t.pk for t in listed.context["tickets"]] == [urgent.pk]


def test_someone_elses_view_is_a_404(client, world):
    theirs = SavedView.objects.create(name="Theirs", owner=world["handlers"][1])

    page = logged_in(client, world["handlers"][0]).get(f"/console/?saved_view={theirs.pk}")

    assert page.status_code == 404


def test_the_list_has_checkboxes_and_a_bulk_bar_for_the_team(client, world):
    ticket = world["ticket"]()

    html = logged_in(client, world["handlers"][0]).get("/console/?view=all").content.decode()

    assert 'data-testid="bulk-bar"' in html
    assert f'name="ids" value="{ticket.pk}" form="bulk-form"' in html


def test_the_bulk_bar_tags_the_ticked_tickets_and_names_each_refusal(client, world):
    agent = world["handlers"][0]
    ours = [world["ticket"]() for _ in range(2)]
    theirs = world["ticket"](in_group=world["other_group"])
    client = logged_in(client, agent)

    response = client.post(
        "/console/tickets/bulk/",
        {
            "ids": [ours[0].pk, ours[1].pk, theirs.pk],
            "action": "add_tags",
            "tags": "printer, Floor 2",
            "next": "/console/?view=all",
        },
    )

    assert response.status_code == 302 and response["Location"] == "/console/?view=all"
    for ticket in ours:
        assert Ticket.objects.get(pk=ticket.pk).tags == ["printer", "floor 2"]
    assert Ticket.objects.get(pk=theirs.pk).tags == []
    texts = [str(m) for m in get_messages(response.wsgi_request)]
    assert texts[0] == "Done on 2 tickets."
    # Not visible to the agent: named by its id, never its bill code.
    assert texts[1].startswith(f"#{theirs.pk}: not done")


def test_bad_bulk_parameters_do_nothing_and_say_why(client, world):
    ticket = world["ticket"]()

    response = logged_in(client, world["handlers"][0]).post(
        "/console/tickets/bulk/", {"ids": [ticket.pk], "action": "set_priority", "priority": "9"}
    )

    assert response.status_code == 302
    assert Ticket.objects.get(pk=ticket.pk).priority == 3
    assert str(list(get_messages(response.wsgi_request))[0]).startswith("Nothing was done")


def test_an_applicant_gets_no_bulk_bar(client, world):
    world["ticket"]()

    html = logged_in(client, world["applicant"]).get("/console/my-tickets/").content.decode()

    assert 'data-testid="bulk-bar"' not in html and 'form="bulk-form"' not in html


def test_the_page_saves_its_filters_as_a_personal_view(client, world):
    agent = world["handlers"][0]
    urgent = world["ticket"](priority=4, title="Urgent printer")
    world["ticket"](priority=1)
    client = logged_in(client, agent)

    response = client.post(
        "/console/views/",
        {"name": "Urgent", "view": "all", "priority": "4", "ticket_status": "1", "sort": "age"},
    )

    view = SavedView.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/console/?saved_view={view.pk}"
    assert (view.owner_id, view.scope, view.sort) == (agent.pk, "personal", "age")
    assert view.filters == {"priority": 4, "status": [1]}
    listed = client.get(response["Location"])
    assert [t.pk for t in listed.context["tickets"]] == [urgent.pk]


def test_saving_from_my_work_keeps_it_to_my_tickets_and_a_name_is_needed(client, world):
    client = logged_in(client, world["handlers"][0])

    assert client.post("/console/views/", {"name": " ", "view": "mine"}).status_code == 302
    assert not SavedView.objects.exists()
    client.post("/console/views/", {"name": "Mine", "view": "mine"})
    assert SavedView.objects.get().filters == {"handler": "me"}


def test_a_view_is_deleted_by_its_owner_only(client, world):
    view = SavedView.objects.create(name="Mine", owner=world["handlers"][0])

    other = logged_in(client, world["handlers"][1]).post(f"/console/views/{view.pk}/delete/")
    assert other.status_code == 404 and SavedView.objects.filter(pk=view.pk).exists()
    shared = SavedView.objects.create(name="Team", scope="group", group=world["group"])
    member = client.post(f"/console/views/{shared.pk}/delete/")
    assert member.status_code == 302 and SavedView.objects.filter(pk=shared.pk).exists()

    owner = logged_in(client, world["handlers"][0]).post(f"/console/views/{view.pk}/delete/")
    assert owner.status_code == 302 and not SavedView.objects.filter(pk=view.pk).exists()
