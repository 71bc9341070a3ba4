"""Links between tickets through the API: related, parent and child as each side says them,
the team of both, every refusal changing nothing (at most one parent, no cycles, no link to
itself, no second link between a pair, no merged ticket), what the applicant may see, the
merge relation as read-only entries, and a parent's completion refused while a child is
open."""

import pytest

from collaboration.models import LinkKind, TicketLink
from tests.factories import HandlerGroupFactory, StaffFactory, UserFactory
from ticketing.models import Ticket, TicketRecord, TicketStatus
from workflow import services

pytestmark = pytest.mark.django_db

LINK_ACTIONS = ("link_added", "link_removed")


@pytest.fixture
def desk(applicant, approver):
    """Two groups; `work(...)` makes a ticket of the applicant's that a handler of the
    support group is processing (or the facilities group, `group="facilities"`)."""
    agent, colleague, other_agent = (UserFactory(username=n) for n in ("agent", "mate", "other"))
    leader = UserFactory(username="lead")
    support = HandlerGroupFactory(
        name="support", leader=leader, members=[agent, colleague], assign_strategy=0
    )
    facilities = HandlerGroupFactory(name="facilities", members=[other_agent], assign_strategy=0)
    groups = {"support": (support, agent), "facilities": (facilities, other_agent)}

    def work(title="Part", *, group="support", creator=None, accept=True):
        handler_group, handler = groups[group]
        ticket = services.ticket_submit(
            creator=creator or applicant,
            title=title,
            content="c",
            priority=2,
            handler_group_id=handler_group.pk,
        )
        services.ticket_approve(ticket_id=ticket.pk, approver=approver)
        if accept:
            services.ticket_accept(ticket_id=ticket.pk, handler=handler)
        return Ticket.objects.get(pk=ticket.pk)

    return {
        "agent": agent,
        "colleague": colleague,
        "leader": leader,
        "other_agent": other_agent,
        "staff": StaffFactory(username="boss"),
        "work": work,
    }


def url(ticket, link_id=None):
    base = f"/api/tickets/{ticket.pk}/links/"
    return base if link_id is None else f"{base}{link_id}/"


def add(api, user, ticket, other, kind):
    other_id = other.pk if isinstance(other, Ticket) else other
    return api.as_user(user).post(url(ticket), {"ticket": other_id, "kind": kind}, format="json")


def state():
    """What a refusal must leave as it was: the links, and the link records."""
    links = sorted(TicketLink.objects.values_list("source_id", "target_id", "kind"))
    records = TicketRecord.objects.filter(action__in=LINK_ACTIONS).count()
    return links, records


def link_records(ticket):
    return [
        (r.action, r.detail)
        for r in TicketRecord.objects.filter(ticket=ticket, action__in=LINK_ACTIONS).order_by("id")
    ]


# --- adding, as each side says it ----------------------------------------------------------


def test_a_child_is_stored_from_the_child_and_each_side_says_its_kind(api, desk):
    parent, child = desk["work"]("Outage"), desk["work"]("Network part")
    response = add(api, desk["agent"], parent, child, "child")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["kind"] == "child" and body["id"] is not None and body["created"]
    assert body["ticket"] == {
        "id": child.pk,
        "bill_code": child.bill_code,
        "title": "Network part",
        "ticket_status": TicketStatus.PROCESSING,
        "process_status": 2,
        "status_label": "processing",
    }
    link = TicketLink.objects.get()
    assert (link.source_id, link.target_id, link.kind) == (child.pk, parent.pk, LinkKind.PARENT)
    assert link.created_by == desk["agent"]

    from_parent = api.as_user(desk["agent"]).get(url(parent)).json()
    from_child = api.as_user(desk["agent"]).get(url(child)).json()
    assert [(e["id"], e["kind"], e["ticket"]["id"]) for e in from_parent] == [
        (link.pk, "child", child.pk)
    ]
    assert [(e["id"], e["kind"], e["ticket"]["id"]) for e in from_child] == [
        (link.pk, "parent", parent.pk)
    ]
    # The history of each says it as seen from it.
    assert link_records(parent) == [
        ("link_added", {"ticket_id": child.pk, "bill_code": child.bill_code, "kind": "child"})
    ]
    assert link_records(child) == [
        ("link_added", {"ticket_id": parent.pk, "bill_code": parent.bill_code, "kind": "parent"})
    ]


def test_a_parent_is_stored_from_the_ticket_in_hand(api, desk):
    child, parent = desk["work"]("Part"), desk["work"]("Whole")
    assert add(api, desk["agent"], child, parent, "parent").status_code == 201
    link = TicketLink.objects.get()
    assert (link.source_id, link.target_id, link.kind) == (child.pk, parent.pk, LinkKind.PARENT)


