"""The custom fields through HTTP: the categories and ticket-fields endpoints (everyone reads,
staff write), a ticket submitted with its category's fields, the team editing a ticket's
fields (recorded), and `?field.<key>=` on the pool. Every refusal leaves things as they
were."""

import pytest

from mail.models import Mailbox
from sla.models import SlaRule
from tests.toolbox.fielding import make_cast
from ticketing.models import Category, Ticket, TicketField, TicketRecord
from workflow import services

pytestmark = pytest.mark.django_db


@pytest.fixture
def cast(applicant, approver):
    return make_cast(applicant, approver)


def errors_of(response) -> dict:
    return response.json()["errors"]


# --- categories --------------------------------------------------------------------------


def test_everyone_lists_the_active_categories_with_labels_in_their_language(api, cast):
    Category.objects.create(name="retired", active=False)
    client = api.as_user(cast["applicant"])
    listed = client.get("/api/categories/", HTTP_ACCEPT_LANGUAGE="zh-hans").json()
    assert [(c["name"], c["label"]) for c in listed] == [
        ("printer", "打印机"),
        ("network", "network"),
    ]
    assert listed[0]["translations"] == {"zh-hans": "打印机"}
    assert set(listed[0]) == {
        "id",
        "name",
        "label",
        "translations",
        "handler_group_id",
        "active",
        "order",
    }
    english = client.get("/api/categories/", HTTP_ACCEPT_LANGUAGE="en").json()
    assert english[0]["label"] == "printer"


def test_only_staff_list_inactive_categories(api, cast):
    Category.objects.create(name="retired", active=False)
    refused = api.as_user(cast["applicant"]).get("/api/categories/", {"all": "1"})
    assert refused.status_code == 403
    names = [c["name"] for c in api.as_user(cast["staff"]).get("/api/categories/?all=1").json()]
    assert "retired" in names


def test_staff_create_a_category_and_others_are_refused(api, cast):
    body = {
        "name": "phones",
        "translations": {"zh-hans": "电话"},
        "handler_group_id": cast["group"].pk,
    }
    refused = api.as_user(cast["handlers"][0]).post("/api/categories/", body, format="json")
    assert refused.status_code == 403
    assert not Category.objects.filter(name="phones").exists()
    made = api.as_user(cast["staff"]).post("/api/categories/", body, format="json")
    assert made.status_code == 201, made.json()
    assert made.json()["handler_group_id"] == cast["group"].pk
    assert Category.objects.get(name="phones").translations == {"zh-hans": "电话"}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "printer"}, "name"),
        ({"name": "  "}, "name"),
        ({"name": "x" * 51}, "name"),
        ({"name": "ok", "handler_group_id": 999_999}, "handler_group_id"),
    ],
)
def test_a_bad_category_is_a_400_naming_the_field(api, cast, body, field):
    before = Category.objects.count()
    response = api.as_user(cast["staff"]).post("/api/categories/", body, format="json")
    assert response.status_code == 400
    assert field in errors_of(response)
    assert Category.objects.count() == before


def test_a_rename_carries_over_to_tickets_sla_rules_and_mailboxes(api, cast):
    ticket = cast["ticket"]()
    other = cast["ticket"](category="network")
    rule = SlaRule.objects.create(
        name="printers", category="printer", response_hours=1, resolve_hours=4, sort=5
    )
    mailbox = Mailbox.objects.create(address="print@example.com", name="Print", category="printer")
    response = api.as_user(cast["staff"]).patch(
        f"/api/categories/{cast['printer'].pk}/", {"name": "printers"}, format="json"
    )
    assert response.status_code == 200, response.json()
    assert response.json()["name"] == "printers"
    assert Ticket.objects.get(pk=ticket.pk).category == "printers"
    assert Ticket.objects.get(pk=other.pk).category == "network"
    assert SlaRule.objects.get(pk=rule.pk).category == "printers"
    assert Mailbox.objects.get(pk=mailbox.pk).category == "printers"
    # The fields of the category follow it (they belong to the row, not the name).
    assert cast["fields"]["model"].categories.get().name == "printers"


