"""`manage.py mail_in --mailbox ADDRESS < message.eml`: one message from an MTA's pipe
transport (Postfix `pipe`, Exim `pipe`, a procmail or sieve filter) into the desk.

The exit status is what the MTA acts on (sysexits.h):
- 0: the desk took the message (a ticket, a reply, a duplicate, an automatic message or a
  bounce, a refused sender, or kept in failed mail for a reason other than its syntax).
- 75 EX_TEMPFAIL: the database or Redis is down (checked before the message is read), or the
  database failed while the message was received, or something unexpected went wrong: the
  MTA keeps the message queued and tries again. Nothing is lost; a message delivered twice
  is recognised by its Message-ID.
- 65 EX_DATAERR: the message cannot be parsed. It is kept whole in failed mail (to retry
  from admin after a fix); the MTA's bounce tells the sender.
- 67 EX_NOUSER: no active mailbox has that address.
One line on stderr says what happened."""

import logging
import sys
from typing import BinaryIO

import redis
from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import InterfaceError, OperationalError, connection

from mail.models import FailureReason, Mailbox, MessageOutcome
from mail.services import intake

logger = logging.getLogger(__name__)

EX_OK = 0
EX_DATAERR = 65
EX_NOUSER = 67
EX_TEMPFAIL = 75

REDIS_TIMEOUT_SECONDS = 2.0
# An unreachable database host must not hold the MTA's delivery agent (libpq waits forever
# by default): a DATABASE_URL's own connect_timeout wins.
DATABASE_CONNECT_TIMEOUT_SECONDS = 10
DATABASE_DOWN = (OperationalError, InterfaceError)


class Command(BaseCommand):
    help = "Receive one message from standard input into a mailbox (an MTA's pipe transport)."
    # Run once per message: the system checks would cost more than the message.
    requires_system_checks: list = []
    stealth_options = ("stdin",)  # call_command(..., stdin=BytesIO(...)): the message

    def add_arguments(self, parser):
        parser.add_argument(
            "--mailbox", required=True, help="The address of the mailbox the message came to."
        )

    def handle(self, *args, **options):
        code, line = self._receive(options["mailbox"], options.get("stdin"))
        self.stderr.write(f"mail_in: {line}")
        if code != EX_OK:
            sys.exit(code)

    def _receive(self, address: str, stdin: BinaryIO | None) -> tuple[int, str]:
        down = _unavailable()
        if down:
            return EX_TEMPFAIL, f"tempfail: {down}"
        try:
            mailbox = Mailbox.objects.filter(address__iexact=address.strip(), active=True).first()
        except DATABASE_DOWN as exc:
            return EX_TEMPFAIL, f"tempfail: database: {_brief(exc)}"
        if mailbox is None:
            return EX_NOUSER, f"no active mailbox {address!r}"
        raw = (stdin or sys.stdin.buffer).read()
        try:
            received = intake.receive(mailbox=mailbox, raw=raw, source="pipe")
        except DATABASE_DOWN as exc:
            return EX_TEMPFAIL, f"tempfail: database: {_brief(exc)}"
        except redis.RedisError as exc:
            return EX_TEMPFAIL, f"tempfail: redis: {_brief(exc)}"
        except Exception as exc:  # noqa: BLE001 - queued at the MTA beats a bounce for our bug
            logger.exception("mail_in failed", extra={"mailbox": mailbox.address})
            return EX_TEMPFAIL, f"tempfail: error: {_brief(exc)}"
        summary = _summary(received)
        if received.outcome == MessageOutcome.KEPT and received.detail == FailureReason.UNPARSEABLE:
            return EX_DATAERR, summary
        return EX_OK, summary


def _unavailable() -> str:
    """What is down of what receiving needs ("" when both answer): the database (a
    connection and SELECT 1) and Redis (PING: the broker the message's notifications go
    through, the throttles, the routing)."""
    options = connection.settings_dict.setdefault("OPTIONS", {})
    options.setdefault("connect_timeout", DATABASE_CONNECT_TIMEOUT_SECONDS)
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except DATABASE_DOWN as exc:
        return f"database: {_brief(exc)}"
    client = redis.Redis.from_url(
        settings.REDIS_URL,
        socket_timeout=REDIS_TIMEOUT_SECONDS,
        socket_connect_timeout=REDIS_TIMEOUT_SECONDS,
    )
    try:
        client.ping()
    except redis.RedisError as exc:
        return f"redis: {_brief(exc)}"
    finally:
        client.close()
    return ""


def _summary(received: intake.Received) -> str:
    parts = [received.outcome, received.message_id]
    for name in ("ticket_id", "reply_id", "failed_mail_id"):
        value = getattr(received, name)
        if value is not None:
            parts.append(f"{name.removesuffix('_id')}={value}")
    if received.detail:
        parts.append(f"({received.detail})")
    return " ".join(parts)


def _brief(exc: BaseException) -> str:
    return " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
