"""IMAP mail-in at 1,000 messages: how fast the fetch turns a full folder into tickets and
replies, threaded, through a real IMAP server.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres REDIS_URL=redis://127.0.0.1:6379/0 \\
        flock /tmp/ticketdesk-bench.lock .venv/bin/python bench/mail.py [--runs 3] [--messages 1000]

Set-up: a database of its own (`bench_mail`; BENCH_DATABASE overrides it), migrated; an
embedded Dovecot (devserver/services.py, Debian's dovecot-imapd, installed when missing) in a
temporary directory; 50 applicants and a handler group. Each run starts from no tickets and
no mail (TRUNCATE … CASCADE) and a new IMAP user, and APPENDs `--messages` messages to its
INBOX: 70 % new requests from the 50 senders in turn (14 each at 1,000, under the flood limit
of MAIL_FLOOD_PER_HOUR), 30 % replies from a request's sender threading by In-Reply-To /
References to a request appended earlier (seeded random). Then it times `fetch_all` (one
batch of --batch per call, from the beat task's code path: fetch, intake's transaction,
\\Seen, the cursor) until every message is processed, printing progress with counts and an
ETA, and prints messages/s.

Checks, after each run (a failed check makes the exit status 1): every message became exactly
one ticket or reply (MailMessage rows: one per Message-ID, the requests' outcome "ticket",
the replies' "reply" on their request's ticket), no duplicate, nothing kept in failed mail,
every message \\Seen on the server, and one fetch more finds nothing. The figure is the
median of the runs' messages/s."""

from __future__ import annotations

import argparse
import imaplib
import random
import shutil
import sys
import tempfile
import time
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path
from typing import cast

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import median, restore_default_ladders, setup_django  # noqa: E402

SENDERS = 50
REPLY_SHARE = 0.3
SEED = 27
DOMAIN = "bench-mail.test"
MAILBOX_ADDRESS = f"it-help@{DOMAIN}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--messages", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=100, help="messages per fetch_all call")
    args = parser.parse_args()

    setup_django("bench_mail")
    from devserver.services import EmbeddedDovecot

    data = Path(tempfile.mkdtemp(prefix="ticketdesk-bench-dovecot-"))
    server = EmbeddedDovecot(data / "dovecot")
    server.start()
    rates: list[float] = []
    failed = False
    try:
        group = _people()
        for run in range(1, args.runs + 1):
            rate, ok = _run(server, group, run=run, total=args.messages, batch=args.batch)
            rates.append(rate)
            failed = failed or not ok
    finally:
        server.stop()
        shutil.rmtree(data, ignore_errors=True)
    shown = ", ".join(f"{rate:.0f}" for rate in rates)
    print(
        f"mail-in: {args.messages} messages ({1 - REPLY_SHARE:.0%} new, {REPLY_SHARE:.0%} "
        f"replies) fetched and threaded at {median(rates):.0f} messages/s "
        f"(median of {len(rates)} runs: {shown})"
    )
    if failed:
        print("FAILED: a check did not hold (see above)")
    return 1 if failed else 0


def _people():
    """50 applicants (the senders) and the mailbox's handler group, made once."""
    from django.contrib.auth import get_user_model

    from handler_groups.models import HandlerGroup

    User = get_user_model()
    agent, _ = User.objects.get_or_create(
        username="bench_mail_agent", defaults={"email": f"agent@{DOMAIN}"}
    )
    for i in range(SENDERS):
        User.objects.get_or_create(username=f"bench_mail_sender{i}", defaults={"email": _sender(i)})
    group, _ = HandlerGroup.objects.get_or_create(name="bench mail IT")
    group.member_ids = [agent.pk]
    group.save()
    return group


def _sender(i: int) -> str:
    return f"sender{i}@{DOMAIN}"