def test_related_is_stored_once_smaller_id_first_whichever_side_adds_it(api, desk):
    first, second = desk["work"]("One"), desk["work"]("Two")
    assert add(api, desk["agent"], second, first, "related").status_code == 201
    link = TicketLink.objects.get()
    assert (link.source_id, link.target_id, link.kind) == (first.pk, second.pk, "related")
    for ticket, other in ((first, second), (second, first)):
        entries = api.as_user(desk["agent"]).get(url(ticket)).json()
        assert [(e["kind"], e["ticket"]["id"]) for e in entries] == [("related", other.pk)]
    assert link_records(first)[0][1]["kind"] == link_records(second)[0][1]["kind"] == "related"


def test_the_list_puts_the_parent_first_then_children_then_related(api, desk):
    work = desk["work"]
    ticket, parent, child_a, child_b, related = (work(t) for t in "PQRST")
    for other, kind in ((related, "related"), (child_b, "child"), (parent, "parent")):
        assert add(api, desk["agent"], ticket, other, kind).status_code == 201
    assert add(api, desk["agent"], child_a, ticket, "parent").status_code == 201
    entries = api.as_user(desk["agent"]).get(url(ticket)).json()
    assert [(e["kind"], e["ticket"]["id"]) for e in entries] == [
        ("parent", parent.pk),
        ("child", child_b.pk),
        ("child", child_a.pk),
        ("related", related.pk),
    ]


def test_staff_and_the_group_leader_may_link_across_their_teams(api, desk):
    mine, theirs = desk["work"]("Mine"), desk["work"]("Theirs", group="facilities")
    assert add(api, desk["staff"], mine, theirs, "related").status_code == 201
    other, another = desk["work"]("A"), desk["work"]("B")
    assert add(api, desk["leader"], other, another, "child").status_code == 201
    # A member of the group who does not handle it is on its team too.
    third = desk["work"]("C")
    assert add(api, desk["colleague"], third, other, "related").status_code == 201


# --- refusals: nothing changes -------------------------------------------------------------


def test_an_unknown_kind_is_a_400_naming_kind(api, desk):
    one, two = desk["work"](), desk["work"]()
    before = state()
    response = add(api, desk["agent"], one, two, "sibling")
    assert response.status_code == 400
    assert list(response.json()["errors"]) == ["kind"]
    assert state() == before


@pytest.mark.parametrize("other", ["self", 999_999_999, "abc", None, 2**70])
def test_a_ticket_that_is_itself_unknown_or_not_a_number_is_a_400_naming_ticket(api, desk, other):
    one = desk["work"]()
    before = state()
    response = add(api, desk["agent"], one, one.pk if other == "self" else other, "related")
    assert response.status_code == 400, response.json()
    assert list(response.json()["errors"]) == ["ticket"]
    assert state() == before


def test_a_ticket_the_caller_may_not_see_is_a_400_naming_ticket(api, desk):
    mine, hidden = desk["work"](), desk["work"](group="facilities")
    before = state()
    response = add(api, desk["agent"], mine, hidden, "related")
    assert response.status_code == 400
    assert response.json()["errors"]["ticket"] == ["No such ticket, or you may not see it."]
    assert state() == before


def test_a_ticket_in_the_url_the_caller_may_not_see_is_a_404(api, desk):
    hidden, mine = desk["work"](group="facilities"), desk["work"]()
    before = state()
    assert add(api, desk["agent"], hidden, mine, "related").status_code == 404
    assert api.as_user(desk["agent"]).get(url(hidden)).status_code == 404
    assert state() == before


def test_a_visible_ticket_not_on_the_callers_team_is_a_403(api, desk, applicant):
    one, two = desk["work"](), desk["work"]()
    # The agent's own request to facilities: they see it (they filed it) but do not work on it.
    own = desk["work"]("My laptop", group="facilities", creator=desk["agent"])
    before = state()
    response = add(api, desk["agent"], one, own, "related")
    assert response.status_code == 403
    assert own.bill_code in response.json()["detail"]
    # The applicant sees both of theirs, and is on the team of neither.
    assert add(api, applicant, one, two, "related").status_code == 403
    assert state() == before


def test_a_ticket_has_at_most_one_parent(api, desk):
    child, parent, other = desk["work"](), desk["work"](), desk["work"]()
    assert add(api, desk["agent"], child, parent, "parent").status_code == 201
    before = state()
    response = add(api, desk["agent"], child, other, "parent")
    assert response.status_code == 400
    assert "at most one parent" in response.json()["errors"]["kind"][0]
    # The same, said from the other parent: the body's ticket is the one that has a parent.
    response = add(api, desk["agent"], other, child, "child")
    assert response.status_code == 400
    assert "at most one parent" in response.json()["errors"]["ticket"][0]
    assert state() == before


