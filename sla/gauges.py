"""The SLA's live figures for /metrics, computed at scrape time (config/metrics.py): how many
deadlines and escalation levels fall due in the next 15 minutes (including any already due
that the next tick picks up), from the same conditions the scan claims with."""

from datetime import timedelta

from django.db import connection
from django.utils import timezone

from config.metrics import gauge, scrape_gauges

from .escalation import _RUNNING
from .scanner import _OPEN

HORIZON = timedelta(minutes=15)

_DUE_SQL = f"""
SELECT
  (SELECT count(*) FROM oa_ticket_bill t WHERE {_OPEN} AND t.responded_time IS NULL
      AND t.response_timeout = false AND t.response_deadline <= %(until)s),
  (SELECT count(*) FROM oa_ticket_bill t WHERE {_OPEN} AND t.resolve_timeout = false
      AND t.sla_paused = false AND t.resolve_deadline <= %(until)s),
  (SELECT count(*) FILTER (WHERE e.clock = 'response') FROM oa_sla_event e
      JOIN oa_ticket_bill t ON t.id = e.ticket_id
      WHERE e.state = 'pending' AND e.due_at <= %(until)s AND {_RUNNING}),
  (SELECT count(*) FILTER (WHERE e.clock = 'resolve') FROM oa_sla_event e
      JOIN oa_ticket_bill t ON t.id = e.ticket_id
      WHERE e.state = 'pending' AND e.due_at <= %(until)s AND {_RUNNING})
"""


@scrape_gauges
def due_gauges():
    with connection.cursor() as cursor:
        cursor.execute(_DUE_SQL, {"until": timezone.now() + HORIZON})
        response_timeout, resolve_timeout, response_levels, resolve_levels = cursor.fetchone()
    due = gauge(
        "sla_events_due_15m",
        "SLA deadlines (event=timeout) and escalation levels (event=level) due within 15 min",
        ["clock", "event"],
    )
    due.add_metric(["response", "timeout"], response_timeout)
    due.add_metric(["resolve", "timeout"], resolve_timeout)
    due.add_metric(["response", "level"], response_levels)
    due.add_metric(["resolve", "level"], resolve_levels)
    return [due]
