"""Who may do what, as one table: every API endpoint and every console and inbox page, for
every kind of caller, with the status each must get.

The rules (ticketing/access.py is their home): a ticket the caller may not see is a 404
everywhere; a visible ticket whose action the caller may not take is a 403 (the console
re-renders the ticket page with 403, or 409 for an illegal state, 400 for bad input). A
refused write changes nothing. The applicant's view of a ticket is its public story."""

import re
from typing import NamedTuple

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, Permission
from django.db.models import Model

from handler_groups.models import HandlerGroup
from notifications.models import Notification
from notifications.sending import send
from routing.models import AgentPresence
from sla import services as sla_services
from tests.factories import HandlerGroupFactory, StaffFactory, UserFactory
from ticketing.models import ReplyType, Ticket, TicketRecord, TicketReply
from workflow import services as ticket_services

pytestmark = pytest.mark.django_db

# Columns of the table, in this order.
ROLES = (
    "anonymous",  # no credentials
    "applicant",  # created every ticket below
    "other_applicant",  # in no group
    "member",  # member of the tickets' group "support"
    "other_member",  # member of "facilities" only
    "leader",  # leader of "support", not a member
    "approver",  # ticketing.approve_ticket, in no group
    "staff",  # is_staff, in no group
)

# Tickets, all created by the applicant. "support" (the manual strategy, 0: an approved ticket
# waits in its pool) has members member and colleague and leader leader.
TICKETS = {
    "sub": "awaiting approval, group support",
    "sub_ng": "awaiting approval, no group",
    "pool": "approved, support, waiting in the pool",
    "ng": "approved, no group, waiting in the no-group pool",
    "proc": "support, accepted by member (its handler)",
    "asg": "support, handed to member by the leader, not yet accepted",
    "col": "support, accepted by colleague",
    "colp": "support, accepted by colleague, who paused its resolve clock",
    "ng_proc": "no group, accepted by member",
}
# Other placeholders: {group} is support, {msg} a message in the applicant's inbox.

BODIES = {
    "ticket": {"title": "Printer on fire", "content": "It is on fire.", "priority": 2},
    "reply": {"reply_type": "public", "content": "Any news?"},
    "note": {"reply_type": "internal", "content": "Handler-only note."},
    "freply": {"reply_type": "1", "content": "Any news?"},  # the console's reply form
    "fnote": {"reply_type": "2", "content": "Handler-only note."},
    "reason": {"reason": "Not our department."},
    "to_col": {"handler_id": "{colleague}"},
    "to_mem": {"handler_id": "{member}"},
    "group": {"name": "matrix-new"},
    "rename": {"name": "renamed"},
    "busy": {"state": "busy"},
    "bulk": {"ticket": "{sub}"},  # the approvals queue's "Approve selected"
    "sim": {"synthetic": {"agents": 2, "calls": 5}},
    "simgrp": {"group": "{group}", "from": "2026-11-02", "to": "2026-11-02"},
    "rank": {
        "queue": [
            {
                "uid": "matrix-1",
                "already_wait_time": 60,
                "is_online": 1,
                "is_complaint": 0,
                "confirm_num": 0,
                "not_confirm_num": 0,
            }
        ]
    },
}