def test_a_direct_cycle_is_a_400(api, desk):
    a, b = desk["work"]("A"), desk["work"]("B")
    assert add(api, desk["agent"], b, a, "parent").status_code == 201  # A is B's parent
    before = state()
    for ticket, other, kind in ((a, b, "parent"), (b, a, "child")):
        response = add(api, desk["agent"], ticket, other, kind)
        assert response.status_code == 400, response.json()
        assert "cycle" in response.json()["errors"]["kind"][0]
    assert state() == before


def test_a_three_long_cycle_is_a_400(api, desk):
    a, b, c = desk["work"]("A"), desk["work"]("B"), desk["work"]("C")
    assert add(api, desk["agent"], a, b, "child").status_code == 201  # A parent of B
    assert add(api, desk["agent"], b, c, "child").status_code == 201  # B parent of C
    before = state()
    response = add(api, desk["agent"], c, a, "child")  # C parent of A: a cycle
    assert response.status_code == 400
    assert "cycle" in response.json()["errors"]["kind"][0]
    response = add(api, desk["agent"], a, c, "parent")  # the same, from A
    assert response.status_code == 400
    assert state() == before
    # Not a cycle: C's child may be a fourth ticket, and A may have another child.
    d = desk["work"]("D")
    assert add(api, desk["agent"], c, d, "child").status_code == 201
    assert add(api, desk["agent"], a, desk["work"]("E"), "child").status_code == 201


@pytest.mark.parametrize(
    ("first", "again"),
    [("related", "related"), ("child", "child"), ("related", "child"), ("child", "related")],
)
def test_a_second_link_between_the_same_pair_is_a_409(api, desk, first, again):
    one, two = desk["work"](), desk["work"]()
    assert add(api, desk["agent"], one, two, first).status_code == 201
    before = state()
    for ticket, other in ((one, two), (two, one)):
        kind = {"child": "parent"}.get(again, again) if ticket is two else again
        response = add(api, desk["agent"], ticket, other, kind)
        assert response.status_code == 409, (ticket, kind, response.json())
        assert "already linked" in response.json()["detail"]
    assert state() == before


def test_a_merged_ticket_cannot_be_linked(api, desk):
    kept, duplicate, other = desk["work"](), desk["work"](), desk["work"]()
    Ticket.objects.filter(pk=duplicate.pk).update(merged_into=kept)
    before = state()
    for ticket, target in ((other, duplicate), (duplicate, other)):
        response = add(api, desk["agent"], ticket, target, "related")
        assert response.status_code == 409
        assert duplicate.bill_code in response.json()["detail"]
    assert state() == before


# --- removing ------------------------------------------------------------------------------


def test_removing_a_link_records_it_on_both_tickets(api, desk):
    parent, child = desk["work"](), desk["work"]()
    link_id = add(api, desk["agent"], child, parent, "parent").json()["id"]
    response = api.as_user(desk["colleague"]).delete(url(parent, link_id))
    assert response.status_code == 204
    assert not TicketLink.objects.exists()
    assert link_records(parent)[-1] == (
        "link_removed",
        {"ticket_id": child.pk, "bill_code": child.bill_code, "kind": "child"},
    )
    assert link_records(child)[-1] == (
        "link_removed",
        {"ticket_id": parent.pk, "bill_code": parent.bill_code, "kind": "parent"},
    )
    # Gone: a second removal is a 404.
    assert api.as_user(desk["agent"]).delete(url(parent, link_id)).status_code == 404


def test_a_link_that_is_not_this_tickets_is_a_404(api, desk):
    one, two, three = desk["work"](), desk["work"](), desk["work"]()
    link_id = add(api, desk["agent"], one, two, "related").json()["id"]
    before = state()
    assert api.as_user(desk["agent"]).delete(url(three, link_id)).status_code == 404
    assert api.as_user(desk["agent"]).delete(url(one, link_id + 1000)).status_code == 404
    assert state() == before


def test_removing_needs_the_team_of_both(api, desk, applicant):
    mine, theirs = desk["work"](), desk["work"](group="facilities")
    link_id = add(api, desk["staff"], mine, theirs, "related").json()["id"]
    before = state()
    # The agent works on one of them only; the applicant on neither; an outsider sees neither.
    assert api.as_user(desk["agent"]).delete(url(mine, link_id)).status_code == 403
    assert api.as_user(applicant).delete(url(mine, link_id)).status_code == 403
    stranger = UserFactory(username="stranger")
    assert api.as_user(stranger).delete(url(mine, link_id)).status_code == 404
    assert state() == before
    assert api.as_user(desk["staff"]).delete(url(theirs, link_id)).status_code == 204


# --- who sees what -------------------------------------------------------------------------