def test_a_rename_refused_changes_nothing(api, cast):
    ticket = cast["ticket"]()
    response = api.as_user(cast["handlers"][0]).patch(
        f"/api/categories/{cast['printer'].pk}/", {"name": "printers"}, format="json"
    )
    assert response.status_code == 403
    taken = api.as_user(cast["staff"]).patch(
        f"/api/categories/{cast['printer'].pk}/", {"name": "network"}, format="json"
    )
    assert taken.status_code == 400
    assert "name" in errors_of(taken)
    assert Category.objects.get(pk=cast["printer"].pk).name == "printer"
    assert Ticket.objects.get(pk=ticket.pk).category == "printer"
    missing = api.as_user(cast["staff"]).patch("/api/categories/999999/", {}, format="json")
    assert missing.status_code == 404


def test_every_holder_of_a_category_name_has_the_column_renames_rewrite():
    from django.db import connection

    from ticketing.categories import NAME_HOLDERS

    with connection.cursor() as cursor:
        for table, column in NAME_HOLDERS:
            description = connection.introspection.get_table_description(cursor, table)
            assert column in [c.name for c in description], table


# --- ticket fields: definitions -----------------------------------------------------------


def test_everyone_lists_the_fields_of_a_category(api, cast):
    client = api.as_user(cast["applicant"])
    printer = client.get("/api/ticket-fields/", {"category": "printer"}).json()
    assert [f["key"] for f in printer] == [
        "model",
        "copies",
        "bought",
        "colour",
        "trays",
        "owner",
        "urgent_box",
        "asset",
    ]
    network = client.get("/api/ticket-fields/", {"category": "network"}).json()
    assert [f["key"] for f in network] == ["asset"]
    assert network[0]["categories"] == []
    colour = next(f for f in printer if f["key"] == "colour")
    assert colour["choices"] == ["black", "cyan"]
    assert colour["categories"] == ["printer"]
    zh = client.get("/api/ticket-fields/", {"category": "network"}, HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert (zh.json()[0]["label"], zh.json()[0]["label_default"]) == ("资产编号", "Asset tag")


def test_inactive_fields_are_not_listed_except_to_staff_asking(api, cast):
    TicketField.objects.filter(key="copies").update(active=False)
    client = api.as_user(cast["applicant"])
    keys = [f["key"] for f in client.get("/api/ticket-fields/", {"category": "printer"}).json()]
    assert "copies" not in keys
    assert client.get("/api/ticket-fields/", {"all": "1"}).status_code == 403
    staff = api.as_user(cast["staff"]).get("/api/ticket-fields/", {"all": "1"}).json()
    assert "copies" in [f["key"] for f in staff]


def test_staff_create_a_field_for_categories(api, cast):
    body = {
        "key": "toner",
        "label": "Toner",
        "type": "choice",
        "choices": ["full", "low"],
        "categories": ["printer"],
        "required": True,
    }
    refused = api.as_user(cast["handlers"][0]).post("/api/ticket-fields/", body, format="json")
    assert refused.status_code == 403
    assert not TicketField.objects.filter(key="toner").exists()
    made = api.as_user(cast["staff"]).post("/api/ticket-fields/", body, format="json")
    assert made.status_code == 201, made.json()
    assert made.json()["categories"] == ["printer"]
    assert TicketField.objects.get(key="toner").required


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"key": "model", "label": "M", "type": "text"}, "key"),
        ({"key": "bad key", "label": "M", "type": "text"}, "key"),
        ({"key": "k", "label": "M", "type": "colour"}, "type"),
        ({"key": "k", "label": "M", "type": "choice"}, "choices"),
        ({"key": "k", "label": "M", "type": "choice", "choices": ["a", "a"]}, "choices"),
        ({"key": "k", "label": "M", "type": "text", "choices": ["a"]}, "choices"),
        ({"key": "k", "label": "M", "type": "text", "categories": ["nope"]}, "categories"),
    ],
)
def test_a_bad_field_is_a_400_naming_what(api, cast, body, field):
    before = TicketField.objects.count()
    response = api.as_user(cast["staff"]).post("/api/ticket-fields/", body, format="json")
    assert response.status_code == 400
    assert field in errors_of(response)
    assert TicketField.objects.count() == before


