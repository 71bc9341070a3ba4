"""What the web server serves (runtime/commands.py: gunicorn with uvicorn workers): a small
router in front of two Django handlers.

- `/events/` (the live pages' Server-Sent Events, live/views.py) goes to Django's ASGI
  handler: an open console is a coroutine waiting on the event loop, not a thread, so one
  node holds hundreds of them.
- Everything else goes to the Django WSGI application through a2wsgi's thread pool of
  WEB_THREADS threads per process: every existing view, its middleware, persistent database
  connections and request-id logging run exactly as they did under gthread workers."""

import gc
import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")

from a2wsgi import WSGIMiddleware  # noqa: E402
from django.core.asgi import get_asgi_application  # noqa: E402
from django.core.wsgi import get_wsgi_application  # noqa: E402

EVENTS_PREFIX = "/events/"

_events = get_asgi_application()
_pages = WSGIMiddleware(
    get_wsgi_application(),  # type: ignore[arg-type]
    workers=int(os.environ.get("WEB_THREADS") or 4),
)


async def application(scope, receive, send):
    if scope["type"] == "http" and scope["path"].startswith(EVENTS_PREFIX):
        await _events(scope, receive, send)
    elif scope["type"] == "lifespan":
        await _lifespan(receive, send)
    else:
        await _pages(scope, receive, send)


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
