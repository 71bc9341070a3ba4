import json
import uuid

import pytest
import redis
from django.contrib.auth.models import Permission

from tests.factories import UserFactory


class QueueCache:
    """The ranking's Redis keys for one test, under a prefix of its own in the Redis at
    settings.QUEUEING_REDIS_URL; only keys under that prefix are ever deleted."""

    def __init__(self, client: redis.Redis, prefix: str):
        self.client = client
        self.prefix = prefix

    def set_rr(self, uid, level: str) -> None:
        self.client.set(f"{self.prefix}{uid}", json.dumps({"rr_1p5": level}))

    def set_raw(self, key: str, value: str) -> None:
        self.client.set(f"{self.prefix}{key}", value)

    def set_jumps(self, uid, uids: list[str]) -> None:
        self.client.set(f"{self.prefix}jump_uids_{uid}", json.dumps(uids))

    def jumps_raw(self, uid) -> str | None:
        return self.client.get(f"{self.prefix}jump_uids_{uid}")

    def jumps(self, uid) -> list[str] | None:
        raw = self.jumps_raw(uid)
        return None if raw is None else json.loads(raw)

    def ttl(self, key: str) -> int:
        return self.client.ttl(f"{self.prefix}{key}")

    def snapshot(self) -> dict[str, str]:
        """Every key under the prefix, without it, with its text."""
        keys = sorted(self.client.scan_iter(match=f"{self.prefix}*", count=1000))
        values = self.client.mget(keys) if keys else []
        return {key[len(self.prefix) :]: value for key, value in zip(keys, values, strict=True)}

    def clear(self) -> None:
        keys = list(self.client.scan_iter(match=f"{self.prefix}*", count=1000))
        if keys:
            self.client.delete(*keys)


@pytest.fixture
def redis_client(settings):
    client = redis.Redis.from_url(settings.QUEUEING_REDIS_URL, decode_responses=True)
    yield client
    client.close()


@pytest.fixture
def queue_cache(settings, redis_client):
    """A key prefix of this test's own, set as QUEUEING_KEY_PREFIX (so tests running at the same
    time never see each other's keys), cleared afterwards."""
    prefix = f"test_{uuid.uuid4().hex[:12]}_lechat_"
    settings.QUEUEING_KEY_PREFIX = prefix
    cache = QueueCache(redis_client, prefix)
    yield cache
    cache.clear()


@pytest.fixture
def ranker(db):
    """A service account given the queueing.rank_queue permission."""
    user = UserFactory(username="ranking-service")
    user.user_permissions.add(
        Permission.objects.get(content_type__app_label="queueing", codename="rank_queue")
    )
    return user


@pytest.fixture
def closed_redis_url():
    """A Redis URL on a loopback port where nothing listens."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"redis://127.0.0.1:{port}/0"
