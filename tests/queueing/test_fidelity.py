"""The whole service, real Redis included, against the plain transcription of the double loops:
same order, same be_jump values, same jump lists in the cache afterwards."""

import json
import uuid

import redis
from django.conf import settings as django_settings
from django.test import override_settings
from hypothesis import HealthCheck, given, settings

from queueing import services

from .helpers import customer
from .strategies import queues
from .transcription import transcribe


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(queues(max_size=20))
def test_service_with_redis_agrees_with_the_transcription(queue_and_cache):
    persons, cache = queue_and_cache
    client = redis.Redis.from_url(django_settings.QUEUEING_REDIS_URL, decode_responses=True)
    namespace = f"fidelity_{uuid.uuid4().hex[:12]}_"
    prefix = f"{namespace}lechat_"  # the transcription's keys, under a namespace of this run
    try:
        if cache:
            client.mset({namespace + key: value for key, value in cache.items()})
        expected_cache = dict(cache)
        expected = transcribe(persons, expected_cache)

        with override_settings(QUEUEING_KEY_PREFIX=prefix):
            outcome = services.queue_rank(
                customers=[customer(p) for p in persons], trace_id="fidelity"
            )
        assert not outcome.degraded
        assert [e.uid for e in outcome.queue] == [str(p["uid"]) for p in expected]
        assert [e.be_jump for e in outcome.queue] == [p["be_jump"] for p in expected]
        assert [e.rr for e in outcome.queue] == [p["rr"] for p in expected]

        stored = {
            key[len(namespace) :]: client.get(key)
            for key in client.scan_iter(match=f"{prefix}jump_uids_*", count=1000)
        }
        expected_lists = {k: v for k, v in expected_cache.items() if "jump_uids_" in k}
        assert {k: json.loads(v) for k, v in stored.items()} == {
            k: json.loads(v) for k, v in expected_lists.items()
        }
    finally:
        keys = list(client.scan_iter(match=f"{namespace}*", count=1000))
        if keys:
            client.delete(*keys)
        client.close()
