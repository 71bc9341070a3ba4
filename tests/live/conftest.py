from tests.live.server import asgi_server, live_stream  # noqa: F401