# URLs under /api/ authenticate with a token (anonymous sends none); the rest (console, inbox,
# /metrics) with a Django session. Statuses per role, in ROLES order; "lgn" is a 302 to the
# login page. A console action that succeeds redirects (302) back to a page. Columns: anonymous,
# applicant, other_applicant, member, other_member, leader, approver, staff.
# fmt: off
MATRIX = [
    # method url                                     body       ano apl oap mbr omb ldr apv stf
    # --- tickets: lists and queues
    ("GET   /api/tickets/",                          None,     "401 200 200 200 200 200 200 200"),
    ("POST  /api/tickets/",                          "ticket", "401 201 201 201 201 201 201 201"),
    ("GET   /api/tickets/pool/?view=pending",        None,     "401 200 200 200 200 200 200 200"),
    ("GET   /api/tickets/pool/?view=my_handling",    None,     "401 200 200 200 200 200 200 200"),
    ("GET   /api/tickets/pool/?view=all",            None,     "401 200 200 200 200 200 200 200"),
    ("GET   /api/tickets/awaiting-approval/",        None,     "401 403 403 403 403 403 200 200"),
    # --- tickets: reading one
    ("GET   /api/tickets/{sub}/",                    None,     "401 200 404 404 404 404 200 200"),
    ("GET   /api/tickets/{sub_ng}/",                 None,     "401 200 404 404 404 404 200 200"),
    ("GET   /api/tickets/{pool}/",                   None,     "401 200 404 200 404 200 200 200"),
    ("GET   /api/tickets/{ng}/",                     None,     "401 200 404 200 200 200 200 200"),
    ("GET   /api/tickets/{col}/",                    None,     "401 200 404 200 404 200 200 200"),
    ("GET   /api/tickets/{ng_proc}/",                None,     "401 200 404 200 200 200 200 200"),
    ("GET   /api/tickets/{pool}/replies/",           None,     "401 200 404 200 404 200 200 200"),
    ("GET   /api/tickets/{ng}/replies/",             None,     "401 200 404 200 200 200 200 200"),
    ("GET   /api/tickets/{pool}/records/",           None,     "401 200 404 200 404 200 200 200"),
    ("GET   /api/tickets/{ng}/records/",             None,     "401 200 404 200 200 200 200 200"),
    ("GET   /api/tickets/{sub}/routing/",            None,     "401 404 404 404 404 404 404 200"),
    ("GET   /api/tickets/{pool}/routing/",           None,     "401 404 404 200 404 200 404 200"),
    ("GET   /api/tickets/{ng}/routing/",             None,     "401 404 404 200 200 200 404 200"),
    ("GET   /api/tickets/{col}/routing/",            None,     "401 404 404 200 404 200 404 200"),
    # --- tickets: replies
    ("POST  /api/tickets/{pool}/replies/",           "reply",  "401 201 404 201 404 201 403 201"),
    ("POST  /api/tickets/{ng}/replies/",             "reply",  "401 201 404 201 201 201 403 201"),
    ("POST  /api/tickets/{pool}/replies/",           "note",   "401 403 404 201 404 201 403 201"),
    ("POST  /api/tickets/{ng}/replies/",             "note",   "401 403 404 201 201 201 403 201"),
    # --- tickets: approval
    ("POST  /api/tickets/{sub}/approve/",            None,     "401 403 404 404 404 404 200 200"),
    ("POST  /api/tickets/{ng}/approve/",             None,     "401 403 404 403 403 403 409 409"),
    ("POST  /api/tickets/{sub}/reject/",             "reason", "401 403 404 404 404 404 200 200"),
    ("POST  /api/tickets/{ng}/reject/",              "reason", "401 403 404 403 403 403 409 409"),
    ("POST  /api/tickets/{sub}/cancel/",             None,     "401 200 404 404 404 404 403 403"),
    ("POST  /api/tickets/{pool}/cancel/",            None,     "401 409 404 403 404 403 403 403"),
    # --- tickets: handling
    ("POST  /api/tickets/{pool}/accept/",            None,     "401 403 404 200 404 403 403 403"),
    ("POST  /api/tickets/{ng}/accept/",              None,     "401 403 404 200 200 200 403 200"),
    ("POST  /api/tickets/{asg}/decline/",            "reason", "401 403 404 200 404 403 403 403"),
    ("POST  /api/tickets/{proc}/decline/",           "reason", "401 403 404 409 404 403 403 403"),
    ("POST  /api/tickets/{pool}/decline/",           "reason", "401 403 404 409 404 403 403 403"),
    ("POST  /api/tickets/{ng}/decline/",             "reason", "401 403 404 409 409 409 403 409"),
    ("POST  /api/tickets/{proc}/complete/",          None,     "401 403 404 200 404 403 403 403"),
    ("POST  /api/tickets/{pool}/complete/",          None,     "401 403 404 403 404 403 403 403"),
    ("POST  /api/tickets/{asg}/complete/",           None,     "401 403 404 409 404 403 403 403"),
    ("POST  /api/tickets/{ng_proc}/complete/",       None,     "401 403 404 200 403 403 403 403"),
    ("POST  /api/tickets/{pool}/close/",             None,     "401 200 404 403 404 403 403 200"),
    ("POST  /api/tickets/{ng}/close/",               None,     "401 200 404 403 403 403 403 200"),
    ("POST  /api/tickets/{col}/pause/",              None,     "401 403 404 403 404 200 403 200"),
    ("POST  /api/tickets/{proc}/pause/",             None,     "401 403 404 200 404 200 403 200"),
    ("POST  /api/tickets/{ng}/pause/",               None,     "401 403 404 403 403 403 403 200"),
    ("POST  /api/tickets/{colp}/resume/",            None,     "401 403 404 403 404 200 403 200"),
    ("POST  /api/tickets/{pool}/resume/",            None,     "401 403 404 403 404 409 403 409"),
    ("POST  /api/tickets/{pool}/transfer/",          "to_col", "401 403 404 403 404 200 403 200"),
    ("POST  /api/tickets/{ng}/transfer/",            "to_mem", "401 403 404 403 403 403 403 200"),
    # --- handler groups and presence
    ("GET   /api/handler-groups/",                   None,     "401 200 200 200 200 200 200 200"),
    ("POST  /api/handler-groups/",                   "group",  "401 403 403 403 403 403 403 201"),
    ("GET   /api/handler-groups/{group}/",           None,     "401 200 200 200 200 200 200 200"),
    ("PATCH /api/handler-groups/{group}/",           "rename", "401 403 403 403 403 403 403 200"),
    ("GET   /api/presence/",                         None,     "401 200 200 200 200 200 200 200"),
    ("POST  /api/presence/heartbeat/",               None,     "401 403 403 200 200 403 403 403"),
    ("POST  /api/presence/state/",                   "busy",   "401 403 403 200 200 403 403 403"),
    # --- notifications ({msg} is the applicant's)
    ("GET   /api/notifications/",                    None,     "401 200 200 200 200 200 200 200"),
    ("GET   /api/notifications/unread-count/",       None,     "401 200 200 200 200 200 200 200"),
    ("GET   /api/notifications/{msg}/",              None,     "401 200 404 404 404 404 404 404"),
    ("POST  /api/notifications/{msg}/read/",         None,     "401 200 404 404 404 404 404 404"),
    ("POST  /api/notifications/read-all/",           None,     "401 200 200 200 200 200 200 200"),
    # --- reports, metrics, queueing, auth
    ("GET   /api/sla/report/",                       None,     "401 403 403 403 403 200 403 200"),
    ("GET   /api/metrics/assignment/?group={group}", None,     "401 403 403 403 403 200 403 200"),
    ("GET   /api/metrics/queue/?group={group}",      None,     "401 403 403 403 403 200 403 200"),
    ("POST  /api/queueing/rank/",                    "rank",   "401 403 403 403 403 403 403 200"),
    ("POST  /api/simulations/",                      "sim",    "401 403 403 403 403 202 403 202"),
    ("POST  /api/simulations/",                      "simgrp", "401 403 403 403 403 202 403 202"),
    ("POST  /api/auth/logout/",                      None,     "401 204 204 204 204 204 204 204"),
    ("POST  /api/auth/logout-all/",                  None,     "401 204 204 204 204 204 204 204"),
    ("GET   /metrics",                               None,     "401 403 403 403 403 403 403 200"),
    # --- console pages
    # /console/ is home by role: My work for agents; a redirect to My tickets or Approvals.
    ("GET   /console/",                              None,     "lgn 302 302 200 200 200 302 200"),
    ("GET   /console/?view=all",                     None,     "lgn 200 200 200 200 200 200 200"),
    ("GET   /console/my-tickets/",                   None,     "lgn 200 200 200 200 200 200 200"),
    ("GET   /console/approvals/",                    None,     "lgn 403 403 403 403 403 200 200"),
    ("GET   /console/submit/",                       None,     "lgn 200 200 200 200 200 200 200"),
    ("GET   /console/tickets/{sub}/",                None,     "lgn 200 404 404 404 404 200 200"),
    ("GET   /console/tickets/{sub_ng}/",             None,     "lgn 200 404 404 404 404 200 200"),
    ("GET   /console/tickets/{pool}/",               None,     "lgn 200 404 200 404 200 200 200"),
    ("GET   /console/tickets/{ng}/",                 None,     "lgn 200 404 200 200 200 200 200"),
    ("GET   /console/tickets/{col}/",                None,     "lgn 200 404 200 404 200 200 200"),
    # --- console actions
    ("POST  /console/tickets/{pool}/accept/",        None,     "lgn 403 404 302 404 403 403 403"),
    ("POST  /console/tickets/{ng}/accept/",          None,     "lgn 403 404 302 302 302 403 302"),
    ("POST  /console/tickets/{asg}/decline/",        "reason", "lgn 403 404 302 404 403 403 403"),
    ("POST  /console/tickets/{proc}/decline/",       "reason", "lgn 403 404 409 404 403 403 403"),
    ("POST  /console/tickets/{pool}/reply/",         "freply", "lgn 302 404 302 404 302 403 302"),
    ("POST  /console/tickets/{ng}/reply/",           "freply", "lgn 302 404 302 302 302 403 302"),
    ("POST  /console/tickets/{pool}/reply/",         "fnote",  "lgn 403 404 302 404 302 403 302"),
    ("POST  /console/tickets/{ng}/reply/",           "fnote",  "lgn 403 404 302 302 302 403 302"),
    ("POST  /console/tickets/{col}/pause/",          None,     "lgn 403 404 403 404 302 403 302"),
    ("POST  /console/tickets/{proc}/pause/",         None,     "lgn 403 404 302 404 302 403 302"),
    ("POST  /console/tickets/{colp}/resume/",        None,     "lgn 403 404 403 404 302 403 302"),
    ("POST  /console/tickets/{pool}/resume/",        None,     "lgn 403 404 403 404 409 403 409"),
    ("POST  /console/tickets/{proc}/complete/",      None,     "lgn 403 404 302 404 403 403 403"),
    ("POST  /console/tickets/{pool}/complete/",      None,     "lgn 403 404 403 404 403 403 403"),
    ("POST  /console/tickets/{asg}/complete/",       None,     "lgn 403 404 409 404 403 403 403"),
    ("POST  /console/tickets/{pool}/transfer/",      "to_col", "lgn 403 404 403 404 302 403 302"),
    ("POST  /console/tickets/{ng}/transfer/",        "to_mem", "lgn 403 404 403 403 403 403 302"),
    ("POST  /console/tickets/{pool}/close/",         None,     "lgn 302 404 403 404 403 403 302"),
    ("POST  /console/tickets/{ng}/close/",           None,     "lgn 302 404 403 403 403 403 302"),
    ("POST  /console/tickets/{sub}/approve/",        None,     "lgn 403 404 404 404 404 302 302"),
    ("POST  /console/tickets/{ng}/approve/",         None,     "lgn 403 404 403 403 403 409 409"),
    ("POST  /console/tickets/{sub}/reject/",         "reason", "lgn 403 404 404 404 404 302 302"),
    ("POST  /console/tickets/{ng}/reject/",          "reason", "lgn 403 404 403 403 403 409 409"),
    ("POST  /console/approvals/bulk/",               "bulk",   "lgn 403 403 403 403 403 302 302"),
    # --- inbox pages ({msg} is the applicant's)
    ("GET   /inbox/",                                None,     "lgn 200 200 200 200 200 200 200"),
    ("POST  /inbox/{msg}/read/",                     None,     "lgn 302 404 404 404 404 404 404"),
    ("POST  /inbox/read-all/",                       None,     "lgn 302 302 302 302 302 302 302"),
]
# fmt: on

