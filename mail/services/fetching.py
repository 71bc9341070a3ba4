"""IMAP mail-in: read each active mailbox's folder by UID and hand every new message to
intake, marking it on the server only once what it became is committed.

The order for each message is what makes a crash or a database outage lose nothing and
duplicate nothing:

1. `UID FETCH n (BODY.PEEK[])`: the message is read, not marked (PEEK leaves \\Seen alone).
2. `intake.receive(...)`: it becomes a ticket, a reply or a kept failure, and commits. An
   exception from it (the database is down) stops this fetch here: nothing is marked and the
   cursor does not move, so the next fetch reads the message again.
3. `UID STORE n +FLAGS.SILENT (\\Seen)`, then ImapCursor.last_uid = n. A crash between 2 and
   3 leaves a committed message unmarked: the next fetch reads it again and intake knows its
   Message-ID (a duplicate, skipped), so it is marked then.

The cursor is trusted only within one UIDVALIDITY: when the server's changes (the folder was
recreated, the server migrated), UIDs start again and so does the cursor, from 0; intake's
Message-ID check skips what was already received. Which messages are new is decided by UID
alone, never by \\Seen: a person reading the mailbox in a mail client loses nothing.

Two workers never fetch one mailbox at once: a Redis lock per mailbox with a lease, renewed
after each message (a worker that dies frees it when the lease runs out). Not a session
advisory lock: it would not hold through PgBouncer in transaction mode. Should a lease run
out under a stalled worker and a second begin, nothing is lost or doubled either: intake's
Message-ID lock decides each message once, and the cursor only moves forward.

Passwords are read from the mailbox (mail.crypto); the CA bundle for IMAPS from the setting
MAIL_IMAP_CA_FILE when set (a private CA, or a test server's self-signed certificate), else
the system's."""

from __future__ import annotations

import base64
import imaplib
import logging
import re
import ssl
import time
from dataclasses import dataclass, fields
from datetime import datetime

import redis
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import DatabaseError
from django.utils import timezone
from redis.exceptions import LockError, RedisError

from config.outage import REDIS_COMMAND_TIMEOUT_SECONDS, REDIS_CONNECT_TIMEOUT_SECONDS
from mail.models import ImapCursor, Mailbox
from mail.services import intake

logger = logging.getLogger(__name__)

# Connect and command timeout for the IMAP server: a dead server costs one fetch this much,
# not the worker's whole time limit.
IMAP_TIMEOUT_SECONDS = 30
# The per-mailbox lock's lease, renewed after each message: longer than one message takes
# (a fetch and intake's transaction), so a live worker keeps it.
LOCK_LEASE_SECONDS = 120
LOCK_KEY = "td:mail:fetch:{mailbox_id}"
# How long fetch_all goes on reading batches from mailboxes that have more (a backlog after
# an outage): within the task's soft time limit (mail/tasks.py), with room for a batch.
FETCH_ALL_BUDGET_SECONDS = 60
ERROR_MAX_CHARS = 2000

_UID = re.compile(rb"\bUID (\d+)")

_redis_client: redis.Redis | None = None
_redis_url: str | None = None