def test_staff_change_a_field_but_not_its_key_or_type(api, cast):
    field = cast["fields"]["colour"]
    client = api.as_user(cast["staff"])
    changed = client.patch(
        f"/api/ticket-fields/{field.pk}/",
        {"label": "Ink", "choices": ["black", "cyan", "magenta"], "categories": []},
        format="json",
    )
    assert changed.status_code == 200, changed.json()
    assert changed.json()["categories"] == []
    field.refresh_from_db()
    assert (field.label, field.choices) == ("Ink", ["black", "cyan", "magenta"])
    for body, name in [({"key": "ink"}, "key"), ({"type": "text"}, "type")]:
        response = client.patch(f"/api/ticket-fields/{field.pk}/", body, format="json")
        assert response.status_code == 400
        assert name in errors_of(response)
    field.refresh_from_db()
    assert (field.key, field.type) == ("colour", "choice")
    refused = api.as_user(cast["applicant"]).patch(
        f"/api/ticket-fields/{field.pk}/", {"label": "X"}, format="json"
    )
    assert refused.status_code == 403
    assert TicketField.objects.get(pk=field.pk).label == "Ink"


def test_deleting_a_field_tickets_hold_deactivates_it_and_one_unheld_goes(api, cast):
    ticket = cast["ticket"](fields={"model": "LJ", "colour": "cyan"})
    client = api.as_user(cast["staff"])
    kept = client.delete(f"/api/ticket-fields/{cast['fields']['colour'].pk}/")
    assert kept.status_code == 200
    assert kept.json()["active"] is False
    assert Ticket.objects.get(pk=ticket.pk).fields["colour"] == "cyan"
    gone = client.delete(f"/api/ticket-fields/{cast['fields']['copies'].pk}/")
    assert gone.status_code == 204
    assert not TicketField.objects.filter(key="copies").exists()
    refused = api.as_user(cast["handlers"][0]).delete(
        f"/api/ticket-fields/{cast['fields']['bought'].pk}/"
    )
    assert refused.status_code == 403
    assert TicketField.objects.filter(key="bought", active=True).exists()


# --- submitting with fields ---------------------------------------------------------------


def submit_body(**overrides) -> dict:
    return {
        "title": "Jam",
        "content": "Paper jam",
        "priority": 2,
        "category": "printer",
        **overrides,
    }


def test_a_ticket_is_submitted_with_its_categorys_fields(api, cast):
    owner = cast["handlers"][1]
    values = {
        "model": "LJ 4000",
        "copies": 3,
        "bought": "2024-02-29",
        "colour": "cyan",
        "trays": ["letter", "a4"],
        "owner": owner.pk,
        "urgent_box": True,
        "asset": "A-17",
    }
    response = api.as_user(cast["applicant"]).post(
        "/api/tickets/", submit_body(fields=values), format="json"
    )
    assert response.status_code == 201, response.json()
    stored = Ticket.objects.get(pk=response.json()["id"]).fields
    assert stored == {**values, "trays": ["a4", "letter"]}
    assert response.json()["fields"] == stored
    assert response.json()["category"] == "printer"


@pytest.mark.parametrize(
    ("fields", "key"),
    [
        ({}, "fields.model"),
        ({"model": ""}, "fields.model"),
        ({"model": "x", "copies": "many"}, "fields.copies"),
        ({"model": "x", "copies": True}, "fields.copies"),
        ({"model": "x", "bought": "29/02/2024"}, "fields.bought"),
        ({"model": "x", "bought": "2023-02-29"}, "fields.bought"),
        ({"model": "x", "colour": "pink"}, "fields.colour"),
        ({"model": "x", "trays": ["a5"]}, "fields.trays"),
        ({"model": "x", "trays": "a4"}, "fields.trays"),
        ({"model": "x", "owner": 999_999}, "fields.owner"),
        ({"model": "x", "urgent_box": "yes"}, "fields.urgent_box"),
        ({"model": "x", "nope": 1}, "fields.nope"),
        ({"model": 5}, "fields.model"),
    ],
)
def test_a_bad_field_value_is_a_400_naming_it_and_no_ticket(api, cast, fields, key):
    before = Ticket.objects.count()
    response = api.as_user(cast["applicant"]).post(
        "/api/tickets/", submit_body(fields=fields), format="json"
    )
    assert response.status_code == 400
    assert list(errors_of(response)) == [key]
    assert Ticket.objects.count() == before