LOGIN = "lgn"


class Cell(NamedTuple):
    method: str
    url: str
    body: str | None  # a key of BODIES
    role: str
    expected: int | str  # a status, or LOGIN

    @property
    def auth(self) -> str:
        return "api" if self.url.startswith("/api/") else "session"


def _cell_id(method: str, url: str, body: str | None, role: str) -> str:
    path = re.sub(r"[^A-Za-z0-9=_]+", "_", url).strip("_")
    return "-".join(part for part in (method, path, body, role) if part)


def _cells() -> list:
    cells = []
    for request, body, statuses in MATRIX:
        method, url = request.split()
        expected = statuses.split()
        assert len(expected) == len(ROLES), url
        assert body is None or body in BODIES, body
        for role, status in zip(ROLES, expected, strict=True):
            cell = Cell(method, url, body, role, status if status == LOGIN else int(status))
            cells.append(pytest.param(cell, id=_cell_id(method, url, body, role)))
    ids = [cell.id for cell in cells]
    assert len(set(ids)) == len(ids), "two rows of the matrix are the same"
    return cells


CELLS = _cells()

REFUSED = {LOGIN, 400, 401, 403, 404, 409}
WRITES = {"POST", "PATCH"}


# --- the world each cell starts from --------------------------------------------------------


