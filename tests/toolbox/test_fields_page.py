"""The custom fields on the console: the submit form offers the categories and every
category's fields (the chosen one's read back), the ticket page's Details card shows the
values in the reader's language and lets the team edit them; refusals change nothing."""

import re

import pytest

from tests.toolbox.fielding import make_cast
from ticketing.models import Ticket, TicketRecord

pytestmark = pytest.mark.django_db

SUBMIT = "/console/submit/"


@pytest.fixture
def cast(applicant, approver):
    return make_cast(applicant, approver)


def page(response) -> str:
    return response.content.decode()


def login(client, user):
    client.force_login(user)
    return client


def test_the_submit_form_offers_active_categories_and_every_categorys_fields(client, cast):
    body = page(login(client, cast["applicant"]).get(SUBMIT, HTTP_ACCEPT_LANGUAGE="zh-hans"))
    assert '<option value="printer">打印机</option>' in body
    assert re.search(r'data-key="model"\s+data-categories="printer"', body)
    assert re.search(r'data-key="asset"\s+data-categories=""', body)
    assert 'name="cf_trays"' in body and 'type="date"' in body
    assert "资产编号" in body  # the label in the reader's language
    assert "js/submit-fields.js" in body


def test_a_ticket_submitted_from_the_form_carries_its_categorys_fields(client, cast):
    owner = cast["handlers"][1]
    response = login(client, cast["applicant"]).post(
        SUBMIT,
        {
            "title": "Jam",
            "content": "Paper jam",
            "priority": 2,
            "category": "printer",
            "cf_model": "LJ 4000",
            "cf_copies": "3",
            "cf_bought": "2024-02-29",
            "cf_colour": "cyan",
            "cf_trays": ["a3", "a4"],
            "cf_owner": owner.username,
            "cf_urgent_box": "on",
            "cf_asset": "",
        },
    )
    assert response.status_code == 302, page(response)
    ticket = Ticket.objects.get(title="Jam")
    assert ticket.category == "printer"
    assert ticket.fields == {
        "model": "LJ 4000",
        "copies": 3,
        "bought": "2024-02-29",
        "colour": "cyan",
        "trays": ["a4", "a3"],
        "owner": owner.pk,
        "urgent_box": True,
    }


def test_the_fields_of_another_category_are_ignored(client, cast):
    response = login(client, cast["applicant"]).post(
        SUBMIT,
        {
            "title": "Slow",
            "content": "Net slow",
            "priority": 2,
            "category": "network",
            "cf_model": "ignored",
            "cf_asset": "A-9",
        },
    )
    assert response.status_code == 302, page(response)
    assert Ticket.objects.get(title="Slow").fields == {"asset": "A-9"}


@pytest.mark.parametrize(
    ("posted", "message"),
    [
        ({}, "This field is required."),
        ({"cf_model": "x", "cf_copies": "many"}, "Enter a number."),
        ({"cf_model": "x", "cf_owner": "nobody-here"}, "No active person has this username."),
    ],
)
def test_a_bad_field_on_the_form_submits_nothing_and_says_why(client, cast, posted, message):
    response = login(client, cast["applicant"]).post(
        SUBMIT,
        {"title": "Jam", "content": "x", "priority": 2, "category": "printer", **posted},
    )
    assert response.status_code == 400
    assert message in page(response)
    assert not Ticket.objects.filter(title="Jam").exists()


def test_an_unknown_category_is_refused_on_the_form(client, cast):
    response = login(client, cast["applicant"]).post(
        SUBMIT, {"title": "Jam", "content": "x", "priority": 2, "category": "nothing"}
    )
    assert response.status_code == 400
    assert not Ticket.objects.filter(title="Jam").exists()


def detail(ticket) -> str:
    return f"/console/tickets/{ticket.pk}/"


def test_the_ticket_page_shows_the_fields_in_the_readers_language(client, cast):
    owner = cast["handlers"][1]
    owner.first_name, owner.last_name = "Ada", "Lovelace"
    owner.save()
    ticket = cast["ticket"](
        fields={
            "model": "LJ",
            "bought": "2024-02-29",
            "owner": owner.pk,
            "urgent_box": True,
            "asset": "A-1",
        }
    )
    body = page(
        login(client, cast["applicant"]).get(detail(ticket), HTTP_ACCEPT_LANGUAGE="zh-hans")
    )
    card = body[body.index('data-testid="fields-card"') :]
    card = card[: card.index("</section>")]
    assert "打印机" in card and "资产编号" in card
    assert "Ada Lovelace" in card
    assert "2024年2月29日" in card
    assert 'data-testid="fields-form"' not in card  # the applicant reads, does not edit
    english = page(client.get(detail(ticket), HTTP_ACCEPT_LANGUAGE="en"))
    assert "Feb. 29, 2024" in english or "February 29, 2024" in english


def test_the_team_edits_the_fields_from_the_card(client, cast):
    ticket = cast["ticket"](fields={"model": "LJ", "colour": "black", "asset": "A-1"})
    client = login(client, cast["handlers"][0])
    assert 'data-testid="fields-form"' in page(client.get(detail(ticket)))
    response = client.post(
        f"/console/tickets/{ticket.pk}/fields/",
        {"cf_model": "LJ 5", "cf_colour": "cyan", "cf_asset": "", "cf_trays": ["a4"]},
    )
    assert response.status_code == 302
    assert response["Location"].endswith("#fields")
    assert Ticket.objects.get(pk=ticket.pk).fields == {
        "model": "LJ 5",
        "colour": "cyan",
        "trays": ["a4"],
    }
    rec = TicketRecord.objects.get(ticket=ticket, action="fields")
    assert rec.detail["changes"]["asset"] == ["A-1", None]


def test_a_refused_edit_changes_nothing(client, cast):
    ticket = cast["ticket"](fields={"model": "LJ"})
    refused = login(client, cast["applicant"]).post(
        f"/console/tickets/{ticket.pk}/fields/", {"cf_model": "other"}
    )
    assert refused.status_code == 403
    bad = login(client, cast["handlers"][0]).post(
        f"/console/tickets/{ticket.pk}/fields/", {"cf_model": ""}
    )
    assert bad.status_code == 400
    assert "This field is required." in page(bad)
    hidden = login(client, cast["outsider"]).post(
        f"/console/tickets/{ticket.pk}/fields/", {"cf_model": "other"}
    )
    assert hidden.status_code == 404
    assert Ticket.objects.get(pk=ticket.pk).fields == {"model": "LJ"}
    assert not TicketRecord.objects.filter(ticket=ticket, action="fields").exists()
