"""A request id on every request: taken from X-Request-ID when the caller sends a sane one,
generated otherwise, attached to every log line of the request and returned in the response."""

import contextvars
import logging
import re
import time
import uuid

request_id_var: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "request_id", default=None
)

_SAFE_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
logger = logging.getLogger("ticketdesk.request")


class RequestIdLogFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = request_id_var.get()
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
            if request.path.startswith("/api/"):
                duration_ms = round((time.perf_counter() - started) * 1000, 2)
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
