"""Every page at a million tickets: build years of realistic history fast, then measure the
pages and calls a desk lives on through HTTP, side by side at each size.

    python bench/scale.py --tickets 10000,100000,1000000          # build (or reuse) and measure
    python bench/scale.py --tickets 1000000 --build-only
    python bench/scale.py --tickets 1000000 --measure-only --database my_copy --only pool

Build (bench/scale_build.py): a database per size (`scale_10k`, `scale_100k`, `scale_1m`;
`--database` names one), migrated empty, then COPY into the real tables, VACUUM ANALYZE; the
build's parameters are kept in `bench_scale_meta` (outside the app's models), so `--reuse`
and `--measure-only` skip a database that already holds that size.

Measure: the production web server (runtime/commands.py `web_command`, production settings,
WEB_CONCURRENCY=2) on that database; each call as the person who makes it (a leader, staff,
an agent, an approver, an applicant, the admin; knox tokens for the API, a session for the
console and admin), `--warmup` unmeasured then `--repeat` measured requests one at a time;
p50/p95 per call and size, the growth of p95 from 100k to 1M, and the target each call is
held to (pages p95 < 100 ms; 30-day reports and metrics < 500 ms; paginated growth ≤ 1.5×).
Benchmarks print figures; they assert nothing (the exit status is 0 either way).

The machine is shared: wrap a measuring run in `flock /tmp/ticketdesk-bench.lock …`."""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import percentile  # noqa: E402

DEFAULT_SIZES = "10000,100000,1000000"
META_TABLE = "bench_scale_meta"
PAGE_TARGET_MS = 100
REPORT_TARGET_MS = 500
GROWTH_TARGET = 1.5


def label(n: int) -> str:
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000}m"
    if n >= 1000 and n % 1000 == 0:
        return f"{n // 1000}k"
    return str(n)


def database_for(n: int) -> str:
    return f"scale_{label(n)}"


def _admin_dsn() -> str:
    base = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    parts = urlsplit(base)
    return urlunsplit(parts._replace(path="/postgres")).replace("postgres://", "postgresql://", 1)


def _dsn(database: str) -> str:
    parts = urlsplit(_admin_dsn())
    return urlunsplit(parts._replace(path=f"/{database}"))


def _git_commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        return ""


def read_meta(database: str) -> dict | None:
    """The build recorded in `database` (None: no such database or no finished build)."""
    import psycopg

    with psycopg.connect(_admin_dsn(), autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [database]).fetchone():
            return None
    with psycopg.connect(_dsn(database), autocommit=True) as conn:
        if not conn.execute("SELECT to_regclass(%s)", [META_TABLE]).fetchone()[0]:
            return None
        row = conn.execute(f"SELECT meta FROM {META_TABLE} ORDER BY id DESC LIMIT 1").fetchone()
    return row[0] if row else None


def write_meta(meta: dict) -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE TABLE IF NOT EXISTS {META_TABLE} (id serial PRIMARY KEY, "
            "built_at timestamptz NOT NULL DEFAULT now(), meta jsonb NOT NULL)"
        )
        cursor.execute(f"INSERT INTO {META_TABLE} (meta) VALUES (%s)", [json.dumps(meta)])


# Build ----------------------------------------------------------------------------------------


