"""Staffing per hour of a day for one group: forecast arrivals, measured handle time, the
agents Erlang C requires (insight/erlang.py) and the agents who were available.

All hours are local (the active time zone). For the date D:

- forecast arrivals in hour h = approvals into the group (Ticket.approved_time, current
  handler_group) on the same weekday as D in hour h over the 4 weeks before D, ÷ 4 (weeks
  without approvals count as 0) — one grouped query;
- measured handle time = mean (completed_time − accepted_time) of the group's tickets completed
  in those 4 weeks — one query; with none, DEFAULT_AHT_SECONDS and `aht_measured: false`;
- required agents = Erlang C's raw agents (no shrinkage: available agents below are measured,
  so breaks are already out of them) for a 60-minute interval, the group's
  target_answer_seconds (60 when the group has none), SERVICE_LEVEL_TARGET and MAX_OCCUPANCY;
- available agents in hour h = the average number of the group's current members in the
  'available' state over the hour (available agent-seconds from PresenceSpan ÷ the hour's
  seconds; an agent available for half the hour counts 0.5) — one query; null for hours
  that have not started yet;
- gap = available − required (negative: understaffed)."""

from datetime import date, datetime, time, timedelta
from typing import Any

from django.db import connection
from django.db.models import Avg, Count, DurationField, ExpressionWrapper, F
from django.db.models.functions import ExtractHour
from django.utils import timezone

from handler_groups.models import HandlerGroup
from routing.models import SPAN_ENDED_SQL, PresenceSpan, PresenceState
from ticketing.models import Ticket, worked_until

from . import erlang

WEEKS = 4
INTERVAL_MINUTES = 60
SERVICE_LEVEL_TARGET = 0.8
MAX_OCCUPANCY = erlang.DEFAULT_MAX_OCCUPANCY
DEFAULT_TARGET_ANSWER_SECONDS = 60
# Used when the group completed nothing in the 4 weeks (then `aht_measured` is false).
DEFAULT_AHT_SECONDS = 600.0


def _local_start(day: date) -> datetime:
    return timezone.make_aware(datetime.combine(day, time.min))


def _hours(day: date) -> list[tuple[int, datetime, datetime]]:
    """(hour, start, end) of the day's 24 local hours; each ends where the next starts."""
    starts = [timezone.make_aware(datetime.combine(day, time(h))) for h in range(24)]
    ends = starts[1:] + [_local_start(day + timedelta(days=1))]
    return list(zip(range(24), starts, ends, strict=True))


def forecast_arrivals(group: HandlerGroup, day: date) -> dict[int, float]:
    """Mean approvals per local hour on the same weekday over the WEEKS weeks before `day`."""
    rows = (
        Ticket.objects.filter(
            handler_group=group,
            approved_time__gte=_local_start(day - timedelta(weeks=WEEKS)),
            approved_time__lt=_local_start(day),
            approved_time__iso_week_day=day.isoweekday(),
        )
        .annotate(hour=ExtractHour("approved_time"))
        .values("hour")
        .annotate(n=Count("pk"))
        .values_list("hour", "n")
    )
    counts = dict(rows)
    return {h: counts.get(h, 0) / WEEKS for h in range(24)}


def measured_aht(group: HandlerGroup, day: date) -> tuple[float | None, int]:
    """Mean seconds from acceptance to completion over the WEEKS weeks before `day`, and the
    number of tickets it is the mean of."""
    since, until = _local_start(day - timedelta(weeks=WEEKS)), _local_start(day)
    # `finished` (worked_until) is completed_time wherever that is set: the same tickets,
    # found through ticket_group_finished_idx instead of the group's whole history.
    row = (
        Ticket.objects.annotate(finished=worked_until())
        .filter(
            handler_group=group,
            finished__gte=since,
            finished__lt=until,
            completed_time__gte=since,
            completed_time__lt=until,
            accepted_time__isnull=False,
        )
        .aggregate(
            mean=Avg(
                ExpressionWrapper(F("completed_time") - F("accepted_time"), DurationField()),
            ),
            n=Count("pk"),
        )
    )
    mean = row["mean"]
    return (mean.total_seconds() if mean is not None else None), row["n"]


