"""GET /api/sla/report/?format=csv: the JSON report's rows and columns as a CSV attachment,
with the same filters and the same access; errors stay JSON."""

import csv
import io
from datetime import timedelta

import pytest

from sla.serializers import ReportRow
from tests.factories import HandlerGroupFactory, UserFactory
from tests.sla.conftest import T0
from ticketing.models import Category
from workflow import services

pytestmark = pytest.mark.django_db

URL = "/api/sla/report/"
WINDOW = {"from": "2026-03-01", "to": "2026-03-31"}


@pytest.fixture
def history(approved, people, rule):
    """Three completed high-priority tickets (one response and one resolve breach), and one
    low-priority ticket in the category "=HYPERLINK(1)" closed unfinished."""
    handler = people["handler"]
    for accept_after, complete_after in ((30, 120), (90, 300), (20, 60)):
        ticket = approved()
        services.ticket_accept(
            ticket_id=ticket.pk, handler=handler, now=T0 + timedelta(minutes=accept_after)
        )
        services.ticket_complete(
            ticket_id=ticket.pk, handler=handler, now=T0 + timedelta(minutes=complete_after)
        )
    Category.objects.create(name="=HYPERLINK(1)")  # a name staff could give a category
    closed = approved(priority=1, category="=HYPERLINK(1)")
    services.ticket_close(
        ticket_id=closed.pk, user=people["applicant"], now=T0 + timedelta(minutes=10)
    )
    return people


def as_csv(response) -> list[list[str]]:
    return list(csv.reader(io.StringIO(response.content.decode("utf-8"))))


def cell(value) -> str:
    return "" if value is None else str(value)


@pytest.mark.parametrize("group_by", ["handler_group", "priority", "category", "handler"])
def test_csv_has_the_json_reports_columns_and_rows(api, history, staff, group_by):
    client = api.as_user(staff)
    body = client.get(URL, {**WINDOW, "group_by": group_by}).json()
    response = client.get(URL, {**WINDOW, "group_by": group_by, "format": "csv"})
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="sla-report.csv"'
    header, *rows = as_csv(response)
    assert header == [group_by, *ReportRow().fields]
    assert header == list(body["rows"][0])  # the JSON rows' own fields, in their order
    expected = [[cell(row[column]) for column in header] for row in body["rows"]]
    if group_by == "category":  # a spreadsheet would run "=…" as a formula: quoted as text
        expected = [["'" + c if c.startswith("=") else c for c in row] for row in expected]
    assert rows == expected
    assert len(rows) == len(body["rows"]) >= 1


def test_a_category_that_looks_like_a_formula_is_quoted_as_text(api, history, staff):
    response = api.as_user(staff).get(URL, {**WINDOW, "group_by": "category", "format": "csv"})
    cells = [row[0] for row in as_csv(response)[1:]]
    assert "'=HYPERLINK(1)" in cells and "=HYPERLINK(1)" not in cells


def test_csv_honours_the_filters(api, history, staff):
    client = api.as_user(staff)
    high = as_csv(client.get(URL, {**WINDOW, "priority": 3, "format": "csv"}))
    assert len(high) == 2 and high[1][2] == "3"  # one group row, 3 tickets
    assert as_csv(client.get(URL, {**WINDOW, "category": "nope", "format": "csv"})) == [
        ["handler_group", *ReportRow().fields]
    ]  # the header alone
    march_3 = client.get(URL, {"from": "2026-03-03", "to": "2026-03-05", "format": "csv"})
    assert len(as_csv(march_3)) == 1


def test_csv_is_for_staff_and_leaders_like_the_json_report(api, history):
    leader = history["leader"]
    rows = as_csv(api.as_user(leader).get(URL, {**WINDOW, "format": "csv"}))
    assert rows[1][0] == str(history["group"].pk)

    other = HandlerGroupFactory(name="other", leader=UserFactory(username="other_lead"))
    refused = api.as_user(leader).get(URL, {**WINDOW, "handler_group": other.pk, "format": "csv"})
    assert refused.status_code == 403
    assert refused["Content-Type"] == "application/json"
    assert refused.json()["code"] == "permission_denied"

    handler = api.as_user(history["handler"]).get(URL, {**WINDOW, "format": "csv"})
    assert handler.status_code == 403 and handler.json()["code"] == "permission_denied"

    api.credentials()  # anonymous
    anonymous = api.get(URL, {"format": "csv"})
    assert anonymous.status_code == 401 and anonymous.json()["code"] == "not_authenticated"


def test_bad_filters_are_a_json_400_naming_the_field(api, history, staff):
    response = api.as_user(staff).get(URL, {"from": "soon", "format": "csv"})
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert list(response.json()["errors"]) == ["from"]


def test_json_stays_the_default_and_an_unknown_format_is_a_json_404(api, history, staff):
    client = api.as_user(staff)
    default = client.get(URL, WINDOW)
    assert default["Content-Type"] == "application/json"
    assert default.json()["rows"][0]["count"] == 4
    assert client.get(URL, {**WINDOW, "format": "json"}).json() == default.json()
    unknown = client.get(URL, {**WINDOW, "format": "xml"})
    assert unknown.status_code == 404
    assert unknown.json()["code"] == "not_found"


def test_accept_text_csv_also_gets_the_csv(api, history, staff):
    response = api.as_user(staff).get(URL, WINDOW, HTTP_ACCEPT="text/csv")
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert as_csv(response)[0][0] == "handler_group"
