"""The SLA's live figures for /metrics, computed at scrape time (config/metrics.py): how many
warnings and timeouts the scanner will fire in the next 15 minutes (including any already
due that the next scan picks up), from the same conditions the scanner claims with."""

from datetime import timedelta

from django.db import connection
from django.utils import timezone

from config.metrics import gauge, scrape_gauges

from .scanner import _OPEN, _WARN

HORIZON = timedelta(minutes=15)

_DUE_SQL = f"""
SELECT
  count(*) FILTER (WHERE t.responded_time IS NULL AND t.response_timeout = false
                   AND t.response_deadline <= %(until)s),
  count(*) FILTER (WHERE t.responded_time IS NULL AND t.response_timeout = false
                   AND t.response_warned = false AND t.response_deadline > %(now)s
                   AND t.response_deadline - {_WARN} <= %(until)s),
  count(*) FILTER (WHERE t.resolve_timeout = false AND t.sla_paused = false
                   AND t.resolve_deadline <= %(until)s),
  count(*) FILTER (WHERE t.resolve_timeout = false AND t.sla_paused = false
                   AND t.resolve_warned = false AND t.resolve_deadline > %(now)s
                   AND t.resolve_deadline - {_WARN} <= %(until)s)
FROM oa_ticket_bill t
WHERE {_OPEN}
  AND (t.response_deadline <= %(reach)s OR t.resolve_deadline <= %(reach)s)
"""


@scrape_gauges
def due_gauges():
    now = timezone.now()
    with connection.cursor() as cursor:
        cursor.execute("SELECT COALESCE(MAX(warn_before_minutes), 30) FROM oa_sla_rule")
        (max_warn,) = cursor.fetchone()
        # A warning due by `until` has its deadline at most max_warn later.
        reach = now + HORIZON + timedelta(minutes=max_warn)
        cursor.execute(_DUE_SQL, {"now": now, "until": now + HORIZON, "reach": reach})
        response_timeout, response_warn, resolve_timeout, resolve_warn = cursor.fetchone()
    due = gauge(
        "sla_events_due_15m",
        "SLA warnings and timeouts the scanner will fire within 15 minutes",
        ["clock", "event"],
    )
    due.add_metric(["response", "timeout"], response_timeout)
    due.add_metric(["response", "warn"], response_warn)
    due.add_metric(["resolve", "timeout"], resolve_timeout)
    due.add_metric(["resolve", "warn"], resolve_warn)
    return [due]