class World:
    """The users, the two groups and, built on first use, the tickets of TICKETS and the
    applicant's message. Works as the mapping that fills the table's placeholders ("{pool}"
    → that ticket's id)."""

    def __init__(self):
        # One INSERT for everyone: the matrix builds this world for each of its cells.
        users = get_user_model().objects.bulk_create(
            [UserFactory.build(username=name) for name in (*ROLES[1:-1], "colleague")]
            + [StaffFactory.build(username="staff")]
        )
        self.users = {user.username: user for user in users}
        self.users["approver"].user_permissions.add(
            Permission.objects.get(codename="approve_ticket")
        )
        self.group = HandlerGroupFactory(
            name="support",
            leader=self.users["leader"],
            members=[self.users["member"], self.users["colleague"]],
            assign_strategy=0,
        )
        HandlerGroupFactory(
            name="facilities", members=[self.users["other_member"]], assign_strategy=0
        )
        self.tickets: dict[str, Ticket] = {}
        self._message: Notification | None = None

    def __getitem__(self, key: str) -> int:
        if key in self.users:
            return self.users[key].pk
        if key == "group":
            return self.group.pk
        if key == "msg":
            return self.message.pk
        return self.ticket(key).pk

    def user(self, role: str) -> AbstractBaseUser | None:
        return None if role == "anonymous" else self.users[role]

    @property
    def message(self) -> Notification:
        if self._message is None:
            self._message = send(
                recipients=[self.users["applicant"]],
                template_code="ticket-sla-warn",
                params={"billCode": "TK1", "title": "VPN", "type": "resolve", "deadline": "17:00"},
                dedupe_key="matrix",
            )[0]
        return self._message

    def ticket(self, kind: str) -> Ticket:
        if kind not in self.tickets:
            self.tickets[kind] = self._build(kind)
        return self.tickets[kind]

    def _build(self, kind: str) -> Ticket:
        assert kind in TICKETS, kind
        group = None if kind.startswith(("ng", "sub_ng")) else self.group
        ticket = ticket_services.ticket_submit(
            creator=self.users["applicant"],
            title="VPN down",
            content="Cannot connect.",
            priority=3,
            handler_group_id=group.pk if group else None,
        )
        if kind.startswith("sub"):
            return ticket
        ticket = ticket_services.ticket_approve(
            ticket_id=ticket.pk, approver=self.users["approver"]
        )
        if kind in ("proc", "ng_proc", "col", "colp"):
            handler = self.users["colleague" if kind.startswith("col") else "member"]
            ticket = ticket_services.ticket_accept(ticket_id=ticket.pk, handler=handler)
        if kind == "colp":
            ticket = sla_services.sla_pause(ticket_id=ticket.pk, user=self.users["colleague"])
        if kind == "asg":
            ticket = ticket_services.ticket_transfer(
                ticket_id=ticket.pk, user=self.users["leader"], handler_id=self.users["member"].pk
            )
        return ticket


