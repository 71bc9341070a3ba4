"""Run callables in real parallel threads, each on its own database connection."""

import threading
from collections.abc import Callable

from django.db import connections


def run_in_parallel(calls: list[Callable[[], object]], timeout: float = 60) -> list[object]:
    """Start every call at the same moment (a barrier) and return each one's result or the
    exception it raised, in call order."""
    barrier = threading.Barrier(len(calls))
    results: list[object] = [None] * len(calls)

    def worker(index: int, call: Callable[[], object]) -> None:
        try:
            barrier.wait()
            results[index] = call()
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            results[index] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker, args=(i, c)) for i, c in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout)
        assert not thread.is_alive(), "a parallel call did not finish"
    return results
