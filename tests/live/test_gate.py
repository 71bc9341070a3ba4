"""The connect gate in front of /events/ (config/asgi.py): however many consoles connect at
once, at most LIVE_CONNECTING per process do their database work together; each place is
given back when its stream starts, or when the connect ends without one."""

import asyncio

import pytest

from config import asgi


def _run_connects(monkeypatch, count: int, *, fail_every: int = 0) -> tuple[int, int]:
    """`count` connects at once through the router; the inner handler stands for Django's
    (a connect's database work, then its response start). Returns (most inside at once,
    how many started a stream)."""
    inside = {"now": 0, "most": 0, "started": 0}

    async def handler(scope, receive, send):
        inside["now"] += 1
        inside["most"] = max(inside["most"], inside["now"])
        await asyncio.sleep(0.01)  # reading the session, the user, their rights
        inside["now"] -= 1
        if fail_every and scope["n"] % fail_every == 0:
            raise RuntimeError("the connect failed before its response")
        await send({"type": "http.response.start", "status": 200, "headers": []})
        inside["started"] += 1
        await asyncio.sleep(0.05)  # the open stream: holds no place

    monkeypatch.setattr(asgi, "_events", handler)

    async def connect(n):
        async def send(message):
            pass

        scope = {"type": "http", "path": "/events/", "n": n}
        try:
            await asgi.application(scope, None, send)
        except RuntimeError:
            pass

    async def main():  # (a place never given back would leave the rest waiting: a timeout)
        await asyncio.wait_for(asyncio.gather(*(connect(n) for n in range(count))), timeout=10)

    asyncio.run(main())
    return inside["most"], inside["started"]


def test_at_most_the_gate_connects_at_once_and_all_get_through(monkeypatch):
    most, started = _run_connects(monkeypatch, 200)
    assert most == asgi.LIVE_CONNECTING
    assert started == 200


def test_a_connect_that_fails_gives_its_place_back(monkeypatch):
    most, started = _run_connects(monkeypatch, 100, fail_every=2)
    assert most == asgi.LIVE_CONNECTING
    assert started == 50  # and the failed half did not keep their places: nobody waited


@pytest.mark.parametrize("path", ["/api/tickets/", "/console/"])
def test_other_paths_do_not_pass_the_gate(monkeypatch, path):
    seen = []

    async def pages(scope, receive, send):
        seen.append(scope["path"])

    monkeypatch.setattr(asgi, "_pages", pages)
    monkeypatch.setattr(asgi, "_events", None)
    asyncio.run(asgi.application({"type": "http", "path": path}, None, None))
    assert seen == [path]