def test_a_field_of_another_category_is_refused(api, cast):
    response = api.as_user(cast["applicant"]).post(
        "/api/tickets/", submit_body(category="network", fields={"model": "LJ"}), format="json"
    )
    assert response.status_code == 400
    assert list(errors_of(response)) == ["fields.model"]


@pytest.mark.parametrize("name", ["nothing-like-it", "retired"])
def test_an_unknown_or_inactive_category_is_a_400(api, cast, name):
    Category.objects.create(name="retired", active=False)
    before = Ticket.objects.count()
    response = api.as_user(cast["applicant"]).post(
        "/api/tickets/", submit_body(category=name, fields={}), format="json"
    )
    assert response.status_code == 400
    assert list(errors_of(response)) == ["category"]
    assert Ticket.objects.count() == before


def test_a_ticket_without_a_group_goes_to_its_categorys(api, cast):
    Category.objects.filter(pk=cast["network"].pk).update(handler_group=cast["group"])
    response = api.as_user(cast["applicant"]).post(
        "/api/tickets/", submit_body(category="network"), format="json"
    )
    assert response.status_code == 201, response.json()
    assert Ticket.objects.get(pk=response.json()["id"]).handler_group_id == cast["group"].pk
    plain = api.as_user(cast["applicant"]).post(
        "/api/tickets/", submit_body(category="", fields={}), format="json"
    )
    assert Ticket.objects.get(pk=plain.json()["id"]).handler_group_id is None


# --- editing a ticket's fields ------------------------------------------------------------


def test_the_team_edits_a_tickets_fields_and_each_change_is_recorded(api, cast):
    ticket = cast["ticket"](fields={"model": "LJ", "colour": "black", "asset": "A-1"})
    client = api.as_user(cast["handlers"][0])
    response = client.patch(
        f"/api/tickets/{ticket.pk}/fields/",
        {"fields": {"colour": "cyan", "asset": None, "copies": 2}},
        format="json",
    )
    assert response.status_code == 200, response.json()
    expected = {"model": "LJ", "colour": "cyan", "copies": 2}
    assert response.json() == {"fields": expected}
    assert Ticket.objects.get(pk=ticket.pk).fields == expected
    rec = TicketRecord.objects.filter(ticket=ticket, action="fields").get()
    assert rec.actor_id == cast["handlers"][0].pk
    assert rec.detail == {
        "changes": {"colour": ["black", "cyan"], "asset": ["A-1", None], "copies": [None, 2]}
    }
    again = client.patch(
        f"/api/tickets/{ticket.pk}/fields/", {"fields": {"colour": "cyan"}}, format="json"
    )
    assert again.status_code == 200
    assert TicketRecord.objects.filter(ticket=ticket, action="fields").count() == 1


def test_the_applicant_may_not_edit_fields_and_an_outsider_gets_a_404(api, cast):
    ticket = cast["ticket"](fields={"model": "LJ"})
    body = {"fields": {"model": "other"}}
    refused = api.as_user(cast["applicant"]).patch(
        f"/api/tickets/{ticket.pk}/fields/", body, format="json"
    )
    assert refused.status_code == 403
    hidden = api.as_user(cast["outsider"]).patch(
        f"/api/tickets/{ticket.pk}/fields/", body, format="json"
    )
    assert hidden.status_code == 404
    assert Ticket.objects.get(pk=ticket.pk).fields == {"model": "LJ"}
    assert not TicketRecord.objects.filter(ticket=ticket, action="fields").exists()


@pytest.mark.parametrize(
    ("fields", "key"),
    [
        ({"model": None}, "fields.model"),
        ({"colour": "pink"}, "fields.colour"),
        ({"nope": "x"}, "fields.nope"),
        ("not an object", "fields"),
    ],
)
def test_a_bad_edit_is_a_400_and_changes_nothing(api, cast, fields, key):
    ticket = cast["ticket"](fields={"model": "LJ", "colour": "black"})
    response = api.as_user(cast["leader"]).patch(
        f"/api/tickets/{ticket.pk}/fields/", {"fields": fields}, format="json"
    )
    assert response.status_code == 400
    assert key in errors_of(response)
    assert Ticket.objects.get(pk=ticket.pk).fields == {"model": "LJ", "colour": "black"}
    assert not TicketRecord.objects.filter(ticket=ticket, action="fields").exists()


