"""The per-account throttle every API request pays (config/throttling.py), as the ranking
endpoint meets it: DRF's sliding window, checked and recorded in one Redis round trip, atomic
(concurrent requests never take more places than the rate has); a throttled request is a 429
with Retry-After, and the places come back as the period passes."""

import json
import threading
from datetime import timedelta
from types import SimpleNamespace

import pytest
import time_machine
from django.core.cache import cache
from django.utils import timezone

from config.throttling import UserThrottle

from .helpers import person

URL = "/api/queueing/rank/"


def _forget_histories():
    client = cache._cache.get_client(write=True)
    keys = list(client.scan_iter(match=f"*{cache.key_prefix}*throttle_*"))
    if keys:
        client.delete(*keys)


@pytest.fixture(autouse=True)
def _fresh_histories():
    _forget_histories()
    yield
    _forget_histories()


@pytest.fixture
def client(api, ranker):
    return api.as_user(ranker)


def rank(client):
    body = json.dumps({"queue": [person("a")]})
    return client.post(URL, data=body, content_type="application/json")


def test_the_rate_limits_and_answers_429_with_retry_after(client, settings, queue_cache):
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "user": "3/min"}
    assert [rank(client).status_code for _ in range(3)] == [200, 200, 200]
    refused = rank(client)
    assert refused.status_code == 429
    assert refused.json()["code"] == "throttled"
    assert 0 < int(refused["Retry-After"]) <= 60
    # A refused request takes no place: once the period has passed, three again.
    with time_machine.travel(timezone.now() + timedelta(seconds=61), tick=False):
        assert [rank(client).status_code for _ in range(4)] == [200, 200, 200, 429]


def test_retry_after_is_drfs_wait(settings, ranker):
    """The rest of the oldest request's period, shared among the places left (DRF's wait())."""
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "user": "2/min"}
    request = SimpleNamespace(user=ranker)
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        assert UserThrottle().allow_request(request, None)
    with time_machine.travel(start + timedelta(seconds=20), tick=False):
        assert UserThrottle().allow_request(request, None)
        throttle = UserThrottle()
        assert not throttle.allow_request(request, None)
        assert throttle.wait() == pytest.approx(40)
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "user": "1/min"}  # lowered: 2 in it
    with time_machine.travel(start + timedelta(seconds=30), tick=False):
        throttle = UserThrottle()
        assert not throttle.allow_request(request, None)
        assert throttle.wait() is None  # no place left even then: DRF sends no Retry-After


def test_concurrent_requests_never_take_more_places_than_the_rate(settings, ranker):
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "user": "5/min"}
    request = SimpleNamespace(user=ranker)
    UserThrottle().allow_request(request, None)  # connects and loads the script
    _forget_histories()
    barrier = threading.Barrier(20)
    allowed = []

    def check():
        barrier.wait()
        allowed.append(UserThrottle().allow_request(request, None))

    threads = [threading.Thread(target=check) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(allowed) == [False] * 15 + [True] * 5


def test_a_cache_that_is_not_redis_gets_drfs_own_throttle(client, settings, queue_cache):
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "user": "2/min"}
    statuses = [rank(client).status_code for _ in range(3)]
    assert statuses == [200, 200, 429]