@pytest.fixture
def world(db) -> World:
    return World()


SNAPSHOT_MODELS: tuple[type[Model], ...] = (
    Ticket,
    TicketReply,
    TicketRecord,
    AgentPresence,
    HandlerGroup,
    Notification,
)


def snapshot() -> dict[str, list[tuple]]:
    """Every row of the tables a refused write could touch, as tuples of column values."""
    return {
        model.__name__: list(
            model.objects.order_by("pk").values_list(
                *(field.attname for field in model._meta.concrete_fields)
            )
        )
        for model in SNAPSHOT_MODELS
    }


def _body(name: str | None, world: World) -> dict:
    """The named body with "{placeholder}" values replaced by ids."""
    body = {}
    for key, value in BODIES.get(name, {}).items():
        if isinstance(value, str) and value.startswith("{") and value.endswith("}"):
            value = int(value.format_map(world))
        body[key] = value
    return body


# --- the matrix -----------------------------------------------------------------------------


@pytest.mark.parametrize("cell", CELLS)
def test_access_matrix(cell, world, api, client):
    url = cell.url.format_map(world)
    body = _body(cell.body, world)
    user = world.user(cell.role)
    if cell.auth == "api":
        caller = api.as_user(user) if user is not None else api
        options = {"format": "json"} if cell.method in WRITES else {}
    else:
        if user is not None:
            client.force_login(user)
        caller, options = client, {}
    refused_write = cell.method in WRITES and cell.expected in REFUSED
    before = snapshot() if refused_write else None

    send_request = getattr(caller, cell.method.lower())
    if cell.method in WRITES:
        response = send_request(url, body, **options)
    else:
        response = send_request(url, **options)

    got, location = response.status_code, response.get("Location", "")
    problems = []
    if cell.expected == LOGIN:
        if got != 302 or not location.startswith("/accounts/login/"):
            problems.append(f"expected a redirect to the login page, got {got} {location}")
    elif got != cell.expected:
        problems.append(f"expected {cell.expected}, got {got}: {response.content[:300]!r}")
    elif got == 302 and location.startswith("/accounts/login/"):
        problems.append(f"a logged-in caller was sent to the login page: {location}")
    if refused_write and snapshot() != before:
        problems.append(f"the refused {cell.method} {url} changed rows")
    assert not problems, problems