def test_a_cancelled_tickets_fields_do_not_change(api, cast):
    ticket = cast["ticket"](approve=False, fields={"model": "LJ"})
    services.ticket_cancel(ticket_id=ticket.pk, user=cast["applicant"])
    response = api.as_user(cast["staff"]).patch(
        f"/api/tickets/{ticket.pk}/fields/", {"fields": {"model": "new"}}, format="json"
    )
    assert response.status_code == 409
    assert Ticket.objects.get(pk=ticket.pk).fields == {"model": "LJ"}


# --- filtering -----------------------------------------------------------------------------


def pool_ids(client, **params) -> list[int]:
    response = client.get("/api/tickets/pool/", {"view": "all", **params})
    assert response.status_code == 200, response.json()
    return sorted(t["id"] for t in response.json()["results"])


def test_the_pool_filters_on_fields_read_by_their_type(api, cast):
    one = cast["ticket"](
        fields={"model": "LJ", "copies": 2, "trays": ["a4", "a3"], "urgent_box": True}
    )
    two = cast["ticket"](fields={"model": "LJ", "copies": 3, "trays": ["a4"]})
    client = api.as_user(cast["handlers"][0])
    assert pool_ids(client, **{"field.copies": "2"}) == [one.pk]
    assert pool_ids(client, **{"field.copies": "2.0"}) == [one.pk]
    assert pool_ids(client, **{"field.trays": "a4"}) == sorted([one.pk, two.pk])
    assert pool_ids(client, **{"field.trays": "a3", "field.copies": "2"}) == [one.pk]
    assert pool_ids(client, **{"field.urgent_box": "true"}) == [one.pk]
    assert pool_ids(client, **{"field.model": "LJ"}) == sorted([one.pk, two.pk])


@pytest.mark.parametrize(
    "params",
    [{"field.nope": "1"}, {"field.copies": "two"}, {"field.colour": "pink"}, {"field.bought": "x"}],
)
def test_a_bad_field_filter_is_a_400_naming_it(api, cast, params):
    response = api.as_user(cast["handlers"][0]).get("/api/tickets/pool/", {"view": "all", **params})
    assert response.status_code == 400
    assert list(errors_of(response)) == list(params)


def test_the_schema_documents_the_fields_endpoints():
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    paths = schema["paths"]
    for route in (
        "/api/categories/",
        "/api/categories/{id}/",
        "/api/ticket-fields/",
        "/api/ticket-fields/{id}/",
        "/api/tickets/{id}/fields/",
    ):
        assert route in paths, route
    submit = schema["components"]["schemas"]["TicketSubmitInputRequest"]
    assert "fields" in submit["properties"]


def test_one_field_is_read_by_id_and_an_inactive_one_only_by_staff(api, cast):
    field = cast["fields"]["colour"]
    assert api.as_user(cast["applicant"]).get(f"/api/ticket-fields/{field.pk}/").json()["key"] == (
        "colour"
    )
    TicketField.objects.filter(pk=field.pk).update(active=False)
    assert api.as_user(cast["applicant"]).get(f"/api/ticket-fields/{field.pk}/").status_code == 404
    assert api.as_user(cast["staff"]).get(f"/api/ticket-fields/{field.pk}/").status_code == 200


def test_a_rename_in_the_admin_carries_over_too(client, cast):
    ticket = cast["ticket"]()
    admin = cast["staff"]
    admin.is_superuser = True
    admin.save()
    client.force_login(admin)
    url = f"/admin/ticketing/category/{cast['printer'].pk}/change/"
    assert client.get(url).status_code == 200
    response = client.post(
        url,
        {"name": "printers", "translations": "{}", "handler_group": "", "order": 0, "active": "on"},
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    assert Ticket.objects.get(pk=ticket.pk).category == "printers"
    assert client.get("/admin/ticketing/ticketfield/").status_code == 200
    assert (
        client.get(
            f"/admin/ticketing/ticketfield/{cast['fields']['colour'].pk}/change/"
        ).status_code
        == 200
    )
    assert client.get("/admin/ticketing/tag/").status_code == 200
