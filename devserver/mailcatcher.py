"""A local SMTP server that keeps what it is sent (aiosmtpd): `make run` points EMAIL_URL at
it so outgoing mail is visible without a real server, and the mail tests send through it, so
retries and failures are tried against a real SMTP conversation, not a fake backend.

Each message is stored whole, as received, in a .eml file of its own (any mail client opens
it); one line per message (from, to, subject) is logged. For tests it answers a given
recipient with a 4xx (`defer`) or a 5xx (`refuse`) at RCPT TO, as a real relay does for a
full or an unknown mailbox.

    catcher = MailCatcher(tmp_path)
    catcher.start()
    settings.EMAIL_HOST, settings.EMAIL_PORT = catcher.host, catcher.port   # or catcher.url
    catcher.refuse("nobody@example.test", code=550, text="no such user")
"""

from __future__ import annotations

import email
import email.policy
import logging
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from email.message import EmailMessage
from pathlib import Path

from aiosmtpd.controller import Controller

logger = logging.getLogger(__name__)

# Any recipient (refuse / defer the whole server).
ANY = "*"


@dataclass
class _Answer:
    code: int
    text: str
    times: int | None  # answers left; None: every time


class _BoundController(Controller):
    """aiosmtpd's Controller, bound to a socket it opens itself so that port 0 works: the
    port the system chose is known before the controller's start-up check connects to it."""

    def _create_server(self):
        family = socket.AF_INET6 if ":" in self.hostname else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self.hostname, self.port))
        except OSError:
            sock.close()
            raise
        self.port = sock.getsockname()[1]
        return self.loop.create_server(self._factory_invoker, sock=sock, ssl=self.ssl_context)


class _Handler:
    def __init__(self, catcher: MailCatcher) -> None:
        self.catcher = catcher

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options) -> str:
        answer = self.catcher._answer_for(address)
        if answer is not None:
            return answer
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope) -> str:
        self.catcher._store(envelope.mail_from, list(envelope.rcpt_tos), envelope.original_content)
        return "250 Message accepted for delivery"


class MailCatcher:
    """An SMTP receiver on `host:port` (port 0: any free one) storing messages in
    `directory`. start() / stop(); `.port` and `.url` are known once started."""

    def __init__(
        self,
        directory: str | Path,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        log: Callable[[str], None] | None = None,
    ) -> None:
        self.directory = Path(directory)
        self.host = host
        self.port = port
        self._log = log or logger.info
        self._lock = threading.Lock()
        self._answers: dict[str, _Answer] = {}
        self._controller: _BoundController | None = None
        self._sequence = 0

    # Running.

    def start(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        # Messages kept from an earlier run come first: numbering goes on after them.
        self._sequence = max((_number(path) for path in self._files()), default=0)
        controller = _BoundController(
            _Handler(self),
            hostname=self.host,
            port=self.port,
            # Messages as sent (8-bit bodies included), not decoded to str.
            decode_data=False,
            # Not socket.getfqdn() on every connection (slow where DNS is).
            server_hostname="mailcatcher.localhost",
            # Large messages are welcome (a 10 MB attachment, base64-encoded).
            data_size_limit=64 * 1024 * 1024,
        )
        controller.start()
        self._controller = controller
        self.port = controller.port

    def stop(self) -> None:
        if self._controller is not None:
            self._controller.stop()
            self._controller = None

    def __enter__(self) -> MailCatcher:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """The EMAIL_URL that sends through this server."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"smtp://{host}:{self.port}"

    # What it answers.

    def refuse(
        self, address: str, code: int = 550, text: str = "5.1.1 mailbox unavailable"
    ) -> None:
        """Answer RCPT TO `address` (ANY: every recipient) with a permanent 5xx from now on."""
        if not 500 <= code <= 599:
            raise ValueError("a refusal is a 5xx reply")
        self._set(address, _Answer(code, text, None))

    def defer(
        self,
        address: str,
        code: int = 451,
        text: str = "4.2.0 try again later",
        *,
        times: int | None = None,
    ) -> None:
        """Answer RCPT TO `address` (ANY: every recipient) with a temporary 4xx: the next
        `times` attempts (None: until `accept`)."""
        if not 400 <= code <= 499:
            raise ValueError("a deferral is a 4xx reply")
        self._set(address, _Answer(code, text, times))

    def accept(self, address: str | None = None) -> None:
        """Take mail for `address` again (None: for everyone)."""
        with self._lock:
            if address is None:
                self._answers.clear()
            else:
                self._answers.pop(address.lower(), None)

    def _set(self, address: str, answer: _Answer) -> None:
        with self._lock:
            self._answers[address.lower()] = answer

    def _answer_for(self, address: str) -> str | None:
        with self._lock:
            key = address.lower()
            answer = self._answers.get(key) or self._answers.get(ANY)
            if answer is None:
                return None
            if answer.times is not None:
                answer.times -= 1
                if answer.times <= 0:
                    found = key if key in self._answers else ANY
                    del self._answers[found]
            return f"{answer.code} {answer.text}"

    # What it received.

    def _store(self, mail_from: str, rcpt_tos: list[str], raw: bytes) -> None:
        with self._lock:
            self._sequence += 1
            path = self.directory / f"{self._sequence:06d}.eml"
        path.write_bytes(raw)
        message = _parse(raw)
        self._log(
            f"mail from {mail_from} to {', '.join(rcpt_tos)}: "
            f"{message.get('Subject', '')!s} ({path.name})"
        )

    def _files(self) -> list[Path]:
        if not self.directory.is_dir():
            return []
        return sorted(
            (p for p in self.directory.glob("*.eml") if _number(p)), key=lambda p: _number(p)
        )

    def paths(self) -> list[Path]:
        """The stored files, in arrival order."""
        return self._files()

    def messages(self) -> list[EmailMessage]:
        """Every message stored, parsed, in arrival order."""
        return [_parse(path.read_bytes()) for path in self._files()]

    def clear(self) -> None:
        """Forget every message stored."""
        for path in self._files():
            path.unlink()


def _number(path: Path) -> int:
    try:
        return int(path.stem)
    except ValueError:
        return 0


def _parse(raw: bytes) -> EmailMessage:
    # policy.default parses to EmailMessage (get_body, iter_attachments, decoded headers).
    return email.message_from_bytes(raw, policy=email.policy.default)