# --- the applicant's public story -----------------------------------------------------------


@pytest.fixture
def worked_ticket(world):
    """A support ticket with the whole staff-side story: accepted by member, an internal note
    and a public reply, paused and resumed, then handed to colleague by the leader."""
    ticket = world.ticket("proc")
    member = world.users["member"]
    ticket_services.ticket_reply(
        ticket_id=ticket.pk,
        author=member,
        reply_type=ReplyType.INTERNAL,
        content="Handler-only note.",
    )
    ticket_services.ticket_reply(
        ticket_id=ticket.pk,
        author=member,
        reply_type=ReplyType.PUBLIC,
        content="Restart the router.",
    )
    sla_services.sla_pause(ticket_id=ticket.pk, user=member)
    sla_services.sla_resume(ticket_id=ticket.pk, user=member)
    ticket_services.ticket_transfer(
        ticket_id=ticket.pk, user=world.users["leader"], handler_id=world.users["colleague"].pk
    )
    return ticket


PUBLIC_ACTIONS = {"submit", "approve", "reject", "cancel", "reply", "complete", "close"}


@pytest.mark.parametrize("role", ["applicant", "approver"])
def test_outsiders_read_no_internal_note_routing_or_sla_record(role, world, worked_ticket, api):
    records = api.as_user(world.users[role]).get(f"/api/tickets/{worked_ticket.pk}/records/").json()

    actions = [r["action"] for r in records]
    assert actions == ["submit", "approve", "reply"]
    assert set(actions) <= PUBLIC_ACTIONS
    replies = [r for r in records if r["action"] == "reply"]
    assert [r["detail"].get("reply_type") for r in replies] == ["public"]
    assert not any("handler_id" in r["detail"] or "to_handler_id" in r["detail"] for r in records)


