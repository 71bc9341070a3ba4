"""A real ASGI server (config/asgi.py under uvicorn) for the live tests, and what they share."""

import socket
import threading
import time

import pytest
import redis
import requests
from django.conf import settings
from django.db import connection
from django.test import Client

from live import events


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def live_stream():
    """The live stream starts empty for each test (it is a shared Redis key)."""
    client = redis.Redis.from_url(settings.REDIS_URL)
    client.delete(events.STREAM_KEY)
    yield client
    client.delete(events.STREAM_KEY)


@pytest.fixture
def asgi_server(transactional_db, live_stream):
    """config/asgi.py served by uvicorn in a thread on a free port, against the test
    database (live_server is WSGI and cannot stream). Yields its base URL."""
    import uvicorn
    from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler

    from config.asgi import application

    port = _free_port()
    # /static/ from the finders, as live_server does (production serves collected files).
    app = ASGIStaticFilesHandler(application)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "the ASGI server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)
    # The server's database connections live in asgiref's thread; end them so the test
    # database can be flushed and dropped.
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )


def session_for(user) -> requests.Session:
    """A requests session carrying the user's Django session cookie."""
    client = Client()
    client.force_login(user)
    session = requests.Session()
    session.cookies.set(
        settings.SESSION_COOKIE_NAME, client.cookies[settings.SESSION_COOKIE_NAME].value
    )
    return session
