"""A per-process memo for rows that change rarely and are read on every hot request (SLA rules
at approval, notification templates on every send). An entry lives REFERENCE_CACHE_SECONDS
(5 by default; 0 turns the memo off); a save or delete of the model in this process clears it at
once (`clear_on_change`), other processes see a change within that time."""

import threading
import time
from collections.abc import Callable, Hashable
from typing import Any

from django.conf import settings
from django.db.models.signals import post_delete, post_save


class ProcessMemo:
    def __init__(self, name: str):
        self.name = name
        self._entries: dict[Hashable, tuple[float, Any]] = {}
        self._lock = threading.Lock()

    def get(self, key: Hashable, load: Callable[[], Any]) -> Any:
        ttl = getattr(settings, "REFERENCE_CACHE_SECONDS", 5)
        if ttl <= 0:
            return load()
        now = time.monotonic()
        entry = self._entries.get(key)
        if entry is not None and entry[0] > now:
            return entry[1]
        value = load()
        with self._lock:
            self._entries[key] = (now + ttl, value)
        return value

    def clear(self, *args, **kwargs) -> None:
        with self._lock:
            self._entries.clear()

    def clear_on_change(self, *models) -> "ProcessMemo":
        for model in models:
            post_save.connect(self.clear, sender=model, weak=False)
            post_delete.connect(self.clear, sender=model, weak=False)
        return self
