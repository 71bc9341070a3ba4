import pytest


@pytest.fixture(autouse=True)
def _clean_routing_keys(settings):
    """Group ids restart with every test database: drop routing keys left by earlier runs."""
    from routing import idle_pool

    settings.ASSIGNMENT_REDIS_URL = settings.REDIS_URL
    client = idle_pool.client()
    keys = list(client.scan_iter("td:{g*"))
    if keys:
        client.delete(*keys)


@pytest.fixture
def on_commit(django_capture_on_commit_callbacks):
    """Run after-commit work (Redis writes, drain requests) inline, with drains executed
    synchronously instead of through the broker."""
    return django_capture_on_commit_callbacks
