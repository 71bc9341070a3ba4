"""The CSV export through HTTP: what the caller may see, the pool's filters, a column per
active custom field, tags for the team only, formula-like cells quoted, the row limit."""

import csv
import io

import pytest

from tests.toolbox.views_world import make_world
from ticketing.models import FieldType, Ticket, TicketField

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(applicant, approver):
    return make_world(applicant, approver)


def export(api, user, query: str = ""):
    response = api.as_user(user).get(f"/api/tickets/export/?format=csv{query}")
    return response


def rows_of(response) -> list[dict]:
    assert response.status_code == 200, getattr(response, "content", b"")[:500]
    assert response["Content-Type"].startswith("text/csv")
    assert response.streaming
    text = b"".join(response.streaming_content).decode()
    return list(csv.DictReader(io.StringIO(text)))


def test_an_agent_exports_their_pool_with_tags_and_custom_fields(api, world):
    TicketField.objects.create(key="asset", label="Asset", type=FieldType.TEXT)
    TicketField.objects.create(key="old", label="Old", type=FieldType.TEXT, active=False)
    TicketField.objects.create(key="onsite", label="On site", type=FieldType.CHECKBOX)
    agent = world["handlers"][0]
    ticket = world["ticket"](title="Printer on fire")
    Ticket.objects.filter(pk=ticket.pk).update(
        tags=["printer", "floor 2"], fields={"asset": "PR-7", "onsite": True}
    )
    world["ticket"](in_group=world["other_group"])  # not the agent's to see

    rows = rows_of(export(api, agent))

    assert [row["id"] for row in rows] == [str(ticket.pk)]
    row = rows[0]
    assert row["bill_code"] == ticket.bill_code and row["title"] == "Printer on fire"
    assert row["tags"] == "printer, floor 2"
    assert row["asset"] == "PR-7" and row["onsite"] == "Yes"
    assert "old" not in row
    assert row["group"] == "support" and row["applicant"] == "applicant"


def test_an_applicant_exports_their_own_tickets_without_tags(api, world):
    mine = world["ticket"]()
    Ticket.objects.filter(pk=mine.pk).update(tags=["secret"])

    rows = rows_of(export(api, world["applicant"]))

    assert [row["id"] for row in rows] == [str(mine.pk)]
    assert "tags" not in rows[0]
    assert rows[0]["handler"] == ""


def test_formula_like_cells_are_quoted_as_text(api, world):
    world["ticket"](title='=HYPERLINK("http://evil")')
    world["ticket"](title="+1 printer")

    titles = sorted(row["title"] for row in rows_of(export(api, world["handlers"][0])))

    assert titles == ["'+1 printer", '\'=HYPERLINK("http://evil")']


def test_the_pool_filters_narrow_the_export(api, world):
    TicketField.objects.create(key="asset", label="Asset", type=FieldType.TEXT)
    agent = world["handlers"][0]
    urgent = world["ticket"](priority=4)
    world["ticket"](priority=2)
    accepted = world["ticket"](priority=4, accept_by=agent)
    Ticket.objects.filter(pk=urgent.pk).update(fields={"asset": "PR-7"}, tags=["printer"])

    def ids(query):
        return {int(row["id"]) for row in rows_of(export(api, agent, query))}

    assert ids("&priority=4") == {urgent.pk, accepted.pk}
    assert ids("&priority=4&handler=me") == {accepted.pk}
    assert ids("&field.asset=PR-7") == {urgent.pk}
    assert ids("&tag=Printer") == {urgent.pk}
    assert ids("&status=2&status=3") == {accepted.pk}


def test_bad_filters_are_a_400_in_json(api, world):
    response = export(api, world["handlers"][0], "&priority=9")
    assert response.status_code == 400 and "priority" in response.json()["errors"]

    response = api.as_user(world["handlers"][0]).get("/api/tickets/export/?format=xlsx")
    assert response.status_code == 400 and "format" in response.json()["errors"]


def test_more_tickets_than_the_limit_is_a_400(api, world, settings):
    settings.TOOLBOX_EXPORT_MAX_ROWS = 2
    for _ in range(3):
        world["ticket"]()

    response = export(api, world["handlers"][0])

    assert response.status_code == 400
    assert "2" in response.json()["errors"]["non_field_errors"][0]
    settings.TOOLBOX_EXPORT_MAX_ROWS = 3
    assert len(rows_of(export(api, world["handlers"][0]))) == 3


def test_export_needs_a_login(api):
    assert api.get("/api/tickets/export/?format=csv").status_code == 401