def test_the_applicant_sees_only_links_to_tickets_they_may_see(api, desk, applicant):
    mine, also_mine = desk["work"]("Mine"), desk["work"]("Also mine")
    someone = UserFactory(username="someone")
    theirs = desk["work"]("Someone else's", creator=someone)
    assert add(api, desk["agent"], mine, theirs, "child").status_code == 201
    assert add(api, desk["agent"], mine, also_mine, "related").status_code == 201

    seen = api.as_user(applicant).get(url(mine))
    assert seen.status_code == 200
    assert [(e["kind"], e["ticket"]["id"]) for e in seen.json()] == [("related", also_mine.pk)]
    # The team sees both; someone else's applicant sees the link to theirs only.
    team = api.as_user(desk["agent"]).get(url(mine)).json()
    assert {e["ticket"]["id"] for e in team} == {theirs.pk, also_mine.pk}
    assert api.as_user(someone).get(url(mine)).status_code == 404
    assert [e["ticket"]["id"] for e in api.as_user(someone).get(url(theirs)).json()] == []


def test_the_merge_relation_is_listed_read_only(api, desk):
    kept, duplicate = desk["work"]("Kept"), desk["work"]("Duplicate")
    Ticket.objects.filter(pk=duplicate.pk).update(merged_into=kept, ticket_status=5)
    into = api.as_user(desk["agent"]).get(url(duplicate)).json()
    assert [(e["id"], e["kind"], e["ticket"]["id"]) for e in into] == [
        (None, "merged_into", kept.pk)
    ]
    merged = api.as_user(desk["agent"]).get(url(kept)).json()
    assert [(e["id"], e["kind"], e["ticket"]["bill_code"]) for e in merged] == [
        (None, "merged_from", duplicate.bill_code)
    ]
    assert merged[0]["ticket"]["status_label"] == "closed"


def test_the_list_is_three_queries_however_many_links(api, desk, django_assert_max_num_queries):
    ticket = desk["work"]()
    for i in range(6):
        add(api, desk["agent"], ticket, desk["work"](f"part {i}"), "child" if i % 2 else "related")
    from collaboration.selectors.links import links_of

    with django_assert_max_num_queries(3 + 2):  # (+ the audience's two reads)
        entries = links_of(desk["agent"], ticket)
        [e.ticket.bill_code + e.ticket.title + str(e.ticket.handler_id) for e in entries]
    assert len(entries) == 6


# --- a parent's completion -----------------------------------------------------------------


def test_a_parent_with_an_open_child_is_not_completed_and_the_409_lists_it(api, desk):
    parent, open_child, done_child = desk["work"]("Whole"), desk["work"](), desk["work"]()
    for child in (open_child, done_child):
        assert add(api, desk["agent"], parent, child, "child").status_code == 201
    services.ticket_complete(ticket_id=done_child.pk, handler=desk["agent"])
    records = TicketRecord.objects.filter(ticket=parent).count()

    response = api.as_user(desk["agent"]).post(f"/api/tickets/{parent.pk}/complete/")
    assert response.status_code == 409
    body = response.json()
    assert body["code"] == "conflict" and open_child.bill_code in body["detail"]
    assert body["open_children"] == [
        {
            "id": open_child.pk,
            "bill_code": open_child.bill_code,
            "ticket_status": TicketStatus.PROCESSING,
            "process_status": 2,
        }
    ]
    parent.refresh_from_db()
    assert parent.ticket_status == TicketStatus.PROCESSING and parent.completed_time is None
    assert TicketRecord.objects.filter(ticket=parent).count() == records

    # Once the child is closed (or completed), the parent may be completed.
    services.ticket_close(ticket_id=open_child.pk, user=open_child.creator)
    response = api.as_user(desk["agent"]).post(f"/api/tickets/{parent.pk}/complete/")
    assert response.status_code == 200, response.json()
    assert response.json()["ticket_status"] == TicketStatus.COMPLETED


def test_a_child_still_in_the_pool_stops_its_parent_too(api, desk):
    parent, child = desk["work"](), desk["work"](accept=False)
    assert add(api, desk["agent"], parent, child, "child").status_code == 201
    response = api.as_user(desk["agent"]).post(f"/api/tickets/{parent.pk}/complete/")
    assert response.status_code == 409
    assert [c["id"] for c in response.json()["open_children"]] == [child.pk]
    services.ticket_accept(ticket_id=child.pk, handler=desk["agent"])
    services.ticket_complete(ticket_id=child.pk, handler=desk["agent"])
    assert api.as_user(desk["agent"]).post(f"/api/tickets/{parent.pk}/complete/").status_code == 200


def test_related_tickets_and_a_parent_do_not_stop_a_completion(api, desk):
    ticket, parent, related = desk["work"](), desk["work"](), desk["work"]()
    assert add(api, desk["agent"], ticket, parent, "parent").status_code == 201
    assert add(api, desk["agent"], ticket, related, "related").status_code == 201
    assert api.as_user(desk["agent"]).post(f"/api/tickets/{ticket.pk}/complete/").status_code == 200
