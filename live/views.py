"""GET /events/: the Server-Sent Events stream of one open page (served by Django's ASGI
handler: config/asgi.py). Session-authenticated; 403 for anonymous callers, 400 naming a bad
parameter, 404 for a ticket the caller may not see (the ticket page's own rule).

May import: live.stream, live.viewers, live.events, ticketing, config."""

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator

from asgiref.sync import sync_to_async
from django.db import connections
from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from ticketing import access
from ticketing.models import Ticket

from . import stream
from .stream import Listener, Presence

logger = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 15
# How long the browser waits before reconnecting after the connection dropped.
RETRY_MS = 2_000
# How often the loop wakes to refresh the viewer entry and send a heartbeat when due.
TICK_SECONDS = 5


def _error(status: int, code: str, detail: str, field: str | None = None) -> JsonResponse:
    body: dict = {"code": code, "detail": detail}
    if field:
        body = {"code": code, "errors": {field: [detail]}}
    return JsonResponse(body, status=status)


def _frame(entry_id: str | None, name: str, data: dict) -> bytes:
    head = f"id: {entry_id}\n" if entry_id else ""
    return f"{head}event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def _connect(user, page: str, ticket_id: int | None) -> tuple[Listener, Ticket | None]:
    """The listener's rights, read once (a 404 as Ticket.DoesNotExist). Then the request's
    database connection is closed: Django runs a request's sync code (session, user, this) in
    a thread of its own, whose connection would otherwise stay open as long as the stream —
    one PostgreSQL connection per open console."""
    try:
        return _rights(user, page, ticket_id)
    finally:
        connections.close_all()


def _rights(user, page: str, ticket_id: int | None) -> tuple[Listener, Ticket | None]:
    audience = access.audience_for(user)
    listener = Listener(audience=audience, page=page, approver=access.is_approver(user))
    ticket = None
    if ticket_id is not None:
        ticket = access.visible_tickets(user).get(pk=ticket_id)
        listener.ticket_id = ticket.pk
        listener.insider = audience.sees_internals(ticket)
    return listener, ticket


_told_wsgi = False


def _not_under_asgi() -> HttpResponse:
    """A WSGI server (runserver, live_server) would have to read the endless stream to its end
    in one of its threads: 204 instead, which tells EventSource to stop asking, and the pages
    show changes on their next load. Said once per process."""
    global _told_wsgi
    if not _told_wsgi:
        _told_wsgi = True
        logger.warning("live pages need the ASGI server (config/asgi.py); /events/ answers 204")
    return HttpResponse(status=204)


@require_GET
async def events(request: HttpRequest) -> HttpResponseBase:
    if not hasattr(request, "scope"):  # (an ASGIRequest carries its scope)
        return _not_under_asgi()
    user = await request.auser()
    if not user.is_authenticated:
        await sync_to_async(connections.close_all)()
        return _error(403, "not_authenticated", _("Sign in to follow live changes."))
    page = request.GET.get("page", stream.TICKET_PAGE)
    if page not in stream.PAGES:
        return _error(400, "invalid", _("Unknown page."), "page")
    ticket_id = None
    if page == stream.TICKET_PAGE:
        raw = request.GET.get("ticket", "")
        if not raw.isdigit():
            return _error(400, "invalid", _("A ticket id is required."), "ticket")
        ticket_id = int(raw)
    try:
        listener, ticket = await sync_to_async(_connect)(user, page, ticket_id)
    except Ticket.DoesNotExist:
        return _error(404, "not_found", _("No such ticket."))
    since = request.headers.get("Last-Event-ID") or request.GET.get("since") or ""
    presence = None
    if ticket is not None and listener.insider:
        hub_redis = (await stream.hub()).redis
        presence = Presence(hub_redis, ticket, user.pk, user.get_username())
    response = StreamingHttpResponse(
        _stream(listener, since, presence), content_type="text/event-stream"
    )
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # a proxy in front must not hold the events back
    return response


async def _stream(listener: Listener, since: str, presence: Presence | None) -> AsyncIterator:
    hub = await stream.hub()
    hub.add(listener)
    try:
        yield f"retry: {RETRY_MS}\n\n".encode()
        last = None
        if since:
            missed, reset = await hub.replay(listener, since)
            if reset:
                yield _frame(None, "reset", {})
            for entry_id, message in missed:
                last = stream.parse_id(entry_id)
                yield _frame(entry_id, "change", message)
        if presence is not None:
            await presence.refresh(announce=True)
        beat = time.monotonic()
        while True:
            if listener.ending:
                return  # the server is shutting down; the browser resumes elsewhere
            if listener.overflowed:
                yield _frame(None, "reset", {})
                return  # the browser reconnects and resumes from its last id
            try:
                item = await asyncio.wait_for(listener.queue.get(), timeout=TICK_SECONDS)
            except TimeoutError:
                if presence is not None:
                    await presence.refresh()
                if time.monotonic() - beat >= HEARTBEAT_SECONDS:
                    beat = time.monotonic()
                    yield b": heartbeat\n\n"
                continue
            if item is None:
                continue  # woken to end
            entry_id, message = item
            key = stream.parse_id(entry_id)
            if last is not None and key is not None and key <= last:
                continue  # already replayed
            yield _frame(entry_id, "change", message)
    finally:
        hub.listeners.discard(listener)
        if presence is not None:
            await presence.leave()
