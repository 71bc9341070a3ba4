"""Shared set-up for benchmark scripts: a dedicated database (never the dev or test one),
migrated, with Django configured. Benchmarks print figures; they assert nothing."""

import os
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def setup_django(database: str = "ticketdesk_bench") -> None:
    """Point DATABASE_URL at `database` on the same server (BENCH_DATABASE overrides it, so
    two benchmarks can run side by side), create it if needed, migrate."""
    import psycopg

    database = os.environ.get("BENCH_DATABASE") or database

    base = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    parts = urlsplit(base)
    admin_url = urlunsplit(parts._replace(path="/postgres"))
    os.environ["DATABASE_URL"] = urlunsplit(parts._replace(path=f"/{database}"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    os.environ.setdefault("LOG_LEVEL", "ERROR")
    os.environ.setdefault("REFERENCE_CACHE_SECONDS", "5")  # as in production
    dsn = admin_url.replace("postgres://", "postgresql://", 1)
    with psycopg.connect(dsn, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [database]).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{database}"')

    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0, interactive=False)


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = (len(ordered) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def median(values: list[float]) -> float:
    return statistics.median(values)


class Timer:
    def __enter__(self):
        self.started = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.started


def restore_default_ladders() -> None:
    """TRUNCATE … CASCADE of the handler groups also empties the escalation levels (a level
    may name a group to move tickets to): give every rule left without one the default
    ladder again, as the migration did."""
    from sla import ladder
    from sla.models import SlaRule
    from sla.rules import set_levels

    for rule in SlaRule.objects.filter(levels__isnull=True):
        set_levels(rule, ladder.default_ladder(rule.warn_before_minutes))