def test_the_team_reads_the_whole_record(world, worked_ticket, api):
    """The contrast that shows the public story is a filter, not an empty trail."""
    records = (
        api.as_user(world.users["member"]).get(f"/api/tickets/{worked_ticket.pk}/records/").json()
    )

    actions = [r["action"] for r in records]
    assert actions.count("reply") == 2
    assert {"enter_pool", "accept", "sla_pause", "sla_resume", "transfer"} <= set(actions)


@pytest.mark.parametrize("role", ["applicant", "approver"])
def test_outsiders_see_public_reply_count_and_no_handler_or_sla_rule(
    role, world, worked_ticket, api
):
    client = api.as_user(world.users[role])

    detail = client.get(f"/api/tickets/{worked_ticket.pk}/").json()
    listed = next(
        t for t in client.get("/api/tickets/").json()["results"] if t["id"] == worked_ticket.pk
    )
    replies = client.get(f"/api/tickets/{worked_ticket.pk}/replies/").json()

    for body in (detail, listed):
        assert body["reply_count"] == 1
        assert body["handler_id"] is None
        assert body["sla_rule_id"] is None
    assert [r["reply_type"] for r in replies] == ["public"]


def test_the_team_sees_every_reply_the_handler_and_the_sla_rule(world, worked_ticket, api):
    body = api.as_user(world.users["member"]).get(f"/api/tickets/{worked_ticket.pk}/").json()

    assert body["reply_count"] == 2
    assert body["handler_id"] == world.users["colleague"].pk
    assert body["sla_rule_id"] is not None


# --- presence belongs to group members ------------------------------------------------------


@pytest.mark.parametrize("role", ["applicant", "other_applicant", "leader", "approver", "staff"])
@pytest.mark.parametrize(
    ("url", "body"),
    [("/api/presence/heartbeat/", {}), ("/api/presence/state/", {"state": "available"})],
)
def test_non_members_get_no_presence_row(role, url, body, world, api):
    user = world.users[role]

    response = api.as_user(user).post(url, body, format="json")

    assert response.status_code == 403
    assert not AgentPresence.objects.filter(pk=user.pk).exists()


def test_a_member_heartbeat_creates_their_presence_row(world, api):
    member = world.users["member"]

    response = api.as_user(member).post("/api/presence/heartbeat/", {}, format="json")

    assert response.status_code == 200
    assert AgentPresence.objects.filter(pk=member.pk).exists()


# --- lists show only what the caller may see ------------------------------------------------

LISTED_KINDS = ("sub", "sub_ng", "pool", "ng", "col")
# role: (in GET /api/tickets/, in the pool's "all" view, API and console)
VISIBLE_IN_LISTS = {
    "applicant": (set(LISTED_KINDS), set()),
    "other_applicant": (set(), set()),
    "member": ({"pool", "ng", "col"},) * 2,
    "other_member": ({"ng"},) * 2,
    "leader": ({"pool", "ng", "col"},) * 2,
    "approver": (set(LISTED_KINDS), set()),
    "staff": (set(LISTED_KINDS), {"pool", "ng", "col"}),
}


@pytest.mark.parametrize("role", list(VISIBLE_IN_LISTS))
def test_lists_hold_only_visible_tickets(role, world, api, client):
    tickets = {kind: world.ticket(kind) for kind in LISTED_KINDS}
    by_id = {ticket.pk: kind for kind, ticket in tickets.items()}
    user = world.users[role]
    expected_list, expected_pool = VISIBLE_IN_LISTS[role]
    caller = api.as_user(user)
    client.force_login(user)

    listed = caller.get("/api/tickets/").json()["results"]
    pooled = caller.get("/api/tickets/pool/?view=all").json()["results"]
    page = client.get("/console/?view=all").content.decode()

    assert {by_id[t["id"]] for t in listed} == expected_list
    assert {by_id[t["id"]] for t in pooled} == expected_pool
    on_page = {kind for kind, t in tickets.items() if f"/console/tickets/{t.pk}/" in page}
    assert on_page == expected_pool


def test_marking_all_read_leaves_other_inboxes_alone(world, api):
    notification = world.message

    api.as_user(world.users["member"]).post("/api/notifications/read-all/")

    notification.refresh_from_db()
    assert notification.read_at is None
