from datetime import datetime, timedelta

from config.memo import ProcessMemo
from ticketing.models import OPEN_STATUSES, ProcessStatus, Ticket

from .models import Calendar, RuleStatus, SlaRule

DEFAULT_WARN_MINUTES = 30


_enabled_rules = ProcessMemo("sla rules").clear_on_change(SlaRule, Calendar)


def enabled_rules() -> list[SlaRule]:
    """Enabled rules by ascending sort, with their calendars (memoised per process: read on
    every approval, changed rarely; see config/memo.py)."""
    return _enabled_rules.get(
        "enabled",
        lambda: list(
            SlaRule.objects.filter(status=RuleStatus.ENABLED)
            .select_related("calendar")
            .order_by("sort", "id")
        ),
    )


def match_rule(*, priority: int, category: str) -> SlaRule | None:
    """Enabled rules by ascending sort; the first whose priority equals the ticket's (or is
    empty: any) and whose category is blank or equal wins."""
    category = category or ""
    for rule in enabled_rules():
        if rule.priority in (None, priority) and rule.category in ("", category):
            return rule
    return None


def sla_badge(ticket: Ticket, now: datetime) -> dict:
    """What the console shows for the ticket's running clock: the response clock until the
    ticket is first accepted, then the resolve clock. state: ok | warning | breached | paused |
    none."""
    none = {"state": "none", "clock": None, "deadline": None, "seconds_left": None}
    if ticket.process_status != ProcessStatus.APPROVED or ticket.ticket_status not in OPEN_STATUSES:
        return none
    warn = timedelta(
        minutes=ticket.sla_rule.warn_before_minutes if ticket.sla_rule_id else DEFAULT_WARN_MINUTES
    )
    if ticket.responded_time is None and ticket.response_deadline is not None:
        clock, deadline, breached = "response", ticket.response_deadline, ticket.response_timeout
    elif ticket.resolve_deadline is not None:
        clock, deadline, breached = "resolve", ticket.resolve_deadline, ticket.resolve_timeout
    else:
        return none
    left = int((deadline - now).total_seconds())
    if clock == "resolve" and ticket.sla_paused:
        state = "paused"
    elif breached or left <= 0:
        state = "breached"
    elif deadline - now <= warn:
        state = "warning"
    else:
        state = "ok"
    return {"state": state, "clock": clock, "deadline": deadline, "seconds_left": left}
