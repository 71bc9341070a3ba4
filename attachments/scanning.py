"""The malware scan of uploads: each file's bytes go to a ClamAV daemon (clamd) before it can be
attached, when ATTACHMENT_SCANNER = "clamav".

A small client of clamd's own protocol, written here: the PyPI clients (`clamd`, last released
in 2014, and `pyclamd`, in 2017) are unmaintained, and the two commands used are simple. Both
are sent in their NUL-delimited form (the "z" prefix), and clamd answers one NUL-terminated
line and closes the connection:

- zINSTREAM: the file as chunks, each prefixed by its length (4 bytes, big-endian), ended by a
  zero-length chunk; the answer is "stream: OK", "stream: <signature> FOUND", or a line ending
  in "ERROR" (e.g. "INSTREAM size limit exceeded. ERROR" beyond clamd's StreamMaxLength).
- zPING: the answer is "PONG" (the readiness check).

CLAMD_ADDRESS is "unix:///path/to/socket" or "tcp://host:port"; CLAMD_TIMEOUT_SECONDS bounds
the connection and every read and write on it. Messages are for logs and the API layer, which
says it to people in their language; nothing here is translated."""

from __future__ import annotations

import logging
import socket
import struct
from collections.abc import Iterable
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

logger = logging.getLogger(__name__)

# Chunks are sent at most this long (clamd reads each one whole); longer ones are split.
CHUNK_BYTES = 64 * 1024
# clamd's answers are one short line; a longer one is not clamd.
REPLY_MAX_BYTES = 4096


class Infected(Exception):
    """clamd found malware in the file; `signature` names what it found."""

    def __init__(self, signature: str) -> None:
        super().__init__(f"malware found: {signature}")
        self.signature = signature


class ScannerUnavailable(Exception):
    """The file could not be scanned: clamd is unreachable, timed out, answered something
    that is not clamd's protocol, or refused the scan (an ERROR answer, such as its size
    limit). The file is neither clean nor infected, and must not be stored as if scanned."""


def scan(chunks: Iterable[bytes]) -> None:
    """Scan a file given as chunks of its bytes: return when clean; raise Infected when clamd
    finds malware, ScannerUnavailable when it cannot tell. With ATTACHMENT_SCANNER = "" this
    scans nothing (and does not read `chunks`)."""
    if not _scanning_with_clamav():
        return
    reply = _converse(b"zINSTREAM\0", _instream(chunks))
    if reply == "stream: OK":
        return
    if reply.startswith("stream: ") and reply.endswith(" FOUND"):
        signature = reply.removeprefix("stream: ").removesuffix(" FOUND").strip()
        logger.warning(
            "attachment scan: malware found, %s", signature, extra={"signature": signature}
        )
        raise Infected(signature)
    if reply.endswith("ERROR"):
        raise ScannerUnavailable(f"clamd refused the scan: {reply}")
    raise ScannerUnavailable(f"clamd answered the scan with {reply!r}")


def ping() -> bool:
    """Whether the clamd at CLAMD_ADDRESS answers PING (whatever ATTACHMENT_SCANNER says: the
    caller decides whether scanning is on)."""
    try:
        return _converse(b"zPING\0", ()) == "PONG"
    except ScannerUnavailable:
        return False


def _scanning_with_clamav() -> bool:
    scanner = settings.ATTACHMENT_SCANNER
    if scanner == "":
        return False
    if scanner == "clamav":
        return True
    raise ImproperlyConfigured(
        f'ATTACHMENT_SCANNER is {scanner!r}; it must be "clamav" or "" (no scanning)'
    )


def _instream(chunks: Iterable[bytes]) -> Iterable[bytes]:
    """INSTREAM's framing of `chunks`. An empty chunk is skipped: on the wire it would end the
    stream early."""
    for chunk in chunks:
        view = memoryview(chunk)
        for start in range(0, len(view), CHUNK_BYTES):
            piece = view[start : start + CHUNK_BYTES]
            yield struct.pack(">I", len(piece)) + piece
    yield struct.pack(">I", 0)


def _converse(command: bytes, payload: Iterable[bytes]) -> str:
    """Send `command` and `payload` to clamd and return its answer, without the NUL."""
    address = settings.CLAMD_ADDRESS
    timeout = float(settings.CLAMD_TIMEOUT_SECONDS)
    try:
        with _connect(address, timeout) as sock:
            try:
                sock.sendall(command)
                for part in payload:
                    sock.sendall(part)
            except (BrokenPipeError, ConnectionResetError) as exc:
                # clamd stops reading when it refuses a stream (its size limit) and says why
                # before it closes: read that answer rather than report the broken pipe.
                reply = _read_reply(sock)
                if not reply:
                    raise ScannerUnavailable(f"clamd at {address} closed the connection") from exc
                return reply
            return _read_reply(sock)
    except TimeoutError as exc:
        raise ScannerUnavailable(f"clamd at {address} did not answer in {timeout:g} s") from exc
    except OSError as exc:
        raise ScannerUnavailable(f"cannot reach clamd at {address}: {exc}") from exc


def _connect(address: str, timeout: float) -> socket.socket:
    parts = urlsplit(address)
    try:
        port = parts.port
    except ValueError:  # not a number, or out of range
        port = None
    if parts.scheme == "unix" and parts.path:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(parts.path)
        except BaseException:
            sock.close()
            raise
        return sock
    if parts.scheme == "tcp" and parts.hostname and port:
        return socket.create_connection((parts.hostname, port), timeout=timeout)
    raise ImproperlyConfigured(
        f"CLAMD_ADDRESS is {address!r}; it must be unix:///path/to/socket or tcp://host:port"
    )


def _read_reply(sock: socket.socket) -> str:
    """clamd's answer: up to its NUL, or to the end of the connection."""
    reply = b""
    try:
        while b"\0" not in reply and len(reply) <= REPLY_MAX_BYTES:
            part = sock.recv(REPLY_MAX_BYTES)
            if not part:
                break
            reply += part
    except ConnectionResetError:
        pass  # what it said before the reset is its answer
    if len(reply) > REPLY_MAX_BYTES:
        raise ScannerUnavailable(f"clamd's answer is longer than {REPLY_MAX_BYTES} bytes")
    return reply.split(b"\0", 1)[0].decode("utf-8", errors="replace").strip()