def build_one(tickets: int, database: str, days: int, seed: int) -> None:
    """In this process: a fresh `database`, migrated, the history, VACUUM ANALYZE, the meta."""
    import psycopg

    with psycopg.connect(_admin_dsn(), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{database}"')
        conn.execute(f'CREATE DATABASE "{database}"')
    os.environ["DATABASE_URL"] = _dsn(database).replace("postgresql://", "postgres://", 1)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    os.environ.setdefault("LOG_LEVEL", "ERROR")
    import django
    from django.core.management import call_command

    django.setup()
    started = time.monotonic()
    commit = _git_commit()  # the generator's code as it was when the build began
    call_command("migrate", verbosity=0, interactive=False)
    print(f"[{database}] migrated ({time.monotonic() - started:.0f}s)", flush=True)

    from bench import scale_build

    now = datetime.now(UTC).replace(microsecond=0)
    summary = scale_build.build(
        tickets=tickets,
        now=now,
        days=days,
        seed=seed,
        progress=lambda line: print(f"[{database}] {line}", flush=True),
    )
    print(f"[{database}] written ({summary.seconds:.0f}s); VACUUM ANALYZE …", flush=True)
    from django.db import connection

    vacuum_started = time.monotonic()
    with connection.cursor() as cursor:
        cursor.execute("VACUUM (ANALYZE)")
        cursor.execute("SELECT pg_database_size(current_database())")
        size = cursor.fetchone()[0]
    total = time.monotonic() - started
    meta = {
        "tickets": tickets,
        "days": days,
        "seed": seed,
        "now": now.isoformat(),
        "commit": commit,
        "seconds": round(total, 1),
        "rows": dict(summary.rows),
        "states": dict(summary.states),
        "showcase_ticket": summary.showcase_ticket,
        "bytes": size,
    }
    write_meta(meta)
    print(
        f"[{database}] summary: {tickets} tickets in {total:.0f}s "
        f"(written {summary.seconds:.0f}s, "
        f"vacuum+analyze {time.monotonic() - vacuum_started:.0f}s), "
        f"{size / 2**30:.2f} GiB"
    )
    for table, n in sorted(summary.rows.items()):
        print(f"    {table:<24} {n:>12,}")
    print("    states: " + ", ".join(f"{n:,} {s}" for s, n in summary.states.most_common()))


def ensure_built(tickets: int, database: str, args) -> None:
    meta = read_meta(database)
    if meta and meta.get("tickets") == tickets and (args.reuse or args.measure_only):
        print(
            f"[{database}] holds {tickets:,} tickets (built {meta['now']}, commit "
            f"{meta.get('commit')}): reused"
        )
        return
    if args.measure_only:
        raise SystemExit(f"{database} holds no build of {tickets} tickets: build it first")
    # A process of its own: Django is set up once per database.
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--build-into",
        database,
        "--tickets",
        str(tickets),
        "--days",
        str(args.days),
        "--seed",
        str(args.seed),
    ]
    subprocess.run(command, check=True)


# Measure --------------------------------------------------------------------------------------


