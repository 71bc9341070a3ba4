"""A real IMAP server for the mail-in tests: Dovecot (devserver/services.py's EmbeddedDovecot)
started once per session, a fresh account (an empty INBOX) per test, and what a test does to
it as a mail client would: APPEND a message, read a message's flags, recreate a folder (a new
UIDVALIDITY).

A test module takes them as its own (`dovecot = imap_fixtures.dovecot`, `imap_account =
imap_fixtures.imap_account`; an import would read as unused to the linter). Without
Dovecot the tests fail, never skip: `make test` installs it first (devserver/test.py), as it
does clamd."""

from __future__ import annotations

import imaplib
import itertools
import re
import shutil
import ssl
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path
from typing import cast

import pytest

from devserver.services import EmbeddedDovecot
from mail.models import Mailbox

NOW = datetime(2026, 12, 7, 10, 0, tzinfo=UTC)
_APPENDUID = re.compile(rb"\[APPENDUID (\d+) (\d+)\]")
_accounts = itertools.count(1)


@pytest.fixture(scope="session")
def dovecot() -> Iterator[EmbeddedDovecot]:
    """The session's Dovecot (plain IMAP on `port`, IMAPS on `ssl_port`, its self-signed
    certificate in `cert_file`). Its data is in a directory of its own directly under the
    temp dir, not under pytest's: as root, Dovecot's mail user must traverse the parents, and
    every pytest session that starts (another run on the machine) makes pytest's own base
    directory private again."""
    data = Path(tempfile.mkdtemp(prefix="ticketdesk-dovecot-"))
    server = EmbeddedDovecot(data / "dovecot")
    try:
        server.start()
        yield server
    finally:
        server.stop()
        shutil.rmtree(data, ignore_errors=True)


@dataclass
class ImapAccount:
    """One user on the session's Dovecot, and a client's view of its folders."""

    server: EmbeddedDovecot
    user: str
    password: str

    def connect(self) -> imaplib.IMAP4:
        assert self.server.port is not None, "Dovecot is not running"
        client = imaplib.IMAP4(self.server.host, self.server.port, timeout=10)
        client.login(self.user, self.password)
        return client

    def append(self, raw: bytes, *, folder: str = "INBOX", flags: str = "") -> int:
        """APPEND `raw` to `folder` (created when missing), as a delivery would; its UID.
        Folder names here are as on the wire: ASCII, a non-ASCII name in modified UTF-7."""
        client = self.connect()
        try:
            client.create(_quoted(folder))  # NO when it exists, which is fine
            # typeshed has append returning a str; it returns (typ, data) like every command.
            answer = cast(tuple[str, list[bytes]], client.append(_quoted(folder), flags, "", raw))
            typ, data = answer
            assert typ == "OK", data
            found = _APPENDUID.search(data[-1])
            assert found is not None, data
            return int(found.group(2))
        finally:
            client.logout()

    def flags(self, uid: int, *, folder: str = "INBOX") -> set[str]:
        """The message's flags (`\\Seen` once the desk has marked it), read without changing
        anything (EXAMINE)."""
        client = self.connect()
        try:
            typ, _ = client.select(_quoted(folder), readonly=True)
            assert typ == "OK"
            typ, data = client.uid("FETCH", str(uid), "(FLAGS)")
            assert typ == "OK", data
            found = [part for part in data if isinstance(part, bytes)]
            assert found, f"no message with UID {uid} in {folder}"
            return {flag.decode() for flag in imaplib.ParseFlags(found[0])}
        finally:
            client.logout()

    def seen(self, uid: int, *, folder: str = "INBOX") -> bool:
        return "\\Seen" in self.flags(uid, folder=folder)

    def uidvalidity(self, folder: str = "INBOX") -> int:
        client = self.connect()
        try:
            client.select(_quoted(folder), readonly=True)
            return int(client.response("UIDVALIDITY")[1][-1])
        finally:
            client.logout()

    def recreate(self, folder: str) -> None:
        """DELETE and CREATE `folder`: its UIDs start again under a new UIDVALIDITY."""
        client = self.connect()
        try:
            assert client.delete(_quoted(folder))[0] == "OK"
            assert client.create(_quoted(folder))[0] == "OK"
        finally:
            client.logout()

    def mailbox(self, *, address: str = "it-help@desk.test", tls: bool = False, **fields):
        """A desk Mailbox reading this account over plain IMAP, or IMAPS with `tls`."""
        fields.setdefault("name", "IT support")
        port = self.server.ssl_port if tls else self.server.port
        assert port is not None, "Dovecot is not running"
        mailbox = Mailbox(
            address=address,
            imap_host=self.server.host,
            imap_port=port,
            imap_tls=tls,
            imap_user=self.user,
            **fields,
        )
        mailbox.imap_password = self.password
        mailbox.save()
        return mailbox


@pytest.fixture
def imap_account(dovecot) -> ImapAccount:
    """A new user on the session's Dovecot: an empty INBOX for this test alone."""
    number = next(_accounts)
    account = ImapAccount(server=dovecot, user=f"desk{number}", password=f"secret-{number}")
    dovecot.add_user(account.user, account.password)
    return account


def _quoted(folder: str) -> str:
    """A folder name as an IMAP quoted string (imaplib sends arguments as they are). ASCII
    only: a test names a non-ASCII folder in modified UTF-7 itself."""
    assert folder.isascii(), folder
    return '"' + folder.replace("\\", "\\\\").replace('"', '\\"') + '"'


def server_ssl_context(server: EmbeddedDovecot) -> ssl.SSLContext:
    """A client context that trusts the server's self-signed certificate (and checks it)."""
    return ssl.create_default_context(cafile=str(server.cert_file))


def rfc822(
    *,
    message_id: str,
    sender: str = "alice@example.test",
    to: str = "it-help@desk.test",
    subject: str = "Printer on fire",
    body: str = "The printer on floor 3 is on fire.\n",
    in_reply_to: str | None = None,
    date: datetime = NOW,
) -> bytes:
    """A plain message as a mail client sends it, with CRLF line ends as IMAP carries it."""
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = to
    msg["Subject"] = subject
    msg["Date"] = format_datetime(date)
    msg["Message-ID"] = message_id
    if in_reply_to:
        msg["In-Reply-To"] = in_reply_to
        msg["References"] = in_reply_to
    msg.set_content(body)
    return msg.as_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
