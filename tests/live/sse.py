"""A small Server-Sent Events reader for the tests: frames from a streaming response, in a
thread, so a test can act and then wait for what arrives."""

import queue
import threading

import requests


class Events:
    def __init__(self, session: requests.Session, url: str, headers: dict | None = None):
        self.response = session.get(url, stream=True, timeout=(5, 30), headers=headers or {})
        self.frames: queue.Queue = queue.Queue()
        self.thread = threading.Thread(target=self._read, daemon=True)
        if self.response.status_code == 200:
            self.thread.start()

    def _read(self) -> None:
        frame: dict = {}
        try:
            for line in self.response.iter_lines(decode_unicode=True):
                if line == "":
                    if frame:
                        self.frames.put(frame)
                    frame = {}
                elif line.startswith(":"):
                    continue
                else:
                    name, _, value = line.partition(":")
                    frame[name] = value.lstrip(" ")
        except (requests.RequestException, AttributeError, ValueError):
            pass

    def next(self, timeout: float = 5.0) -> dict:
        """The next frame with an event (the `retry:` hint skipped)."""
        while True:
            frame = self.frames.get(timeout=timeout)
            if "event" in frame:
                return frame

    def drain(self, wait: float = 1.0) -> list[dict]:
        """Every event frame arriving within `wait` seconds."""
        found = []
        try:
            while True:
                found.append(self.next(timeout=wait))
        except queue.Empty:
            return found

    def close(self) -> None:
        self.response.close()
