"""Full-text search at 100,000 and 1,000,000 tickets: build the data, then measure
`GET /api/search/` through HTTP, side by side.

    flock /tmp/ticketdesk-bench.lock python bench/search.py                # build or reuse, measure
    python bench/search.py --tickets 100000 --build-only
    python bench/search.py --tickets 100000,1000000 --measure-only --repeat 30

Build: a database per size (`bench_search_100k`, `bench_search_1m`; `--database` names them),
migrated empty, then written with COPY by two processes side by side (each a half of the
tickets, in its own transaction): 20 handler groups of 5 agents, 2,000 applicants, a staff
user; per ticket 5 replies (15 % internal notes), one ticket in five with a file name, one
reply in twenty with one; titles, contents and replies are mixed Chinese and English support
text from a vocabulary of 4,000 words (bench/search_text.py), seeded. The secondary indexes
of the three tables are dropped for the load and built again after it, then VACUUM ANALYZE.
The database computes the search vectors (generated columns) during the COPY itself, as it
does for any write. The build is recorded in `bench_search_meta`; a database holding a build
of the same size and generator is reused.

Measure: the production web server (runtime/commands.py, 2 workers) on that database; as an
agent of one group and as staff (knox tokens), `--warmup` unmeasured then `--repeat`
measured requests one at a time, cycling through 10 queries of each kind: one English word of
middle frequency, two such words (AND), a Chinese two-character word, a bill code. p50/p95
per kind, role and size. Benchmarks print figures; they assert nothing."""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import percentile  # noqa: E402
from bench.scale import Web, _admin_dsn, _dsn, _git_commit, label  # noqa: E402
from bench.search_text import Writer  # noqa: E402

GENERATOR = 1  # bump when the data changes: a build of another generator is not reused
META_TABLE = "bench_search_meta"
GROUPS = 20
AGENTS_PER_GROUP = 5
APPLICANTS = 2000
REPLIES_PER_TICKET = 5
PASSWORD = "search12345"
DAYS = 730
CHUNK = 5000
WORKERS = 2
TABLES = ("oa_ticket_bill", "oa_ticket_reply", "attachments_attachment")
TARGET_MS = 150  # two words, p95, at a million tickets


def database_for(n: int) -> str:
    return f"bench_search_{label(n)}"


def read_meta(database: str) -> dict | None:
    import psycopg

    with psycopg.connect(_admin_dsn(), autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [database]).fetchone():
            return None
    with psycopg.connect(_dsn(database), autocommit=True) as conn:
        if not conn.execute("SELECT to_regclass(%s)", [META_TABLE]).fetchone()[0]:
            return None
        row = conn.execute(f"SELECT meta FROM {META_TABLE} ORDER BY id DESC LIMIT 1").fetchone()
    return row[0] if row else None


# Build ----------------------------------------------------------------------------------------


def _people(cursor, password_hash: str, now: datetime) -> dict:
    """Users, profiles and groups; {"staff", "agents" (per group), "applicants", ...}."""
    names = ["search_staff"]
    names += [f"search_agent{g:02d}_{a}" for g in range(GROUPS) for a in range(AGENTS_PER_GROUP)]
    names += [f"search_user{u:04d}" for u in range(APPLICANTS)]
    with cursor.copy(
        "COPY auth_user (id, password, is_superuser, username, first_name, last_name, email, "
        "is_staff, is_active, date_joined) FROM STDIN"
    ) as copy:
        for i, name in enumerate(names, start=1):
            staff = name == "search_staff"
            row = (i, password_hash, False, name, "", "", f"{name}@example.test", staff, True, now)
            copy.write_row(row)
    cursor.execute("SELECT setval(pg_get_serial_sequence('auth_user', 'id'), %s)", [len(names)])
    with cursor.copy(
        "COPY oa_user_profile (user_id, time_zone, language, browser_language) FROM STDIN"
    ) as copy:
        for i in range(1, len(names) + 1):
            copy.write_row((i, "", "", ""))
    agents = [
        [2 + g * AGENTS_PER_GROUP + a for a in range(AGENTS_PER_GROUP)] for g in range(GROUPS)
    ]
    from handler_groups.models import HandlerGroup

    groups = HandlerGroup.objects.bulk_create(
        HandlerGroup(name=f"Search group {g:02d}", member_user_ids=",".join(map(str, agents[g])))
        for g in range(GROUPS)
    )
    first_applicant = 2 + GROUPS * AGENTS_PER_GROUP
    return {
        "staff": 1,
        "groups": [g.pk for g in groups],
        "agents": agents,
        "applicants": list(range(first_applicant, first_applicant + APPLICANTS)),
    }


