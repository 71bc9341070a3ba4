"""A watcher outside the team on the live ticket page (GET /events/ under the real ASGI
server and Redis stream): they hear of public replies, never of an internal note."""

import json
import time

import pytest

from collaboration.services.watchers import watcher_add
from tests.collaboration.watching import make_cast, reply
from tests.live.server import asgi_server, live_stream, session_for  # noqa: F401
from tests.live.sse import Events


@pytest.mark.django_db(transaction=True)
def test_a_watcher_hears_of_replies_never_of_notes(request, applicant, approver):
    base = request.getfixturevalue("asgi_server")
    cast = make_cast(applicant, approver)
    ticket = cast["ticket"]()
    watcher_add(ticket_id=ticket.pk, user_id=cast["colleague"].pk, actor=applicant)
    url = f"{base}/events/?page=ticket&ticket={ticket.pk}"
    watcher = Events(session_for(cast["colleague"]), url)
    team = Events(session_for(cast["handlers"][1]), url)
    assert watcher.response.status_code == 200
    time.sleep(0.5)  # both connected
    reply(ticket, cast["handlers"][0], "the budget is gone", internal=True)
    reply(ticket, cast["handlers"][0], "on our way")

    def kinds(stream, wait):
        frames = [f for f in stream.drain(wait=wait) if f["event"] == "change"]
        return [k for k in (json.loads(f["data"])["kind"] for f in frames) if k != "viewers"]

    assert {"note", "reply"} <= set(kinds(team, 2))
    assert kinds(watcher, 1) == ["reply"]
    watcher.close()
    team.close()
