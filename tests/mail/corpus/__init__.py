"""Real-world messages, written by hand after what each client sends (headers, boundaries,
encodings): `load("gmail_reply")` gives the raw bytes; `NAMES` lists them. Each file is
described in tests/mail/test_parsing.py, which checks what the desk reads from it."""

from __future__ import annotations

from pathlib import Path

DIRECTORY = Path(__file__).parent
NAMES = tuple(sorted(path.stem for path in DIRECTORY.glob("*.eml")))


def load(name: str) -> bytes:
    return (DIRECTORY / f"{name}.eml").read_bytes()
