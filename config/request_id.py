"""A request id on every request: taken from X-Request-ID when the caller sends a sane one,
generated otherwise, attached to every log line of the request and returned in the response."""

import contextvars
import logging
import re
import time
import uuid

from prometheus_client import Counter, Histogram

request_id_var: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "request_id", default=None
)

_SAFE_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
logger = logging.getLogger("ticketdesk.request")

# Per route pattern (bounded), not per path. Probes and static files are not counted.
REQUESTS = Counter("http_requests_total", "HTTP requests answered", ["method", "route", "status"])
DURATION = Histogram(
    "http_request_duration_seconds",
    "Time to answer an HTTP request",
    ["method", "route"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
_UNCOUNTED = ("/healthz", "/readyz", "/static/")
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def _route(request) -> str:
    match = getattr(request, "resolver_match", None)
    return match.route if match is not None and match.route else "unmatched"


class RequestIdLogFilter(logging.Filter):
    """The request id on every line: the current request's, or, for the line Django writes
    about a 4xx/5xx response after the middleware has returned (django.request's "Not
    Found: …", which carries the request), that request's."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = request_id_var.get() or getattr(
                getattr(record, "request", None), "request_id", None
            )
        return True


class RequestIdMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        given = request.headers.get("X-Request-ID", "")
        request_id = given if _SAFE_ID.match(given) else uuid.uuid4().hex
        request.request_id = request_id
        token = request_id_var.set(request_id)
        started = time.perf_counter()
        try:
            response = self.get_response(request)
            response["X-Request-ID"] = request_id
            elapsed = time.perf_counter() - started
            if not request.path.startswith(_UNCOUNTED):
                route = _route(request)
                method = request.method if request.method in _METHODS else "other"
                REQUESTS.labels(method, route, str(response.status_code)).inc()
                DURATION.labels(method, route).observe(elapsed)
            if request.path.startswith("/api/"):
                duration_ms = round(elapsed * 1000, 2)
                # The server's own time, for clients and benchmarks (bench/queueing.py).
                response["Server-Timing"] = f"app;dur={duration_ms}"
                user = getattr(request, "user", None)
                logger.info(
                    "request",
                    extra={
                        "method": request.method,
                        "path": request.path,
                        "status": response.status_code,
                        "duration_ms": duration_ms,
                        "user_id": user.pk if user is not None and user.is_authenticated else None,
                    },
                )
            return response
        finally:
            request_id_var.reset(token)