# Available agent-seconds per hour: each span clipped to the hour (an open span runs to now).
# The spans overlapping the day are read once, through presence_span_user_end_idx (ended
# since the day began, or open: SPAN_ENDED_SQL, implied by the line before it), not the
# members' whole history; then each is clipped to the hours it overlaps.
# FILTER: an hour no span overlaps has one all-NULL joined row, and GREATEST/LEAST ignore NULLs.
_AVAILABLE_SQL = f"""
WITH spans AS (
    SELECT s.id, s.started, COALESCE(s.ended, %(now)s) AS ended
      FROM {PresenceSpan._meta.db_table} s
     WHERE s.user_id = ANY(%(members)s::int[])
       AND s.state = %(state)s
       AND s.started < %(day_end)s
       AND COALESCE(s.ended, %(now)s) > %(day_start)s
       AND {SPAN_ENDED_SQL} > %(day_start)s
)
SELECT h.hour,
       COALESCE(SUM(EXTRACT(EPOCH FROM
           LEAST(s.ended, h.hour_end) - GREATEST(s.started, h.hour_start)
       )) FILTER (WHERE s.id IS NOT NULL), 0)::float8 AS seconds
  FROM unnest(%(hours)s::int[], %(starts)s::timestamptz[], %(ends)s::timestamptz[])
       AS h(hour, hour_start, hour_end)
  LEFT JOIN spans s ON s.started < h.hour_end AND s.ended > h.hour_start
 GROUP BY h.hour
 ORDER BY h.hour"""


def available_agents(
    group: HandlerGroup, hours: list[tuple[int, datetime, datetime]], now: datetime
) -> dict[int, float]:
    """Average number of the group's members available in each hour (agent-seconds ÷ the
    hour's seconds), from the presence history, in one statement."""
    members = group.member_ids
    if not members:
        return {h: 0.0 for h, _, _ in hours}
    params: dict[str, Any] = {
        "now": now,
        "hours": [h for h, _, _ in hours],
        "starts": [s for _, s, _ in hours],
        "ends": [e for _, _, e in hours],
        "day_start": min(s for _, s, _ in hours),
        "day_end": max(e for _, _, e in hours),
        "members": members,
        "state": PresenceState.AVAILABLE.value,
    }
    with connection.cursor() as cursor:
        cursor.execute(_AVAILABLE_SQL, params)
        seconds = dict(cursor.fetchall())
    return {h: seconds.get(h, 0.0) / (end - start).total_seconds() for h, start, end in hours}


def staffing(*, group: HandlerGroup, day: date, now: datetime | None = None) -> dict:
    now = now or timezone.now()
    hours = _hours(day)
    forecast = forecast_arrivals(group, day)
    aht, completed = measured_aht(group, day)
    aht_measured = aht is not None and aht > 0
    aht_seconds = aht if aht is not None and aht_measured else DEFAULT_AHT_SECONDS
    target = getattr(group, "target_answer_seconds", None) or DEFAULT_TARGET_ANSWER_SECONDS
    available = available_agents(group, hours, now)
    rows = []
    for hour, start, _end in hours:
        arrivals = forecast[hour]
        load = erlang.traffic(arrivals, INTERVAL_MINUTES, aht_seconds)
        required = None
        if load <= erlang.MAX_TRAFFIC_ERLANGS:
            required = erlang.staff(
                arrivals=arrivals,
                aht_seconds=aht_seconds,
                interval_minutes=INTERVAL_MINUTES,
                target_seconds=target,
                service_level_target=SERVICE_LEVEL_TARGET,
                shrinkage=0.0,
                max_occupancy=MAX_OCCUPANCY,
            ).raw_agents
        present = round(available[hour], 2) if start <= now else None
        rows.append(
            {
                "hour": hour,
                "start": start,
                "forecast_arrivals": round(arrivals, 4),
                "traffic_erlangs": round(load, 4),
                "aht_seconds": round(aht_seconds, 1),
                "required_agents": required,
                "available_agents": present,
                "gap": (
                    round(present - required, 2)
                    if present is not None and required is not None
                    else None
                ),
            }
        )
    return {
        "group": group.pk,
        "date": day,
        "time_zone": timezone.get_current_timezone_name(),
        "weeks": WEEKS,
        "interval_minutes": INTERVAL_MINUTES,
        "target_answer_seconds": target,
        "service_level_target": SERVICE_LEVEL_TARGET,
        "max_occupancy": MAX_OCCUPANCY,
        "aht_seconds": round(aht_seconds, 1),
        "aht_measured": aht_measured,
        "aht_sample": completed,
        "hours": rows,
    }
