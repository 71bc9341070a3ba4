import pytest
from rest_framework.test import APIClient

from tests.factories import ApproverFactory, StaffFactory, UserFactory
from workflow import services as ticket_services


@pytest.fixture
def api():
    """An API client; `api.as_user(user)` authenticates with the user's token."""
    from knox.models import AuthToken

    client = APIClient()
    tokens: dict[int, str] = {}

    def as_user(user):
        if user.pk not in tokens:
            tokens[user.pk] = AuthToken.objects.create(user=user)[1]
        client.credentials(HTTP_AUTHORIZATION=f"Token {tokens[user.pk]}")
        return client

    client.as_user = as_user
    return client


@pytest.fixture
def applicant(db):
    return UserFactory(username="applicant")


@pytest.fixture
def approver(db):
    return ApproverFactory(username="approver")


@pytest.fixture
def staff(db):
    return StaffFactory(username="staff")


@pytest.fixture
def submit(applicant):
    def _submit(**kwargs):
        kwargs.setdefault("title", "Printer on fire")
        kwargs.setdefault("content", "It is on fire.")
        kwargs.setdefault("priority", 3)
        return ticket_services.ticket_submit(creator=kwargs.pop("creator", applicant), **kwargs)

    return _submit


@pytest.fixture
def pooled(submit, group, approver):
    """A ticket approved into the manual group's pool (ticket_status 1)."""
    ticket = submit(handler_group_id=group.pk)
    return ticket_services.ticket_approve(ticket_id=ticket.pk, approver=approver)


# Rows that data migrations install (templates, periodic tasks, the SLA catch-all rule). A
# transactional test flushes every table when it ends; put them back before each DB test so
# test order never matters.
REFERENCE_DATA_MIGRATIONS = [
    "notifications.migrations.0002_default_templates",
    "notifications.migrations.0003_outbox_sweep_schedule",
    "notifications.migrations.0004_overflow_template",
    "notifications.migrations.0006_chinese_templates",
    "notifications.migrations.0007_outbox_sweep_every_15_seconds",
    "notifications.migrations.0009_watcher_templates",
    "notifications.migrations.0010_merge_template",
    "notifications.migrations.0011_survey_template",
    "notifications.migrations.0012_reopen_template",
    "notifications.migrations.0013_replies_by_email",
    "insight.migrations.0004_simulation_recovery_sweep",
    "sla.migrations.0002_catch_all_rule_and_scan_schedule",
    "handler_groups.migrations.0003_routing_schedules",
    "idempotency.migrations.0002_purge_schedule",
    "attachments.migrations.0002_sweep_schedule",
    "mail.migrations.0002_fetch_schedule",
]


@pytest.fixture(autouse=True)
def _reference_data(request):
    import importlib

    from django.apps import apps

    marker = request.node.get_closest_marker("django_db")
    names = request.fixturenames
    if marker is None and "db" not in names and "transactional_db" not in names:
        return
    transactional = "transactional_db" in names or (
        marker is not None
        and (marker.kwargs.get("transaction") or (marker.args and marker.args[0]))
    )
    request.getfixturevalue("transactional_db" if transactional else "db")
    for module in REFERENCE_DATA_MIGRATIONS:
        importlib.import_module(module).install(apps, None)


@pytest.fixture(autouse=True)
def _no_outage_carried_over():
    """A Redis outage one test caused (config/outage.py skips Redis for a moment after a
    failure) must not make the next test skip it."""
    from config import outage

    for known in outage.KNOWN:
        known.reset()
    yield
    for known in outage.KNOWN:
        known.reset()


@pytest.fixture(autouse=True)
def _default_language():
    """Each test starts in LANGUAGE_CODE: a request in another language activates it for the
    thread (LocaleMiddleware), and code a test calls directly must not inherit it."""
    from django.conf import settings
    from django.utils import translation

    translation.activate(settings.LANGUAGE_CODE)
    yield
    translation.activate(settings.LANGUAGE_CODE)


@pytest.fixture
def media(settings, tmp_path):
    """Uploaded files go to a directory of the test's own (returned)."""
    settings.MEDIA_ROOT = str(tmp_path / "media")
    return tmp_path / "media"