@dataclass
class Call:
    name: str
    who: str  # a key of the people measured as
    path: str
    api: bool  # knox token (else the person's session)
    kind: str  # "page", "report" (30-day reports and metrics) — the target
    paginated: bool = False


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Web:
    """The production web server alone (no worker or beat: nothing measured here needs one)."""

    def __init__(self, database: str, redis_url: str):
        from runtime.commands import web_command

        self.port = _free_port()
        self.log = Path(tempfile.mkdtemp(prefix="scale-web-")) / "web.log"
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings.production",
            "DJANGO_SECRET_KEY": "scale-run-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz",
            "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
            "DATABASE_URL": _dsn(database).replace("postgresql://", "postgres://", 1),
            "REDIS_URL": redis_url,
            "SECURE_SSL_REDIRECT": "false",
            "SESSION_COOKIE_SECURE": "false",
            "CSRF_COOKIE_SECURE": "false",
            "THROTTLE_USER": "1000000/min",
            "THROTTLE_ANON": "1000000/min",
            # Every size logs its people in again: more than the login rate in a minute.
            "THROTTLE_LOGIN": "1000000/min",
            "EMAIL_BACKEND": "django.core.mail.backends.dummy.EmailBackend",
            "LOG_LEVEL": "WARNING",
            "WEB_BIND": f"127.0.0.1:{self.port}",
            "WEB_CONCURRENCY": "2",
            "WEB_KEEPALIVE": "75",
        }
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                web_command(env),
                cwd=ROOT,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.base = f"http://127.0.0.1:{self.port}"
        self._wait()

    def _wait(self, timeout: float = 90) -> None:
        import requests

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the web server exited: see {self.log}")
            try:
                if requests.get(f"{self.base}/readyz", timeout=5).status_code == 200:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.5)
        raise RuntimeError(f"the web server did not become ready: see {self.log}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


def _people(database: str) -> dict:
    """Who is measured as, and the ids the calls name, read from the build."""
    import psycopg

    with psycopg.connect(_dsn(database), autocommit=True) as conn:

        def one(sql, params=()):
            return conn.execute(sql, params).fetchone()

        group_id, leader, members = one(
            "SELECT g.id, u.username, g.member_user_ids FROM oa_ticket_handler_group g "
            "JOIN auth_user u ON u.id = g.leader_id WHERE g.name = 'Scale group 01'"
        )
        agent = one("SELECT username FROM auth_user WHERE id = %s", [int(members.split(",")[0])])[0]
        showcase = one(
            "SELECT id FROM oa_ticket_bill WHERE reply_count >= 200 ORDER BY id DESC LIMIT 1"
        )[0]
        applicant = one(
            "SELECT u.username FROM auth_user u JOIN oa_ticket_bill t ON t.creator_id = u.id "
            "WHERE u.username LIKE 'scale_user%%' GROUP BY u.username ORDER BY count(*) DESC "
            "LIMIT 1"
        )[0]
        # An applicant copied in on others' tickets (the most, of the build's cc watchers).
        watcher = one(
            "SELECT u.username FROM auth_user u JOIN oa_ticket_watcher w ON w.user_id = u.id "
            "WHERE u.username LIKE 'scale_user%%' GROUP BY u.username "
            "ORDER BY count(*) DESC, u.username LIMIT 1"
        )
        word = one("SELECT title FROM oa_ticket_bill ORDER BY id DESC LIMIT 1")[0].split()[0]
        view = _saved_views(conn, agent, group_id, word)
    return {
        "group": group_id,
        "showcase": showcase,
        "word": word,
        "view": view,
        "users": {
            "leader": leader,
            "staff": "scale_staff",
            "admin": "scale_admin",
            "agent": agent,
            "approver": "scale_approver0",
            "applicant": applicant,
            "watcher": watcher[0] if watcher else applicant,
        },
    }


# The agent's ten saved views (issue 28): tabs beside My work, each with its count.
SCALE_VIEWS = (
    ("Scale view: VIP", {"tag": "vip"}),
    ("Scale view: needs a part", {"tag": "needs-part"}),
    ("Scale view: urgent", {"priority": 4}),
    ("Scale view: response due within 1 h", {"sla": "response_due_1h"}),
    ("Scale view: in progress", {"status": [3]}),
    ("Scale view: mine", {"handler": "me"}),
    ("Scale view: hardware", {"category": "hardware"}),
    ("Scale view: one asset", {"fields": {"asset_tag": "PC-00042"}}),
    ("Scale view: breached", {"sla": "breached"}),
    ("Scale view: my group, waiting", {"status": [1]}),
)


def _saved_views(conn, agent: str, group_id: int, word: str) -> int:
    """The agent's SCALE_VIEWS, made again (the build predates them or a run changed them);
    the id of the first."""
    (agent_id,) = conn.execute("SELECT id FROM auth_user WHERE username = %s", [agent]).fetchone()
    conn.execute("DELETE FROM toolbox_saved_view WHERE name LIKE 'Scale view:%%'")
    first = None
    for order, (name, filters) in enumerate(SCALE_VIEWS):
        filters = {**filters, "group": group_id} if "group" in name else filters
        (made,) = conn.execute(
            "INSERT INTO toolbox_saved_view (name, scope, owner_id, group_id, created, updated, "
            "filters, sort, \"order\") VALUES (%s, 'personal', %s, NULL, now(), now(), %s, '', "
            "%s) RETURNING id",
            [name, agent_id, json.dumps(filters), order],
        ).fetchone()
        first = first or made
    return first


def calls(ids: dict, today) -> list[Call]:
    group, showcase, word = ids["group"], ids["showcase"], ids["word"]
    d30 = (today - timedelta(days=29)).isoformat()
    t = today.isoformat()
    tomorrow = (today + timedelta(days=1)).isoformat()
    q30 = f"from={d30}&to={t}"
    return [
        Call("pool mine (My work)", "agent", "/console/?view=mine", False, "page"),
        Call("pool pending, page 1", "agent", "/console/?view=pending", False, "page", True),
        Call(
            "pool pending, page 100",
            "agent",
            "/console/?view=pending&page=100",
            False,
            "page",
            True,
        ),
        Call("pool all, page 1", "agent", "/console/?view=all", False, "page", True),
        Call("pool all, page 100", "agent", "/console/?view=all&page=100", False, "page", True),
        Call(
            "My work API (my_handling)",
            "agent",
            "/api/tickets/?view=my_handling",
            True,
            "page",
            True,
        ),
        Call("approvals queue", "approver", "/console/approvals/", False, "page", True),
        Call("ticket page, 200 replies", "agent", f"/console/tickets/{showcase}/", False, "page"),
        Call("my tickets (applicant)", "applicant", "/console/my-tickets/", False, "page", True),
        # The tickets an applicant sees, their own and those they watch (access.visible_scope).
        Call("my tickets (watcher)", "watcher", "/api/tickets/", True, "page", True),
        Call("watchers list API", "agent", f"/api/tickets/{showcase}/watchers/", True, "page"),
        Call("links list API", "agent", f"/api/tickets/{showcase}/links/", True, "page"),
        Call("supervisor page, leader", "leader", "/console/supervisor/", False, "page"),
        Call("supervisor page, staff", "staff", "/console/supervisor/", False, "page"),
        Call("supervisor live, leader", "leader", "/console/supervisor/?part=live", False, "page"),
        Call("supervisor live, staff", "staff", "/console/supervisor/?part=live", False, "page"),
        Call(
            "supervisor quality, leader",
            "leader",
            "/console/supervisor/?part=quality",
            False,
            "report",
        ),
        Call(
            "supervisor quality, staff",
            "staff",
            "/console/supervisor/?part=quality",
            False,
            "report",
        ),
        Call("SLA page, 30 days", "leader", "/console/sla/", False, "report"),
        Call("SLA report API, 30 days", "leader", f"/api/sla/report/?{q30}", True, "report"),
        Call(
            "SLA report CSV, 30 days",
            "leader",
            f"/api/sla/report/?{q30}&format=csv",
            True,
            "report",
        ),
        Call(
            "queue metrics, 30 days by hour",
            "leader",
            f"/api/metrics/queue/?group={group}&from={d30}&to={tomorrow}&bucket=hour",
            True,
            "report",
        ),
        Call(
            "satisfaction metrics, leader 30 days",
            "leader",
            f"/api/metrics/satisfaction/?group={group}&{q30}",
            True,
            "report",
        ),
        Call(
            "satisfaction metrics, staff 30 days",
            "staff",
            f"/api/metrics/satisfaction/?{q30}",
            True,
            "report",
        ),
        Call("staffing, a day", "leader", f"/api/staffing/?group={group}&date={t}", True, "report"),
        Call("inbox", "agent", "/inbox/", False, "page", True),
        Call("console search", "agent", f"/console/?view=all&q={word}", False, "page", True),
        # The toolbox (issue 28): filters on tags and custom fields, saved views and their
        # counts, autocomplete, the export.
        Call(
            "pool all, a tag (API)",
            "agent",
            "/api/tickets/pool/?view=all&tag=needs-part",
            True,
            "page",
            True,
        ),
        Call(
            "pool all, a custom field (API)",
            "agent",
            "/api/tickets/pool/?view=all&field.asset_tag=PC-00042",
            True,
            "page",
            True,
        ),
        Call("console pool, a tag", "agent", "/console/?view=all&tag=vip", False, "page", True),
        Call("saved views, 10 counts", "agent", "/api/views/", True, "page"),
        Call(
            "a saved view's tickets",
            "agent",
            f"/api/views/{ids['view']}/tickets/",
            True,
            "page",
            True,
        ),
        Call("tags autocomplete", "agent", "/api/tags/?q=v", True, "page"),
        Call(
            "export CSV, a group's tag",
            "leader",
            "/api/tickets/export/?view=all&tag=needs-part&format=csv",
            True,
            "report",
        ),
        Call("admin ticket list", "admin", "/admin/ticketing/ticket/", False, "page", True),
        Call("admin search", "admin", f"/admin/ticketing/ticket/?q={word}", False, "page", True),
    ]


class Clients:
    """A session (console, admin) and a knox token (API) per person, logged in over HTTP."""

    def __init__(self, base: str, users: dict[str, str], password: str):
        import requests

        self.base = base
        self.sessions: dict[str, requests.Session] = {}
        self.tokens: dict[str, requests.Session] = {}
        for who, username in users.items():
            s = requests.Session()
            s.get(f"{base}/accounts/login/", timeout=30)
            r = s.post(
                f"{base}/accounts/login/",
                data={
                    "username": username,
                    "password": password,
                    "csrfmiddlewaretoken": s.cookies.get("csrftoken", ""),
                },
                headers={"Referer": f"{base}/accounts/login/"},
                allow_redirects=False,
                timeout=30,
            )
            if r.status_code != 302:
                raise RuntimeError(f"console login of {username} answered {r.status_code}")
            self.sessions[who] = s
            t = requests.Session()
            r = t.post(
                f"{base}/api/auth/token/",
                json={"username": username, "password": password},
                timeout=30,
            )
            r.raise_for_status()
            t.headers["Authorization"] = f"Token {r.json()['token']}"
            self.tokens[who] = t

    def get(self, call: Call):
        client = self.tokens[call.who] if call.api else self.sessions[call.who]
        return client.get(self.base + call.path, timeout=120, allow_redirects=False)


def measure(database: str, args, redis_url: str) -> dict[str, dict]:
    """{call name: {p50, p95, status}} for `database`."""
    from bench import scale_build

    ids = _people(database)
    meta = read_meta(database) or {}
    web = Web(database, redis_url)
    results: dict[str, dict] = {}
    try:
        clients = Clients(web.base, ids["users"], scale_build.PASSWORD)
        today = datetime.now(UTC).date()
        chosen = [
            c for c in calls(ids, today) if not args.only or re.search(args.only, c.name, re.I)
        ]
        started = time.monotonic()
        for i, call in enumerate(chosen, start=1):
            codes = set()
            for _ in range(args.warmup):
                codes.add(clients.get(call).status_code)
            times = []
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                r = clients.get(call)
                times.append((time.perf_counter() - t0) * 1000)
                codes.add(r.status_code)
            results[call.name] = {
                "p50": percentile(times, 50),
                "p95": percentile(times, 95),
                "status": sorted(codes),
            }
            elapsed = time.monotonic() - started
            eta = elapsed / i * (len(chosen) - i)
            got = results[call.name]
            print(
                f"  [{database}] {i}/{len(chosen)} {call.name}: p50 {got['p50']:.0f} ms, "
                f"p95 {got['p95']:.0f} ms, HTTP {','.join(map(str, got['status']))} "
                f"(ETA {eta:.0f}s)",
                flush=True,
            )
    finally:
        web.stop()
    results["_meta"] = {"tickets": meta.get("tickets"), "commit": meta.get("commit")}
    return results


def fmt_ms(ms: float | None) -> str:
    if ms is None:
        return "–"
    return f"{ms:.0f}" if ms < 1000 else f"{ms / 1000:.2f}s"


def table(sizes: list[int], results: dict[int, dict], call_list: list[Call]) -> str:
    """One row per call: p50 / p95 at each size, the p95 growth 100k → 1M, the target, met."""
    header = ["call"] + [f"{label(n)} p50 / p95 ms" for n in sizes]
    has_growth = 100_000 in results and 1_000_000 in results
    if has_growth:
        header.append("growth 100k→1M (p95)")
    header += ["target", "met"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    largest = max(results)
    for call in call_list:
        if not any(call.name in results[n] for n in results):
            continue
        row = [call.name]
        for n in sizes:
            r = results.get(n, {}).get(call.name)
            bad = (
                ""
                if r is None or r["status"] == [200]
                else f" (HTTP {','.join(map(str, r['status']))})"
            )
            row.append("–" if r is None else f"{fmt_ms(r['p50'])} / {fmt_ms(r['p95'])}{bad}")
        limit = PAGE_TARGET_MS if call.kind == "page" else REPORT_TARGET_MS
        target = f"p95 < {limit} ms"
        top = results[largest].get(call.name)
        met = top is not None and top["p95"] < limit and top["status"] == [200]
        if has_growth:
            a, b = results[100_000].get(call.name), results[1_000_000].get(call.name)
            growth = b["p95"] / a["p95"] if a and b and a["p95"] else None
            row.append("–" if growth is None else f"{growth:.2f}×")
            if call.paginated:
                target += f", growth ≤ {GROWTH_TARGET}×"
                met = met and growth is not None and growth <= GROWTH_TARGET
        row += [target, ("met" if met else "NOT met") + f" (at {label(largest)})"]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--tickets",
        default=DEFAULT_SIZES,
        help=f"tickets per database, a comma list (default {DEFAULT_SIZES})",
    )
    parser.add_argument(
        "--database", help="the databases, one per size, a comma list (default scale_<size>)"
    )
    parser.add_argument(
        "--reuse", action="store_true", help="skip building a database that already holds that size"
    )
    parser.add_argument("--build-only", action="store_true", help="build, do not measure")
    parser.add_argument(
        "--measure-only",
        action="store_true",
        help="measure existing builds (implies --reuse; never builds)",
    )
    parser.add_argument("--repeat", type=int, default=20, help="measured requests per call (20)")
    parser.add_argument("--warmup", type=int, default=3, help="unmeasured requests first (3)")
    parser.add_argument("--only", help="measure only the calls whose name matches this regex")
    parser.add_argument("--days", type=int, default=730, help="history length (730)")
    parser.add_argument("--seed", type=int, default=23)
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument(
        "--table-from",
        help="print the table from figures saved with --json (a comma list of files), "
        "measuring nothing",
    )
    parser.add_argument("--build-into", help=argparse.SUPPRESS)
    args = parser.parse_args()
    sizes = [int(s.replace("_", "")) for s in args.tickets.split(",") if s.strip()]
    if args.table_from:
        saved: dict[int, dict] = {}
        for name in args.table_from.split(","):
            saved.update({int(k): v for k, v in json.loads(Path(name).read_text()).items()})
        call_list = calls({"group": 0, "showcase": 0, "word": ""}, datetime.now(UTC).date())
        print(table(sorted(saved), saved, call_list))
        return
    if args.build_into:
        build_one(sizes[0], args.build_into, args.days, args.seed)
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
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")
    redis_url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/1")
    results = {n: measure(database, args, redis_url) for n, database in databases.items()}
    ids = _people(databases[sizes[-1]])
    call_list = calls(ids, datetime.now(UTC).date())
    print()
    print(
        f"Scale: p50 / p95 over {args.repeat} requests after {args.warmup} warm-ups, one at a "
        f"time, production web server (2 workers); commit {_git_commit()}"
    )
    print(table(sizes, results, call_list))
    if args.json:
        Path(args.json).write_text(json.dumps({str(k): v for k, v in results.items()}, indent=1))
    print(f"\n{time.monotonic() - started:.0f}s in all")


if __name__ == "__main__":
    main()