@dataclass
class FetchResult:
    """What one fetch of a mailbox did. `fetched`: messages read from the server; then one
    count per outcome intake gave (`other`: automatic messages, delivery reports, refused
    senders). `error`: why the fetch stopped early (the IMAP server, the database), also kept
    in ImapCursor.last_error. `skipped`: why nothing was tried ("locked": another worker is
    fetching it; "inactive"; "no_imap"). `more`: the batch was full, more are waiting."""

    mailbox_id: int
    fetched: int = 0
    ticket: int = 0
    reply: int = 0
    duplicate: int = 0
    kept: int = 0
    other: int = 0
    errors: int = 0
    error: str = ""
    skipped: str = ""
    more: bool = False

    @property
    def processed(self) -> int:
        """Messages committed (and marked): every outcome counted once."""
        return self.ticket + self.reply + self.duplicate + self.kept + self.other

    def add(self, other: FetchResult) -> None:
        """Fold a later batch of the same mailbox into this one."""
        for name in ("fetched", "ticket", "reply", "duplicate", "kept", "other", "errors"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.error = other.error or self.error
        if other.skipped and not self.fetched:
            self.skipped = other.skipped
        self.more = other.more

    def as_dict(self) -> dict[str, object]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


class ImapProblem(Exception):
    """The IMAP server refused something (login, the folder) or answered what we cannot use."""


def fetch_mailbox(
    *,
    mailbox_id: int,
    now: datetime | None = None,
    batch: int = 200,
    ssl_context: ssl.SSLContext | None = None,
) -> FetchResult:
    """Read up to `batch` new messages of the mailbox's IMAP folder (in UID order), each into
    intake and then marked \\Seen and past the cursor (see the module for why in that order).
    A problem with the server or the database stops the fetch and is recorded in
    ImapCursor.last_error (cleared by the next fetch that gets through); it does not raise.
    `now` is given to intake for every message (tests); `ssl_context` overrides the one built
    from MAIL_IMAP_CA_FILE (tests)."""
    if batch < 1:
        raise ValueError("batch must be at least 1")
    result = FetchResult(mailbox_id=mailbox_id)
    mailbox = Mailbox.objects.get(pk=mailbox_id)
    if not mailbox.active:
        result.skipped = "inactive"
        return result
    if not mailbox.uses_imap:
        result.skipped = "no_imap"
        return result
    try:
        lock = _lock(mailbox_id)
        if not lock.acquire(blocking=False):
            result.skipped = "locked"
            return result
    except RedisError as exc:
        _failed(result, f"cannot take the fetch lock (Redis): {exc}")
        _record(mailbox, result, now)
        return result
    try:
        _fetch(mailbox, result, now=now, batch=batch, lock=lock, ssl_context=ssl_context)
    finally:
        try:
            lock.release()
        except (LockError, RedisError):
            pass  # expired meanwhile (and maybe taken by another worker): it is theirs now
    _record(mailbox, result, now)
    return result


def fetch_all(
    *,
    now: datetime | None = None,
    batch: int = 200,
    budget_seconds: float = FETCH_ALL_BUDGET_SECONDS,
    ssl_context: ssl.SSLContext | None = None,
) -> list[FetchResult]:
    """Fetch every active mailbox that has an IMAP host, a batch each in turn, going round
    again for those with more while `budget_seconds` last (so one mailbox's backlog does not
    keep the others waiting). One mailbox's failure (its server, a bug) is logged and
    recorded on its cursor and does not stop the others; nothing escapes but the database
    being down when the mailboxes are listed."""
    ids = list(
        Mailbox.objects.filter(active=True)
        .exclude(imap_host="")
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    results = {pk: FetchResult(mailbox_id=pk) for pk in ids}
    deadline = time.monotonic() + budget_seconds
    pending = ids
    while pending:
        again = []
        for pk in pending:
            try:
                got = fetch_mailbox(mailbox_id=pk, now=now, batch=batch, ssl_context=ssl_context)
            except SoftTimeLimitExceeded:
                raise  # the task's time is up; the next run goes on where this one stopped
            except Exception as exc:  # noqa: BLE001 - one mailbox must not stop the others
                logger.exception("mail fetch failed", extra={"mailbox_id": pk})
                got = FetchResult(mailbox_id=pk)
                _failed(got, f"{type(exc).__name__}: {exc}")
                _record_error(pk, got.error, now)
            results[pk].add(got)
            if got.more and not got.error:
                again.append(pk)
        pending = again if time.monotonic() < deadline else []
    return [results[pk] for pk in ids]


def _fetch(
    mailbox: Mailbox,
    result: FetchResult,
    *,
    now: datetime | None,
    batch: int,
    lock: redis.lock.Lock,
    ssl_context: ssl.SSLContext | None,
) -> None:
    client: imaplib.IMAP4 | None = None
    try:
        cursor = _cursor(mailbox)
        client = _connect(mailbox, ssl_context)
        uidvalidity = _select(client, mailbox.imap_folder)
        if uidvalidity != cursor.uidvalidity:
            if cursor.uidvalidity:
                logger.warning(
                    "IMAP folder's UIDVALIDITY changed: reading it again from the start",
                    extra={"mailbox": mailbox.address, "folder": mailbox.imap_folder},
                )
            cursor.uidvalidity, cursor.last_uid = uidvalidity, 0
            cursor.save(update_fields=["uidvalidity", "last_uid"])
        uids = _new_uids(client, cursor.last_uid)
        result.more = len(uids) > batch
        for uid in uids[:batch]:
            raw = _read(client, uid)
            if raw is None:  # expunged since the search: nothing to receive
                _advance(cursor, uidvalidity, uid)
                continue
            result.fetched += 1
            try:
                received = intake.receive(mailbox=mailbox, raw=raw, source="imap", now=now)
            except SoftTimeLimitExceeded:
                raise  # the task's time is up: stop everything (nothing marked, nothing lost)
            except Exception as exc:
                # Rolled back: not marked, the cursor stays, the next fetch reads it again.
                if not isinstance(exc, DatabaseError):
                    logger.exception(
                        "mail intake failed", extra={"mailbox": mailbox.address, "uid": uid}
                    )
                _failed(result, f"UID {uid} not received: {type(exc).__name__}: {exc}")
                result.more = True
                return
            _count(result, received.outcome)
            _ok(client.uid("STORE", str(uid), "+FLAGS.SILENT", r"(\Seen)"), "STORE")
            _advance(cursor, uidvalidity, uid)
            try:
                lock.reacquire()
            except (LockError, RedisError) as exc:
                # The lease ran out (or Redis went away): another worker may be on it now.
                _failed(result, f"lost the fetch lock: {exc}")
                result.more = True
                return
    except (imaplib.IMAP4.error, ImapProblem, OSError) as exc:  # ssl.SSLError is an OSError
        _failed(result, f"IMAP {mailbox.imap_host}:{mailbox.imap_port}: {exc}")
    except DatabaseError as exc:
        _failed(result, f"database: {type(exc).__name__}: {exc}")
    finally:
        if client is not None:
            try:
                client.logout()
            except (imaplib.IMAP4.error, OSError):
                pass


def _cursor(mailbox: Mailbox) -> ImapCursor:
    """The mailbox's cursor; a new folder (the mailbox was pointed at another) starts over."""
    cursor, _ = ImapCursor.objects.get_or_create(
        mailbox=mailbox, defaults={"folder": mailbox.imap_folder}
    )
    if cursor.folder != mailbox.imap_folder:
        cursor.folder, cursor.uidvalidity, cursor.last_uid = mailbox.imap_folder, 0, 0
        cursor.save(update_fields=["folder", "uidvalidity", "last_uid"])
    return cursor


def _advance(cursor: ImapCursor, uidvalidity: int, uid: int) -> None:
    """last_uid = uid, only forward and only within the same UIDVALIDITY (a compare-and-set:
    a second worker that overlapped never moves it back)."""
    ImapCursor.objects.filter(pk=cursor.pk, uidvalidity=uidvalidity, last_uid__lt=uid).update(
        last_uid=uid
    )
    cursor.last_uid = max(cursor.last_uid, uid)


def _connect(mailbox: Mailbox, ssl_context: ssl.SSLContext | None) -> imaplib.IMAP4:
    host, port = mailbox.imap_host, mailbox.imap_port
    client: imaplib.IMAP4
    if mailbox.imap_tls:
        context = ssl_context or _ssl_context()
        client = imaplib.IMAP4_SSL(host, port, ssl_context=context, timeout=IMAP_TIMEOUT_SECONDS)
    else:
        client = imaplib.IMAP4(host, port, timeout=IMAP_TIMEOUT_SECONDS)
    try:
        client.login(mailbox.imap_user, mailbox.imap_password)
    except BaseException:
        try:
            client.logout()
        except (imaplib.IMAP4.error, OSError):
            pass
        raise
    return client


def _ssl_context() -> ssl.SSLContext:
    ca_file = getattr(settings, "MAIL_IMAP_CA_FILE", "") or None
    return ssl.create_default_context(cafile=ca_file)


def _select(client: imaplib.IMAP4, folder: str) -> int:
    """SELECT the folder (read-write: we mark messages); its UIDVALIDITY."""
    typ, data = client.select(_quoted(folder))
    if typ != "OK":
        raise ImapProblem(f"cannot select folder {folder!r}: {_text(data)}")
    _, values = client.response("UIDVALIDITY")
    try:
        return int(values[-1])
    except (TypeError, ValueError, IndexError):
        raise ImapProblem(f"folder {folder!r} has no UIDVALIDITY") from None


def _new_uids(client: imaplib.IMAP4, last_uid: int) -> list[int]:
    """UIDs above `last_uid`, ascending. `UID SEARCH UID n:*` also answers the folder's last
    message when n is past it (`*` is the largest UID; n:* is the same range as *:n), so the
    answer is filtered."""
    data = _ok(client.uid("SEARCH", "UID", f"{last_uid + 1}:*"), "UID SEARCH")
    found = b" ".join(part for part in data if isinstance(part, bytes)).split()
    return sorted(uid for uid in (int(value) for value in found) if uid > last_uid)


def _read(client: imaplib.IMAP4, uid: int) -> bytes | None:
    """The whole message of `uid` without marking it (BODY.PEEK[]), or None when it is gone."""
    data = _ok(client.uid("FETCH", str(uid), "(BODY.PEEK[])"), "UID FETCH")
    for part in data:
        if isinstance(part, tuple) and len(part) == 2:
            envelope, body = part
            found = _UID.search(envelope)
            if found is None or int(found.group(1)) == uid:
                return bytes(body)
    return None


def _ok(answer: tuple[str, list], command: str) -> list:
    typ, data = answer
    if typ != "OK":
        raise ImapProblem(f"{command} refused: {_text(data)}")
    return data


def _text(data: list) -> str:
    return " ".join(
        part.decode(errors="replace") if isinstance(part, bytes) else str(part) for part in data
    )


def _quoted(folder: str) -> str:
    """A folder name as an IMAP quoted string, non-ASCII names in modified UTF-7 (RFC 3501
    5.1.3), which imaplib leaves to the caller."""
    encoded: list[str] = []
    pending = ""

    def flush() -> None:
        nonlocal pending
        if pending:
            packed = base64.b64encode(pending.encode("utf-16-be")).decode().rstrip("=")
            encoded.append("&" + packed.replace("/", ",") + "-")
            pending = ""

    for char in folder:
        if 0x20 <= ord(char) <= 0x7E:
            flush()
            encoded.append("&-" if char == "&" else char)
        else:
            pending += char
    flush()
    name = "".join(encoded)
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _count(result: FetchResult, outcome: str) -> None:
    if outcome in ("ticket", "reply", "duplicate", "kept"):
        setattr(result, outcome, getattr(result, outcome) + 1)
    else:
        result.other += 1


def _failed(result: FetchResult, error: str) -> None:
    result.errors += 1
    result.error = error[:ERROR_MAX_CHARS]
    logger.warning("mail fetch stopped", extra={"mailbox_id": result.mailbox_id, "error": error})


def _record(mailbox: Mailbox, result: FetchResult, now: datetime | None) -> None:
    """The fetch's time and its error (or none) on the cursor; when the database is what
    failed, the log line is all there is."""
    if result.skipped:
        return
    try:
        updated = ImapCursor.objects.filter(mailbox=mailbox).update(
            fetched=now or timezone.now(), last_error=result.error
        )
        if not updated:  # the fetch stopped before it made the cursor (the lock)
            ImapCursor.objects.get_or_create(
                mailbox=mailbox,
                defaults={
                    "folder": mailbox.imap_folder,
                    "fetched": now or timezone.now(),
                    "last_error": result.error,
                },
            )
    except DatabaseError:
        logger.warning("cannot record the fetch", extra={"mailbox": mailbox.address})


def _record_error(mailbox_id: int, error: str, now: datetime | None) -> None:
    try:
        mailbox = Mailbox.objects.get(pk=mailbox_id)
        _record(mailbox, FetchResult(mailbox_id=mailbox_id, error=error), now)
    except (DatabaseError, Mailbox.DoesNotExist):
        logger.warning("cannot record the fetch", extra={"mailbox_id": mailbox_id})


def _lock(mailbox_id: int) -> redis.lock.Lock:
    return _redis().lock(
        LOCK_KEY.format(mailbox_id=mailbox_id), timeout=LOCK_LEASE_SECONDS, blocking=False
    )


def _redis() -> redis.Redis:
    global _redis_client, _redis_url
    url = settings.REDIS_URL
    if _redis_client is None or _redis_url != url:
        _redis_client = redis.Redis.from_url(
            url,
            socket_connect_timeout=REDIS_CONNECT_TIMEOUT_SECONDS,
            socket_timeout=REDIS_COMMAND_TIMEOUT_SECONDS,
        )
        _redis_url = url
    return _redis_client