def _messages(run: int, total: int) -> tuple[list[bytes], int, int]:
    """The folder's messages in order, and how many are new requests and replies. A reply's
    request is always earlier in the folder (threading needs it received first)."""
    rng = random.Random(SEED + run)
    replies = round(total * REPLY_SHARE)
    new = total - replies
    kinds = ["new"] * new + ["reply"] * replies
    # The first message is a request; shuffle the rest, then move any reply that would come
    # before every request after the first one.
    rest = kinds[1:]
    rng.shuffle(rest)
    order = ["new", *rest]
    requests: list[tuple[str, int, str]] = []  # (Message-ID, sender, subject)
    raws: list[bytes] = []
    for position, kind in enumerate(order):
        msg = EmailMessage()
        if kind == "new":
            sender = len(requests) % SENDERS
            subject = f"Request {len(requests)}: the printer on floor {len(requests) % 7} jams"
            message_id = f"<r{run}-new{len(requests)}@{DOMAIN}>"
            requests.append((message_id, sender, subject))
            body = f"Hello, request number {len(requests)} of run {run}.\n\nThanks\n"
        else:
            parent_id, sender, parent_subject = rng.choice(requests)
            subject = f"Re: {parent_subject}"
            message_id = f"<r{run}-reply{position}@{DOMAIN}>"
            msg["In-Reply-To"] = parent_id
            msg["References"] = parent_id
            body = f"Still happening (message {position}).\n\n> earlier text\n"
        msg["From"] = _sender(sender)
        msg["To"] = MAILBOX_ADDRESS
        msg["Subject"] = subject
        msg["Date"] = format_datetime(_now())
        msg["Message-ID"] = message_id
        msg.set_content(body)
        raws.append(msg.as_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
    return raws, new, replies


def _now():
    from django.utils import timezone

    return timezone.now()


def _reset() -> None:
    """No tickets, no mail: each run starts the same."""
    from django.db import connection

    from mail.models import FailedMail, ImapCursor, Mailbox, MailMessage
    from ticketing.models import Ticket

    tables = [m._meta.db_table for m in (Ticket, Mailbox, MailMessage, FailedMail, ImapCursor)]
    with connection.cursor() as cursor:
        cursor.execute(f"TRUNCATE {', '.join(tables)} RESTART IDENTITY CASCADE")
    restore_default_ladders()


def _append(server, user: str, password: str, raws: list[bytes]) -> float:
    client = imaplib.IMAP4(server.host, server.port, timeout=30)
    client.login(user, password)
    started = time.perf_counter()
    try:
        for i, raw in enumerate(raws, 1):
            # typeshed has append returning a str; it returns (typ, data) like every command.
            typ, data = cast(tuple[str, list[bytes]], client.append("INBOX", "", "", raw))
            if typ != "OK":
                raise RuntimeError(f"APPEND refused: {data}")
            if i % 250 == 0 or i == len(raws):
                print(f"  appended {i}/{len(raws)}", flush=True)
    finally:
        client.logout()
    return time.perf_counter() - started


def _unseen(server, user: str, password: str) -> int:
    client = imaplib.IMAP4(server.host, server.port, timeout=30)
    client.login(user, password)
    try:
        client.select("INBOX", readonly=True)
        _, data = client.uid("SEARCH", "UNSEEN")
        return len(data[0].split()) if data and data[0] else 0
    finally:
        client.logout()


def _run(server, group, *, run: int, total: int, batch: int) -> tuple[float, bool]:
    from mail.models import FailedMail, Mailbox, MailMessage
    from mail.services import fetching
    from ticketing.models import Ticket

    print(f"run {run}: {total} messages", flush=True)
    _reset()
    user, password = f"bench{run}-{int(time.time())}", "bench-secret"
    server.add_user(user, password)
    mailbox = Mailbox(
        address=MAILBOX_ADDRESS,
        name="IT support",
        handler_group=group,
        imap_host=server.host,
        imap_port=server.port,
        imap_tls=False,
        imap_user=user,
    )
    mailbox.imap_password = password
    mailbox.save()
    raws, new, replies = _messages(run, total)
    appended = _append(server, user, password, raws)
    print(f"  APPEND took {appended:.1f} s", flush=True)

    counts = {"fetched": 0, "ticket": 0, "reply": 0, "duplicate": 0, "kept": 0, "other": 0}
    errors: list[str] = []
    started = time.perf_counter()
    while counts["fetched"] < total:
        [result] = fetching.fetch_all(batch=batch, budget_seconds=0)
        for name in counts:
            counts[name] += getattr(result, name)
        if result.error:
            errors.append(result.error)
            if len(errors) > 3:
                break
        if result.fetched == 0 and not result.more:
            break
        elapsed = time.perf_counter() - started
        rate = counts["fetched"] / elapsed if elapsed else 0.0
        eta = (total - counts["fetched"]) / rate if rate else float("nan")
        print(
            f"  {counts['fetched']}/{total} fetched: {counts['ticket']} tickets, "
            f"{counts['reply']} replies, {counts['duplicate']} duplicates, {counts['kept']} "
            f"kept, {counts['other']} other; {rate:.0f}/s, ETA {eta:.0f} s",
            flush=True,
        )
    seconds = time.perf_counter() - started
    rate = counts["fetched"] / seconds if seconds else 0.0
    print(f"  fetched and threaded {counts['fetched']} in {seconds:.1f} s: {rate:.0f} messages/s")

    again = fetching.fetch_all(batch=batch)[0]
    by_outcome = {
        outcome: MailMessage.objects.filter(mailbox=mailbox, direction="in", outcome=outcome)
        .values("message_id")
        .count()
        for outcome in ("ticket", "reply")
    }
    # A reply is on the ticket its In-Reply-To's request opened.
    opened = dict(
        MailMessage.objects.filter(mailbox=mailbox, outcome="ticket").values_list(
            "message_id", "ticket_id"
        )
    )
    misthreaded = sum(
        1
        for in_reply_to, ticket_id, reply_id in MailMessage.objects.filter(
            mailbox=mailbox, outcome="reply"
        ).values_list("in_reply_to", "ticket_id", "reply_id")
        if reply_id is None or opened.get(in_reply_to.strip().strip("<>")) != ticket_id
    )
    checks = [
        ("no fetch error", not errors, "; ".join(errors[:3])),
        ("every message fetched once", counts["fetched"] == total, f"{counts['fetched']}"),
        (
            "requests became tickets",
            counts["ticket"] == new == by_outcome["ticket"] == Ticket.objects.count(),
            f"{counts['ticket']} counted, {by_outcome['ticket']} rows, {new} sent",
        ),
        (
            "replies threaded onto their tickets",
            counts["reply"] == replies == by_outcome["reply"] and not misthreaded,
            f"{counts['reply']} counted, {by_outcome['reply']} rows, {misthreaded} elsewhere",
        ),
        (
            "no duplicate, nothing kept",
            counts["duplicate"] == counts["kept"] == counts["other"] == 0
            and not FailedMail.objects.exists(),
            f"{counts['duplicate']} duplicates, {counts['kept']} kept, {counts['other']} other",
        ),
        ("every message \\Seen", _unseen(server, user, password) == 0, ""),
        ("a fetch more finds nothing", again.fetched == 0 and not again.error, str(again)),
    ]
    ok = True
    for name, held, detail in checks:
        ok = ok and held
        print(f"  check {name}: {'ok' if held else 'FAILED ' + detail}")
    return rate, ok


if __name__ == "__main__":
    sys.exit(main())
