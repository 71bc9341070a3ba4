"""What the logs say, read from the very handler the settings configure (JSON lines on the
console): a refusal is one WARNING line without a traceback, routine Celery chatter is DEBUG,
a development e-mail is one INFO line."""

import io
import json
import logging
from contextlib import contextmanager

import pytest
from django.core import mail

from config.logging import JsonFormatter
from tests.factories import UserFactory


@pytest.fixture
def log_lines():
    """The configured console handler, writing into a buffer for the test; returns a function
    giving the JSON objects written so far."""
    (handler,) = [h for h in logging.getLogger().handlers if isinstance(h.formatter, JsonFormatter)]
    buffer = io.StringIO()
    previous = handler.setStream(buffer)
    try:
        yield lambda: [json.loads(line) for line in buffer.getvalue().splitlines()]
    finally:
        handler.setStream(previous)


@contextmanager
def root_level(level: int):
    root = logging.getLogger()
    previous = root.level
    root.setLevel(level)
    try:
        yield
    finally:
        root.setLevel(previous)


@pytest.mark.django_db
def test_a_refused_console_page_is_one_warning_line_without_a_traceback(client, log_lines):
    client.force_login(UserFactory())  # not an approver

    response = client.get("/console/approvals/")

    assert response.status_code == 403
    (line,) = [entry for entry in log_lines() if entry["logger"] == "django.request"]
    assert line["level"] == "WARNING"
    assert "Forbidden" in line["msg"] and "/console/approvals/" in line["msg"]
    assert "exc" not in line


@pytest.mark.django_db
@pytest.mark.parametrize("debug", [False, True])
@pytest.mark.parametrize(
    ("path", "status", "words"),
    [("/console/approvals/", 403, "Forbidden"), ("/console/tickets/999999/", 404, "Not Found")],
)
def test_a_refused_page_is_one_json_warning_with_its_request_id_and_nothing_else(
    client, log_lines, capfd, settings, debug, path, status, words
):
    settings.DEBUG = debug  # Django's own console handler wrote a plain line and a traceback
    client.force_login(UserFactory())
    capfd.readouterr()

    response = client.get(path)

    assert response.status_code == status
    lines = log_lines()
    (line,) = lines
    assert line["level"] == "WARNING" and line["logger"] == "django.request"
    assert words in line["msg"] and path in line["msg"]
    assert line["request_id"] == response["X-Request-ID"]
    assert "exc" not in line
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err and words not in err


def test_a_server_error_keeps_its_traceback(log_lines):
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        logging.getLogger("django.request").error(
            "Internal Server Error: /x", exc_info=True, extra={"status_code": 500}
        )
    (line,) = log_lines()
    assert "RuntimeError: boom" in line["exc"]


def test_routine_celery_chatter_is_debug_and_failures_are_not(log_lines):
    logging.getLogger("celery.beat").info(
        "Scheduler: Sending due task %s (%s)", "sla-scan", "ticketing.sla_scan"
    )
    logging.getLogger("celery.app.trace").info(
        "Task %(name)s[%(id)s] succeeded in %(runtime)ss: %(return_value)s",
        {"name": "ticketing.sla_scan", "id": "1", "runtime": 0.01, "return_value": {}},
    )
    logging.getLogger("celery.app.trace").error("Task %s[%s] raised", "ticketing.sla_scan", "2")
    assert [(line["logger"], line["level"]) for line in log_lines()] == [
        ("celery.app.trace", "ERROR")
    ]

    with root_level(logging.DEBUG):
        logging.getLogger("celery.beat").info(
            "Scheduler: Sending due task %s (%s)", "sla-scan", "ticketing.sla_scan"
        )
    assert log_lines()[-1]["level"] == "DEBUG"


def test_the_development_mail_backend_logs_one_line_per_mail(settings, log_lines):
    settings.EMAIL_BACKEND = "config.mail.LogEmailBackend"

    with root_level(logging.INFO):  # as `make run` logs (the suite logs warnings only)
        sent = mail.send_mail("SLA warning", "Body\nover lines", "desk@x.test", ["a@x.test"])

    assert sent == 1 and not mail.outbox
    (line,) = log_lines()
    assert line["level"] == "INFO" and line["msg"] == "email"
    assert line["to"] == ["a@x.test"] and line["subject"] == "SLA warning"
