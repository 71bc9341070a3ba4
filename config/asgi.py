"""What the web server serves (runtime/commands.py: gunicorn with uvicorn workers): a small
router in front of two Django handlers.

- `/events/` (the live pages' Server-Sent Events, live/views.py) goes to Django's ASGI
  handler: an open console is a coroutine waiting on the event loop, not a thread, so one
  node holds hundreds of them. Connecting, though, reads the session, the user and their
  rights from the database, each connect on a connection of its own until its stream has
  started: at most LIVE_CONNECTING (16) connects per process do that at once, the rest wait
  their turn, so 500 consoles reconnecting together after a restart queue for a moment
  instead of exhausting PostgreSQL's connections.
- Everything else goes to the Django WSGI application through a2wsgi's thread pool of
  WEB_THREADS threads per process: every existing view, its middleware, persistent database
  connections and request-id logging run exactly as they did under gthread workers."""

import asyncio
import gc
import os
import weakref

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")

from a2wsgi import WSGIMiddleware  # noqa: E402
from django.core.asgi import get_asgi_application  # noqa: E402
from django.core.wsgi import get_wsgi_application  # noqa: E402

EVENTS_PREFIX = "/events/"
LIVE_CONNECTING = int(os.environ.get("LIVE_CONNECTING") or 16)

_events = get_asgi_application()
_pages = WSGIMiddleware(
    get_wsgi_application(),  # type: ignore[arg-type]
    workers=int(os.environ.get("WEB_THREADS") or 4),
)


async def application(scope, receive, send):
    if scope["type"] == "http" and scope["path"].startswith(EVENTS_PREFIX):
        await _gated_events(scope, receive, send)
    elif scope["type"] == "lifespan":
        await _lifespan(receive, send)
    else:
        await _pages(scope, receive, send)


# One gate per event loop (a process has one; the tests start several).
_gates: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


async def _gated_events(scope, receive, send) -> None:
    """The events handler, past the connect gate: a connect holds its place until its
    response has started (its database work done), or until it ends without one."""
    loop = asyncio.get_running_loop()
    gate = _gates.get(loop)
    if gate is None:
        gate = _gates[loop] = asyncio.Semaphore(LIVE_CONNECTING)
    await gate.acquire()
    held = True

    async def send_and_release(message) -> None:
        nonlocal held
        if held and message["type"] == "http.response.start":
            held = False
            gate.release()
        await send(message)

    try:
        await _events(scope, receive, send_and_release)
    finally:
        if held:
            gate.release()


async def _lifespan(receive, send) -> None:
    """Nothing to set up or tear down: accept the server's start and stop messages."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


# As in config/wsgi.py: what is imported by now lives for the whole process.
gc.freeze()
