import json
import logging
from datetime import UTC, datetime

# Attributes every LogRecord has; anything else was passed in `extra=` and is emitted as a field.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    """One JSON object per line, so log shippers can index fields without parsing prose."""

    def format(self, record: logging.LogRecord) -> str:
        payload = {
            "ts": datetime.fromtimestamp(record.created, tz=UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                payload[key] = value
        if record.exc_info:
            payload["exc"] = self.formatException(record.exc_info)
        return json.dumps(payload, default=str)


class RefusalWithoutTraceback(logging.Filter):
    """Django logs a refused request (PermissionDenied → 403, Http404 →404) with the exception
    attached; a refusal is an expected answer, not a fault: one WARNING line, no traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name == "django.request" and getattr(record, "status_code", 500) < 500:
            record.exc_info = None
            record.exc_text = None
        return True


# The per-task chatter of routine work: beat sending each periodic task, the worker receiving
# it and reporting success, several lines a minute on an idle deployment. Failures, retries
# and anything else keep their level.
_CHATTER = {
    ("celery.beat", "Scheduler: Sending due task %s (%s)"),
    ("celery.worker.strategy", "Task %(name)s[%(id)s] received"),
    ("celery.app.trace", "Task %(name)s[%(id)s] succeeded in %(runtime)ss: %(return_value)s"),
}


class DemoteChatter(logging.Filter):
    """Celery's routine INFO chatter becomes DEBUG (shown only when LOG_LEVEL=DEBUG)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.INFO or (record.name, record.msg) not in _CHATTER:
            return True
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return logging.getLogger().isEnabledFor(logging.DEBUG)