def _drop_indexes(cursor) -> list[str]:
    from bench.scale_build import _drop_indexes

    return _drop_indexes(cursor, TABLES)


def _write_part(args) -> dict:
    """One worker: tickets [start, stop) with their replies and files, in one transaction."""
    import psycopg

    database, start, stop, total, people, now_iso, seed, part = args
    now = datetime.fromisoformat(now_iso)
    text = Writer(seed, part + 1)
    rng = text.rng
    counts = {"tickets": 0, "replies": 0, "attachments": 0}
    started = time.monotonic()
    span = DAYS * 86400
    with psycopg.connect(_dsn(database)) as conn:
        conn.execute("SET session_replication_role = replica")
        cursor = conn.cursor()
        for chunk_start in range(start, stop, CHUNK):
            chunk_stop = min(stop, chunk_start + CHUNK)
            tickets, replies, files = [], [], []
            for ticket_id in range(chunk_start, chunk_stop):
                # Ids in arrival order: the newest ticket has the highest id.
                submitted = now - timedelta(seconds=span * (1 - ticket_id / (total + 1)))
                g = rng.randrange(GROUPS)
                handler = rng.choice(people["agents"][g])
                creator = rng.choice(people["applicants"])
                recent = ticket_id > total - 300
                status = rng.choice((1, 2, 3)) if recent else 5
                public = 0
                for r in range(REPLIES_PER_TICKET):
                    reply_id = (ticket_id - 1) * REPLIES_PER_TICKET + r + 1
                    internal = rng.random() < 0.15
                    public += not internal
                    created = submitted + timedelta(minutes=30 * (r + 1))
                    author = handler if internal or r % 2 == 0 else creator
                    body = text.body(6, 30)
                    replies.append(
                        (reply_id, ticket_id, author, 2 if internal else 1, body, created)
                    )
                    if rng.random() < 0.05:
                        files.append((reply_id, ticket_id, author, created))
                if rng.random() < 0.2:
                    files.append((None, ticket_id, creator, submitted))
                tickets.append(
                    (
                        ticket_id,
                        f"TK{submitted:%Y%m%d}{ticket_id:07d}",
                        text.title(),
                        text.body(15, 45),
                        rng.choice((1, 2, 2, 3, 4)),
                        rng.choice(("hardware", "network", "access", "software", "payroll")),
                        2,
                        status,
                        submitted,
                        submitted + timedelta(minutes=20),
                        creator,
                        handler if status != 1 else None,
                        people["groups"][g],
                        REPLIES_PER_TICKET,
                        public,
                        None if recent else submitted + timedelta(days=2),
                    )
                )
            with cursor.copy(
                "COPY oa_ticket_bill (id, bill_code, title, content, priority, category, "
                "process_status, ticket_status, submitted_time, approved_time, creator_id, "
                "handler_id, handler_group_id, reply_count, public_reply_count, closed_time) "
                "FROM STDIN"
            ) as copy:
                for row in tickets:
                    copy.write_row(row)
            with cursor.copy(
                "COPY oa_ticket_reply (id, ticket_id, author_id, reply_type, content, created) "
                "FROM STDIN"
            ) as copy:
                for row in replies:
                    copy.write_row(row)
            with cursor.copy(
                "COPY attachments_attachment (id, blob_id, filename, uploader_id, uploaded, "
                "attached, ticket_id, reply_id) FROM STDIN"
            ) as copy:
                for reply_id, ticket_id, uploader, at in files:
                    # Ids: 2 per ticket are more than the files drawn (1.25 on average).
                    counts["attachments"] += 1
                    file_id = (ticket_id - 1) * 8 + counts["attachments"] % 8 + 1
                    row = (file_id, 1, text.filename(), uploader, at, at, ticket_id, reply_id)
                    copy.write_row(row)
            counts["tickets"] += len(tickets)
            counts["replies"] += len(replies)
            done = counts["tickets"]
            elapsed = time.monotonic() - started
            rate = done / elapsed
            print(
                f"[{database}] part {part + 1}/{WORKERS}: tickets {done:,}/{stop - start:,} "
                f"({100 * done / (stop - start):.0f}%), replies {counts['replies']:,}, "
                f"files {counts['attachments']:,}, {rate:.0f} tickets/s, "
                f"ETA {(stop - start - done) / rate:.0f}s",
                flush=True,
            )
        conn.commit()
    return counts


