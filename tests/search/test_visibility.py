"""Never a leak: search finds only tickets the caller may see, by text they may read, and no
snippet of an internal note (or of a note's file) reaches anyone outside the ticket's team."""

import pytest

from tests.factories import HandlerGroupFactory, UserFactory

from .conftest import ids

pytestmark = pytest.mark.django_db


def test_a_word_only_in_an_internal_note_finds_nothing_for_the_applicant(
    ticket, reply, search, applicant, agent
):
    found = ticket(title="Laptop slow", content="Since Monday.")
    note = reply(found, "Suspect the 固态硬盘 firmware, known issue", internal=True)
    reply(found, "We are looking into it.")
    for q in ("firmware", "固态", "固态硬盘 firmware"):
        assert ids(search(applicant, q)) == [], q
    response = search(agent, "firmware")
    assert ids(response) == [found.pk]
    (highlight,) = response.json()["results"][0]["highlights"]
    assert highlight["field"] == "note" and highlight["reply_id"] == note.pk
    assert "<mark>firmware</mark>" in highlight["snippet"]


def test_the_applicant_sees_no_snippet_of_a_note_on_a_ticket_they_find(
    ticket, reply, search, applicant
):
    found = ticket(title="Printer jammed", content="Tray 2.")
    reply(found, "printer needs a new roller, charge the department", internal=True)
    reply(found, "The printer is fixed.")
    response = search(applicant, "printer")
    assert ids(response) == [found.pk]
    highlights = response.json()["results"][0]["highlights"]
    assert {h["field"] for h in highlights} == {"title", "reply"}
    assert not any("roller" in h["snippet"] for h in highlights)
    # Nor what the team alone may see of the ticket itself.
    row = response.json()["results"][0]
    assert row["handler_id"] is None and row["sla_events"] is None


def test_a_notes_file_is_the_teams_only(ticket, reply, attach, search, applicant, agent):
    found = ticket(title="Crash", content="On start.")
    note = reply(found, "Attached the dump.", internal=True)
    attach(found, "kernel-dump.txt", reply=note)
    assert ids(search(applicant, "dump")) == []
    (highlight,) = [h for h in search(agent, "kernel").json()["results"][0]["highlights"]]
    assert highlight["field"] == "attachment" and highlight["reply_id"] == note.pk


def test_a_stranger_finds_nothing_of_other_peoples_tickets(
    ticket, reply, attach, search, stranger, submit
):
    others = ticket(title="Printer jammed", content="printer printer")
    reply(others, "printer fixed")
    attach(others, "printer.png")
    own = submit(title="My printer", content="x", creator=stranger)
    response = search(stranger, "printer")
    assert ids(response) == [own.pk]
    assert search(stranger, others.bill_code).json()["results"] == []


def test_an_agent_of_another_group_finds_nothing_of_this_groups(ticket, search):
    other = UserFactory(username="other-agent")
    HandlerGroupFactory(name="facilities", members=[other], assign_strategy=0)
    found = ticket(title="Printer jammed", content="x")
    assert ids(search(other, "printer")) == []
    assert ids(search(other, found.bill_code)) == []


def test_approvers_see_every_ticket_but_no_notes(ticket, reply, search, approver, staff):
    found = ticket(title="Payroll question", content="x")
    reply(found, "overtime miscalculated", internal=True)
    assert ids(search(approver, "payroll")) == [found.pk]
    assert ids(search(approver, "overtime")) == []
    assert ids(search(staff, "overtime")) == [found.pk]