def build_one(tickets: int, database: str, seed: int) -> None:
    """In this process: a fresh `database`, migrated, the data, the indexes, ANALYZE, meta."""
    import psycopg

    with psycopg.connect(_admin_dsn(), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{database}"')
        conn.execute(f'CREATE DATABASE "{database}"')
    os.environ["DATABASE_URL"] = _dsn(database).replace("postgresql://", "postgres://", 1)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    os.environ.setdefault("LOG_LEVEL", "ERROR")
    import django
    from django.contrib.auth.hashers import PBKDF2PasswordHasher
    from django.core.management import call_command
    from django.db import connection

    django.setup()
    started = time.monotonic()
    commit = _git_commit()
    call_command("migrate", verbosity=0, interactive=False)
    print(f"[{database}] migrated ({time.monotonic() - started:.0f}s)", flush=True)
    now = datetime.now(UTC).replace(microsecond=0)
    password_hash = PBKDF2PasswordHasher().encode(PASSWORD, "searchbenchsalt1")
    with connection.cursor() as dj:
        cursor = dj.cursor
        people = _people(cursor, password_hash, now)
        cursor.execute(
            "INSERT INTO attachments_blob (id, sha256, size, content_type, created, thumbnail) "
            "VALUES (1, repeat('0', 64), 1024, 'text/plain', now(), '')"
        )
        again = _drop_indexes(cursor)
    print(f"[{database}] people and groups written; {len(again)} indexes dropped", flush=True)
    bounds = [1 + tickets * i // WORKERS for i in range(WORKERS + 1)]
    jobs = [
        (database, bounds[i], bounds[i + 1], tickets, people, now.isoformat(), seed, i)
        for i in range(WORKERS)
    ]
    connection.close()
    with multiprocessing.get_context("spawn").Pool(WORKERS) as pool:
        parts = pool.map(_write_part, jobs)
    written = time.monotonic() - started
    print(f"[{database}] rows written ({written:.0f}s); building {len(again)} indexes", flush=True)
    with connection.cursor() as dj:
        cursor = dj.cursor
        cursor.execute("SET maintenance_work_mem = '512MB'")
        for table in TABLES:
            cursor.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                f"(SELECT coalesce(max(id), 1) FROM {table}))"
            )
        cursor.execute("SELECT setval('ticket_bill_code_seq', %s)", [tickets + 1])
        for i, statement in enumerate(again, start=1):
            t0 = time.monotonic()
            cursor.execute(statement)
            name = statement.split(" ON ")[0].split()[-1]
            print(
                f"[{database}] index {i}/{len(again)} {name} ({time.monotonic() - t0:.0f}s)",
                flush=True,
            )
        print(f"[{database}] VACUUM ANALYZE …", flush=True)
        cursor.execute("VACUUM (ANALYZE)")
        cursor.execute("SELECT pg_database_size(current_database())")
        size = cursor.fetchone()[0]
        sizes = {}
        for table in TABLES:
            cursor.execute(
                "SELECT pg_relation_size(%s), pg_indexes_size(%s), "
                "coalesce(pg_relation_size(to_regclass(%s)), 0)",
                [table, table, _search_index(table)],
            )
            sizes[table] = dict(
                zip(("heap", "indexes", "search_index"), cursor.fetchone(), strict=True)
            )
        rows = {
            key: sum(part[key] for part in parts) for key in ("tickets", "replies", "attachments")
        }
        meta = {
            "tickets": tickets,
            "generator": GENERATOR,
            "seed": seed,
            "now": now.isoformat(),
            "commit": commit,
            "seconds": round(time.monotonic() - started, 1),
            "rows": rows,
            "bytes": size,
            "sizes": sizes,
        }
        cursor.execute(
            f"CREATE TABLE IF NOT EXISTS {META_TABLE} (id serial PRIMARY KEY, "
            "built_at timestamptz NOT NULL DEFAULT now(), meta jsonb NOT NULL)"
        )
        cursor.execute(f"INSERT INTO {META_TABLE} (meta) VALUES (%s)", [json.dumps(meta)])
    print(
        f"[{database}] summary: {rows['tickets']:,} tickets, {rows['replies']:,} replies, "
        f"{rows['attachments']:,} files in {meta['seconds']:.0f}s (rows {written:.0f}s), "
        f"{size / 2**30:.2f} GiB",
        flush=True,
    )
    for table, s in sizes.items():
        print(
            f"    {table:<24} heap {s['heap'] / 2**20:,.0f} MiB, indexes "
            f"{s['indexes'] / 2**20:,.0f} MiB (search {s['search_index'] / 2**20:,.0f} MiB)"
        )


def _search_index(table: str) -> str:
    return {
        "oa_ticket_bill": "ticket_search_vector_idx",
        "oa_ticket_reply": "reply_search_vector_idx",
        "attachments_attachment": "attachment_search_vector_idx",
    }[table]


def ensure_built(tickets: int, database: str, args) -> None:
    meta = read_meta(database)
    if meta and meta.get("tickets") == tickets and meta.get("generator") == GENERATOR:
        print(
            f"[{database}] holds {tickets:,} tickets (built {meta['now']}, commit "
            f"{meta.get('commit')}, {meta.get('seconds')}s): reused; migrating",
            flush=True,
        )
        import subprocess

        env = {**os.environ, "DATABASE_URL": _dsn(database).replace("postgresql", "postgres", 1)}
        env.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
        subprocess.run(
            [sys.executable, str(ROOT / "manage.py"), "migrate", "-v0"], env=env, check=True
        )
        return
    if args.measure_only:
        raise SystemExit(f"{database} holds no build of {tickets} tickets: build it first")
    import subprocess

    command = [sys.executable, str(Path(__file__).resolve()), "--build-into", database]
    command += ["--tickets", str(tickets), "--seed", str(args.seed)]
    subprocess.run(command, check=True)


# Measure --------------------------------------------------------------------------------------

KINDS = ("one word", "two words", "Chinese word", "bill code")
ROLES = ("agent", "staff")


def queries(database: str, seed: int) -> dict[str, list[str]]:
    """10 queries of each kind: English words drawn with a share of 0.2–0.6 % of the words
    (each in some 5–15 % of the documents), Chinese words likewise, and bill codes of the
    measured agent's group, spread over the years."""
    import psycopg

    text = Writer(seed)
    en = [w for w in text.en if 0.002 <= text.share(w) <= 0.006][:20]
    zh = [w for w in text.zh if 0.002 <= text.share(w) <= 0.006 and len(w) == 2][:10]
    with psycopg.connect(_dsn(database), autocommit=True) as conn:
        # Tickets of the measured agent's group (so both roles find them), spread over time.
        codes = [
            row[0]
            for row in conn.execute(
                "SELECT min(bill_code) FROM (SELECT bill_code, ntile(10) OVER (ORDER BY t.id) "
                "AS part FROM oa_ticket_bill t JOIN oa_ticket_handler_group g "
                "ON g.id = t.handler_group_id WHERE g.name = 'Search group 00') s GROUP BY part"
            )
        ]
    return {
        "one word": en[:10],
        "two words": [f"{en[i]} {en[19 - i]}" for i in range(10)],
        "Chinese word": zh,
        "bill code": codes,
    }


def measure(database: str, args, redis_url: str) -> dict:
    from urllib.parse import quote

    import requests

    web = Web(database, redis_url)
    found: dict = {}
    try:
        agent = f"search_agent{0:02d}_0"
        tokens = {}
        for role, username in (("agent", agent), ("staff", "search_staff")):
            session = requests.Session()
            r = session.post(
                f"{web.base}/api/auth/token/",
                json={"username": username, "password": PASSWORD},
                timeout=30,
            )
            r.raise_for_status()
            session.headers["Authorization"] = f"Token {r.json()['token']}"
            tokens[role] = session
        asked = queries(database, args.seed)
        for kind in KINDS:
            for role in ROLES:
                session = tokens[role]
                times, codes, counts = [], set(), []
                qs = asked[kind]
                for i in range(args.warmup + args.repeat):
                    q = qs[i % len(qs)]
                    t0 = time.perf_counter()
                    r = session.get(f"{web.base}/api/search/?q={quote(q)}", timeout=120)
                    ms = (time.perf_counter() - t0) * 1000
                    codes.add(r.status_code)
                    if i >= args.warmup:
                        times.append(ms)
                        if r.status_code == 200:
                            counts.append(r.json()["count"])
                got = {
                    "p50": percentile(times, 50),
                    "p95": percentile(times, 95),
                    "status": sorted(codes),
                    "median_count": sorted(counts)[len(counts) // 2] if counts else None,
                }
                found[f"{kind} / {role}"] = got
                print(
                    f"  [{database}] {kind}, {role}: p50 {got['p50']:.0f} ms, p95 "
                    f"{got['p95']:.0f} ms, HTTP {','.join(map(str, got['status']))}, "
                    f"median results {got['median_count']}",
                    flush=True,
                )
        found["_queries"] = asked
    finally:
        web.stop()
    return found


def table(sizes: list[int], results: dict[int, dict]) -> str:
    header = ["query, as"] + [f"{label(n)} p50 / p95 ms (results)" for n in sizes]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for kind in KINDS:
        for role in ROLES:
            key = f"{kind} / {role}"
            row = [f"{kind}, {role}"]
            for n in sizes:
                r = results.get(n, {}).get(key)
                if r is None:
                    row.append("–")
                    continue
                bad = "" if r["status"] == [200] else f" HTTP {r['status']}"
                row.append(f"{r['p50']:.0f} / {r['p95']:.0f} ({r['median_count']}){bad}")
            lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tickets", default="100000,1000000", help="sizes, a comma list")
    parser.add_argument("--database", help="the databases, one per size, a comma list")
    parser.add_argument("--build-only", action="store_true")
    parser.add_argument("--measure-only", action="store_true")
    parser.add_argument("--repeat", type=int, default=40, help="measured requests per row (40)")
    parser.add_argument("--warmup", type=int, default=5, help="unmeasured requests first (5)")
    parser.add_argument("--seed", type=int, default=25)
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--build-into", help=argparse.SUPPRESS)
    args = parser.parse_args()
    sizes = [int(s.replace("_", "")) for s in args.tickets.split(",") if s.strip()]
    if args.build_into:
        build_one(sizes[0], args.build_into, args.seed)
        return
    names = [d.strip() for d in args.database.split(",")] if args.database else []
    if names and len(names) != len(sizes):
        parser.error("--database names one database per --tickets size")
    databases = {n: names[i] if names else database_for(n) for i, n in enumerate(sizes)}
    started = time.monotonic()
    for n, database in databases.items():
        ensure_built(n, database, args)
    if args.build_only:
        print(f"built in {time.monotonic() - started:.0f}s")
        return
    redis_url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/1")
    results = {n: measure(database, args, redis_url) for n, database in databases.items()}
    print()
    print(
        f"Search: p50 / p95 over {args.repeat} requests after {args.warmup} warm-ups, one at a "
        f"time, 10 queries of each kind in turn, production web server (2 workers); commit "
        f"{_git_commit()}; target: two words p95 < {TARGET_MS} ms at 1m"
    )
    print(table(sizes, results))
    for n in sizes:
        print(
            f"queries at {label(n)}: {json.dumps(results[n].get('_queries'), ensure_ascii=False)}"
        )
    if args.json:
        Path(args.json).write_text(json.dumps({str(k): v for k, v in results.items()}, indent=1))
    print(f"\n{time.monotonic() - started:.0f}s in all")


if __name__ == "__main__":
    main()
